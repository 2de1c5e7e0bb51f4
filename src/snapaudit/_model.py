"""The base of every typed, frozen, validated record and config model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Frozen, strict about unknown keys: an unknown key in a protocol is an error."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)
