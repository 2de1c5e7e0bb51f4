"""A small JSON-schema to GBNF converter for the embedded generator.

llama.cpp's own JSON grammar lets raw newlines into strings (invalid JSON); this
one forbids every control character, allows only the escapes ``\\"`` and ``\\\\``,
makes strings nonempty and starting with a non-space character, and caps their
length in characters (:data:`MAX_STRING_CHARS` by default, so an answer string is
at most 512 UTF-8 bytes). The subset: objects whose properties are all required
(emitted in declared order), strings (``enum``, ``minLength``, ``maxLength``),
booleans, integers, arrays (``minItems``, ``maxItems``) and ``enum``/``const``.
Anything else is a :class:`BackendError`.
"""

from __future__ import annotations

import json
from typing import Any

from snapaudit.errors import BackendError

MAX_STRING_CHARS = 128
MAX_ARRAY_ITEMS = 64

_BASE_RULES = (
    'ws ::= " "?',
    'char ::= [^"\\\\\\x00-\\x1f\\x7f] | "\\\\" ["\\\\]',
    'firstchar ::= [^"\\\\\\x00-\\x20\\x7f] | "\\\\" ["\\\\]',
    'integer ::= "-"? ([0-9] | [1-9] [0-9]{1,15})',
    'boolean ::= "true" | "false"',
)


def literal(text: str) -> str:
    """A GBNF literal matching exactly ``text``."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class _Builder:
    def __init__(self) -> None:
        self.rules: list[str] = []

    def add(self, name: str, body: str) -> str:
        self.rules.append(f"{name} ::= {body}")
        return name

    def value(self, schema: Any, name: str) -> str:
        if not isinstance(schema, dict):
            raise BackendError(f"grammar: schema at {name} is not an object")
        if "const" in schema:
            return self.add(name, literal(json.dumps(schema["const"], ensure_ascii=False)))
        if "enum" in schema:
            options = [literal(json.dumps(v, ensure_ascii=False)) for v in schema["enum"]]
            if not options:
                raise BackendError(f"grammar: empty enum at {name}")
            return self.add(name, " | ".join(options))
        kind = schema.get("type")
        if kind == "object":
            return self.object(schema, name)
        if kind == "array":
            return self.array(schema, name)
        if kind == "string":
            return self.string(schema, name)
        if kind in ("boolean", "integer"):
            return str(kind)
        raise BackendError(f"grammar: unsupported schema type {kind!r} at {name}")

    def object(self, schema: dict[str, Any], name: str) -> str:
        properties = schema.get("properties") or {}
        if not isinstance(properties, dict) or not properties:
            raise BackendError(f"grammar: object without properties at {name}")
        if set(schema.get("required", [])) != set(properties):
            raise BackendError(f"grammar: every property must be required at {name}")
        parts = []
        for index, (key, sub) in enumerate(properties.items()):
            rule = self.value(sub, f"{name}-{index}")
            parts.append(f"{literal(json.dumps(key, ensure_ascii=False))} ws \":\" ws {rule}")
        return self.add(name, '"{" ws ' + ' "," ws '.join(parts) + ' ws "}"')

    def array(self, schema: dict[str, Any], name: str) -> str:
        item = self.value(schema.get("items", {}), f"{name}-item")
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", MAX_ARRAY_ITEMS))
        if not 0 <= low <= high:
            raise BackendError(f"grammar: bad item bounds at {name}")
        if high == 0:
            return self.add(name, '"[" ws "]"')
        more = f'("," ws {item}){{{max(low - 1, 0)},{high - 1}}}'
        body = f"{item} {more}"
        if low == 0:
            body = f"({body})?"
        return self.add(name, f'"[" ws {body} ws "]"')

    def string(self, schema: dict[str, Any], name: str) -> str:
        low = max(1, int(schema.get("minLength", 1)))
        high = min(int(schema.get("maxLength", MAX_STRING_CHARS)), MAX_STRING_CHARS)
        if low > high:
            raise BackendError(f"grammar: bad length bounds at {name}")
        return self.add(name, f'"\\"" firstchar char{{{low - 1},{high - 1}}} "\\""')


def grammar_for(schema: dict[str, Any]) -> str:
    """The GBNF text of ``schema``; its root rule is ``root``."""
    builder = _Builder()
    root = builder.value(schema, "root-value")
    return "\n".join([f"root ::= {root}", *builder.rules, *_BASE_RULES]) + "\n"
