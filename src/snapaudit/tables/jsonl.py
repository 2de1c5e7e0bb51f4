"""JSONL tables through one decoder, msgspec: every line decoded into its typed record.

A file is read block by block (cut at a newline); each block's lines are decoded at once
into the line types below (``msgspec.json.Decoder(...).decode_lines``), which check each
field's type and refuse unknown fields. A table's few states and judges are decoded as
``Literal`` values once seen (:class:`Lines`: no string made per line for them), and doc-id
lists as raw JSON, decoded once per distinct list. The readers build their columns from the
records a block at a time. Anything the typed decode refuses, or a block whose records are
not one per line (a blank line, two objects on one line), raises :class:`Declined`: the
reader then reads the file again line by line with the same decoder (:func:`json_objects`)
and names the file, the line and the cause.

A source is a path to a regular file (read in blocks, twice at most) or the bytes of anything
else (a pipe is read once, by the caller).
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from snapaudit.errors import InputError
from snapaudit.tables.steps import STEPS
from snapaudit.tables.turns import TURN_ANSWERS

BLOCK = 8 << 20  # bytes decoded at a time: their records are columns before the next block
FIRST = 1 << 16  # the first block: small, so the narrowed decoder (:class:`Lines`) starts soon
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark at the start is accepted and dropped
Source = Path | bytes


class Declined(Exception):
    """The typed decode does not vouch for the file: read it line by line for the error."""


NARROW_MAX = 256  # at most this many distinct values become a Literal field


def answer_line(state: Any = str) -> type:
    """An answers line; ``doc_ids`` kept as its raw JSON (decoded once per distinct list);
    ``steps`` typed (checked further by :func:`snapaudit.tables.steps.checked_lines`)."""
    return msgspec.defstruct("AnswerLine", [
        ("question_id", str), ("state", state), ("repeat", int), ("answer", str),
        ("doc_ids", msgspec.Raw, msgspec.Raw(b"null")), ("question", str | None, None),
        ("cluster", str | None, None), ("steps", STEPS | None, None),
        ("turn_answers", TURN_ANSWERS | None, None)],
        forbid_unknown_fields=True, gc=False)


def label_line(state: Any = str, judge: Any = str) -> type:
    ref = msgspec.defstruct("RefLine", [("state", state), ("repeat", int)], frozen=True,
                            forbid_unknown_fields=True, gc=False)
    return msgspec.defstruct("LabelLine", [
        ("question_id", str), ("a", ref), ("b", ref), ("same", bool),
        ("judge", judge | None, None)], forbid_unknown_fields=True, gc=False)


class GoldLine(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    question_id: str
    answers: tuple[str, ...]


DOC_IDS = msgspec.json.Decoder(tuple[str, ...] | None)
_ANY = msgspec.json.Decoder()


class Lines:
    """The decoder of one table's lines. After :meth:`narrow`, a block is first decoded with
    the named string fields typed as ``Literal`` of the values seen so far (msgspec then
    makes no string per line for them); a block naming another value is decoded again with
    the general types, and the next :meth:`narrow` adds the value."""

    def __init__(self, make: Callable[..., type]) -> None:
        self.make = make
        self.general: msgspec.json.Decoder[Any] = msgspec.json.Decoder(make())
        self.narrowed: tuple[msgspec.json.Decoder[Any], tuple[tuple[str, ...], ...]] | None = None

    def narrow(self, **values: Collection[str]) -> None:
        key = tuple(tuple(v) for v in values.values())
        if (self.narrowed is None or self.narrowed[1] != key) and all(
                0 < len(v) <= NARROW_MAX for v in key):
            fields = {k: Literal[v] for k, v in zip(values, key, strict=True)}
            self.narrowed = msgspec.json.Decoder(self.make(**fields)), key

    def decode(self, buf: memoryview) -> list[Any]:
        if self.narrowed is not None:
            try:
                return self.narrowed[0].decode_lines(buf)
            except msgspec.ValidationError:
                pass  # another state or judge: the general types name it
        return self.general.decode_lines(buf)


def regular(path: str | Path) -> bool:
    """Whether ``path`` is a regular file (or nothing: opening it names the problem)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def source_of(path: str | Path) -> Source:
    """``path`` itself when it is a regular file, else its bytes (read once)."""
    return Path(path) if regular(path) else Path(path).read_bytes()


def _open(source: Source) -> io.RawIOBase | io.BytesIO:
    return io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb", buffering=0)


def typed_blocks(source: Source, lines: Lines, block: int = BLOCK) -> Iterator[list[Any]]:
    """The records of each block of lines, as ``lines`` decodes them; :class:`Declined` for
    anything but one well-typed JSON object on every line (and no line at all). Each block is
    its own ``bytes`` (raw values of its records point into it)."""
    carry, first, seen = b"", True, False
    with _open(source) as f:
        while True:
            data = f.read(min(block, FIRST) if first else block)
            chunk = carry + data if carry else data
            start = 3 if first and chunk.startswith(BOM) else 0
            first = False
            cut = chunk.rfind(b"\n") + 1 if data else len(chunk)
            if cut > start:
                count = chunk.count(b"\n", start, cut) + (chunk[cut - 1] != 10)
                try:
                    rows = lines.decode(memoryview(chunk)[start:cut])
                except msgspec.DecodeError:
                    raise Declined from None
                if len(rows) != count:
                    raise Declined  # a blank line, or two objects on one line
                seen = True
                yield rows
            carry = chunk[max(cut, start):]
            if not data:
                break
    if not seen:
        raise Declined  # no line: the line reader says so


def lines(source: Source, path: str | Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of every non-blank line; non-UTF-8 anywhere is an error
    (``path`` names the file in it)."""
    data = source if isinstance(source, bytes) else source.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})",
                         path=str(path), line=line) from None
    text = text.removeprefix("\ufeff")
    for number, line_text in enumerate(text.split("\n"), start=1):
        if line_text.strip():
            yield number, line_text.removesuffix("\r")


def json_objects(source: Source, path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line, decoded by msgspec; a line that is not
    one JSON object is an error naming ``path`` and the line."""
    for number, text in lines(source, path):
        try:
            obj = _ANY.decode(text)
        except msgspec.DecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", path=str(path), line=number) from None
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object", path=str(path), line=number)
        yield number, obj
