"""Per-kind config models of a discriminated union that keep one flat written shape.

A family's config (a generator's ``backend``, a retriever's ``kind``) is a union of models,
one per kind, each with only its own fields. Before the split every kind shared one flat
model, and protocols, resolved TOML files and protocol hashes hold that flat shape: every
field of every kind, at its default where the kind does not use it. To keep them loading and
hashing the same, a per-kind model

- is written (``model_dump``) in the flat shape: its own fields, then the other kinds'
  fields at their flat defaults, in the flat model's field order;
- accepts another kind's field only at that default (what a resolved protocol holds), and
  refuses it otherwise, naming the kind it belongs to.

Fields added later that only say *how* outputs are computed, never what they are (a family's
``operational`` fields, e.g. the local generator's replica count), are written only when set
away from their default, and never in a bound dump (``context={"bound": True}``, the protocol
hash): protocols and hashes without them stay as they were.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import (
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from snapaudit._model import Frozen


class KindModel(Frozen):
    """Base of one kind's config; a subclass family sets the class variables below."""

    # the discriminator field ("backend", "kind")
    tag_field: ClassVar[str] = "kind"
    # the flat shape: field -> default, in the order every kind is written
    flat_shape: ClassVar[dict[str, Any]] = {}
    # field -> the kinds that own it (to name them when a field is refused)
    owners: ClassVar[dict[str, tuple[str, ...]]] = {}
    # fields written only away from their default and never bound (module doc)
    operational: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _other_kinds(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        own = cls.model_fields
        kind = data.get(cls.tag_field, own[cls.tag_field].default)
        out: dict[str, Any] = {}
        for key, value in data.items():
            if key in own or key not in cls.flat_shape:
                out[key] = value  # its own, or unknown to every kind (extra="forbid" says so)
                continue
            default = cls.flat_shape[key]
            if value is None if default is None else (type(value) is type(default)
                                                      and value == default):
                continue  # another kind's field at its default: a resolved protocol's
            owners = " or ".join(f"'{k}'" for k in cls.owners.get(key, ()))
            raise ValueError(f"{key!r} is a field of {cls.tag_field} = {owners}, not of "
                             f"{cls.tag_field} = {kind!r}")
        return out

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler,
              info: SerializationInfo) -> dict[str, Any]:
        own: dict[str, Any] = handler(self)
        out = {key: own.pop(key) if key in own else default
               for key, default in self.flat_shape.items()
               if key in own or key not in type(self).model_fields}
        out.update(own)
        bound = isinstance(info.context, dict) and info.context.get("bound")
        for key in self.operational:
            if key in out and (bound or out[key] == self.flat_shape[key]):
                del out[key]
        return out


def flat_family(tag_field: str, kinds: dict[str, type[KindModel]],
                order: list[str], operational: tuple[str, ...] = ()) -> None:
    """Set the class variables of a family's kind models: ``order`` is the flat field order
    (every field of every kind, once); a field's flat default is the first owner's;
    ``operational``: fields of ``order`` never bound (module doc)."""
    shape: dict[str, Any] = {}
    owners: dict[str, tuple[str, ...]] = {}
    for key in order:
        having = [k for k, model in kinds.items() if key in model.model_fields]
        if not having:
            raise TypeError(f"flat field {key!r} belongs to no kind")
        shape[key] = kinds[having[0]].model_fields[key].default
        owners[key] = tuple(having)
    for model in kinds.values():
        missing = set(model.model_fields) - set(order)
        if missing:
            raise TypeError(f"{model.__name__}: fields {sorted(missing)} are not in the order")
        model.tag_field, model.flat_shape, model.owners = tag_field, shape, owners
        model.operational = operational
