"""The generator interface shared by the testbed and the LLM judge.

Backends register by name in :mod:`snapaudit.testbed.generate.registry` and import
their SDKs lazily. A backend makes exactly one attempt per call: retries,
backoff and the ledger belong to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    system: str
    user: str
    seed: int
    json_schema: dict[str, Any] | None = None
    max_tokens: int = 256


@dataclass(frozen=True, slots=True)
class GenerationResult:
    text: str
    model: str
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)


class Generator(Protocol):
    """One model endpoint or embedded model."""

    name: str

    def spec(self) -> dict[str, Any]:
        """Model id, controls and endpoint that shape outputs; never secrets."""
        ...

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        """One attempt; raise TransportInvalid on retryable failure."""
        ...

    async def aclose(self) -> None:
        ...
