"""Text files whose every line is one template, checked and read with numpy, in blocks.

A template is constant pieces between values: strings (up to a closing quote), repeats (1 to
7 digits, up to the next piece's first byte) and booleans. A file is read block by block
into one buffer (cut at a newline), each block's lines gathered as the rows of a matrix,
``CHUNK`` rows at a time (they stay in the CPU's caches): the constant pieces are compared as
64-bit words at each row's cursor, each value is found by its terminator in the words that
start it (rows sharing a cursor are read as one strided column), and strings are coded
through keys of packed words -- only a chunk's distinct strings are looked at one by one.
Any line off the template, a control byte anywhere (a tab, a CR, a NUL), a backslash or
invalid UTF-8 in a string, or a line longer than :data:`MAX_LINE` raises :class:`Decline`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import numpy as np

BLOCK = 8 << 20  # bytes read at a time: a bigger buffer only faults in more fresh pages (32 MiB
# cost a 10^4-question analyze ~0.05 s of page faults, and nothing at 10^5: docs/benchmarks.md)
MAX_LINE = 1024
CHUNK = 1 << 15  # lines checked together: their rows and columns stay in the CPU's caches
CLASSES = 6  # at most this many distinct cursors are read as columns; more: a gather per row
_U = np.uint64
_ONES, _HIGH = _U(0x0101010101010101), _U(0x8080808080808080)
_LOW4, _HIGH4, _DIGIT = _U(0x0F0F0F0F0F0F0F0F), _U(0xF0F0F0F0F0F0F0F0), _U(0x3030303030303030)
_SIX = _U(0x0606060606060606)
MASKS = np.array([(1 << 8 * k) - 1 for k in range(9)], dtype=np.uint64)  # the first k bytes
Template = list[tuple[str, str, bytes]]  # (kind: c/s/i/b, field name, constant or stop byte)
Token = str | tuple[str, str]  # a constant, or (kind, field name) of a value


class Decline(Exception):
    """The file is not one this reader vouches for."""


# what a template reader turns into "not this reader's file" (None): IndexError never seen
DECLINED = (Decline, UnicodeDecodeError, OSError, IndexError)


def _word(text: bytes) -> np.uint64:
    return _U(int.from_bytes(text, "little"))



def compile_template(tokens: list[Token]) -> Template:
    """The template of ``tokens``: adjacent constants joined; each value's stop byte (the
    next constant's first) noted."""
    out: Template = []
    for token in tokens:
        if isinstance(token, str):
            if out and out[-1][0] == "c":
                out[-1] = ("c", "", out[-1][2] + token.encode())
            else:
                out.append(("c", "", token.encode()))
        else:
            out.append((token[0], token[1], b""))
    return [(kind, name, text if kind == "c" else out[i + 1][2][:1])
            for i, (kind, name, text) in enumerate(out)]


_VALUE = {"s": b'[^"\\\\\x00-\x1f]*', "l": b"[^\\]\\\\\x00-\x1f]*", "i": b"[1-9][0-9]{0,6}",
          "b": b"(?:true|false)"}


def pick(templates: list[Template], line: bytes) -> Template:
    """The first of ``templates`` that ``line`` (the file's first line) follows."""
    for template in templates:
        pattern = b"".join(re.escape(text) if kind == "c" else _VALUE[kind]
                           for kind, _, text in template)
        if re.fullmatch(pattern, line):
            return template
    raise Decline


def _first(word: np.ndarray, byte: int) -> np.ndarray:
    """Index (uint8) of the first byte equal to ``byte`` in each word (little-endian), 8
    where there is none."""
    t = word ^ (_ONES * _U(byte))
    zero = t - _ONES
    np.bitwise_and(zero, ~t, out=zero)
    zero &= _HIGH  # the high bit of each zero byte of t; exact at the lowest one
    below = zero - _U(1)
    np.bitwise_and(below, ~zero, out=below)  # the bits below the lowest: 8 i + 7 of them
    index: np.ndarray = np.bitwise_count(below) >> 3
    return index


class Rows:
    """The lines of one block as rows of a matrix, with each row's cursor into its line."""

    def __init__(self, buf: bytearray, size: int, starts: np.ndarray, ends: np.ndarray):
        self.lens = ends - starts
        self.longest = int(self.lens.max())
        if self.longest > MAX_LINE:
            raise Decline
        self.width = width = (self.longest + 15) // 8 * 8  # a word at any cursor in a line
        lines = np.ndarray((size,), dtype=f"V{width}", buffer=buf, strides=(1,))
        self.m = lines[starts].view(np.uint8)  # n rows of width bytes, contiguous
        self.n = n = len(ends)
        self.flat = np.ndarray((n * width - 7,), dtype="<u8", buffer=self.m, strides=(1,))
        self.off = np.zeros(n, dtype=np.int64)
        self.classes: list[tuple[int, np.ndarray | None]] | None = [(0, None)]
        self.at = np.zeros(0, dtype=np.int64)  # each row's cursor in ``flat``: set and kept
        # only while ``classes`` is None (too many distinct cursors for columns)

    def _moved(self) -> None:
        if (self.off > self.lens).any():
            raise Decline
        lo, hi = int(self.off.min()), int(self.off.max())
        if lo == hi:
            self.classes = [(lo, None)]
            return
        present = (np.flatnonzero(np.bincount(self.off - lo)) + lo).tolist()
        self.classes = None if len(present) > CLASSES else [
            (c, self.off == c) for c in present]
        if self.classes is None:
            self.at = np.arange(0, self.n * self.width, self.width, dtype=np.int64) + self.off

    def _column(self, col: int) -> np.ndarray:
        if col > self.width - 8:
            return np.zeros(self.n, dtype=np.uint64)
        return np.ndarray((self.n,), dtype="<u8", buffer=self.m, offset=col,
                          strides=(self.width,))

    def word(self, j: int) -> np.ndarray:
        """The 8 bytes at each row's cursor + 8 * j."""
        if self.classes is None:  # one gather; past the last row only for j > 0
            at = self.at if j == 0 else np.minimum(self.at + 8 * j, self.flat.size - 1)
            gathered: np.ndarray = self.flat[at]
            return gathered
        (col, _), *rest = self.classes
        out = self._column(col + 8 * j)
        if rest:
            out = out.copy()
            for col, mask in rest:
                np.copyto(out, self._column(col + 8 * j), where=mask)
        return out

    def const(self, text: bytes) -> None:
        for j in range(0, len(text), 8):
            chunk = text[j:j + 8]
            if not ((self.word(j // 8) & MASKS[len(chunk)]) == _word(chunk)).all():
                raise Decline
        self.off += len(text)
        if self.classes is None:
            self.at += len(text)
        else:
            self.classes = [(col + len(text), mask) for col, mask in self.classes]

    def string(self, stop: bytes) -> list[np.ndarray]:
        """Each row's string up to the byte ``stop``, as a key: columns of packed words."""
        length = np.full(self.n, -1, dtype=np.int64)
        words = []
        for j in range(self.width // 8):
            words.append(self.word(j))
            at = _first(words[-1], stop[0])
            if j == 0 and int(at.max()) < 8:
                length = at.astype(np.int64)
                break
            hit = (length < 0) & (at < 8)
            length[hit] = at[hit].astype(np.int64) + 8 * j
            if (length >= 0).all():
                break
        else:
            raise Decline
        k = max(1, (int(length.max()) + 7) // 8)
        keys = [words[j] & MASKS[np.clip(length - 8 * j, 0, 8)] for j in range(k)]
        self.off += length
        self._moved()
        return keys

    def repeat(self, stop: bytes) -> np.ndarray:
        """Each row's repeat: 1 to 7 digits, no leading zero, then the byte ``stop``."""
        word = self.word(0)
        length = _first(word, stop[0]).astype(np.int64)
        if length.min() < 1 or length.max() > 7:
            raise Decline
        mask = MASKS[length]
        if (((word & _HIGH4) ^ _DIGIT) & mask).any() or (
                ((word & _LOW4) + _SIX) & _HIGH4 & mask).any() or (
                (word & _U(0xFF)) == _U(0x30)).any():
            raise Decline
        if int(length.max()) == 1:
            self.off += 1
            self._moved()
            return (word & _U(0x0F)).astype(np.int32)
        v = (word & _LOW4 & mask) << ((8 - length) * 8).astype(np.uint64)
        v = (v * _U(10) + (v >> _U(8))) & _U(0x00FF00FF00FF00FF)
        v = (v * _U(100) + (v >> _U(16))) & _U(0x0000FFFF0000FFFF)
        v = (v * _U(10000) + (v >> _U(32))) & _U(0xFFFFFFFF)
        self.off += length
        self._moved()
        value: np.ndarray = v.astype(np.int32)
        return value

    def same(self) -> np.ndarray:
        word = self.word(0)
        true: np.ndarray = (word & MASKS[4]) == _word(b"true")
        if not (true | ((word & MASKS[5]) == _word(b"false"))).all():
            raise Decline
        self.off += 5 - true
        self._moved()
        return true

    def finish(self) -> None:
        if not np.array_equal(self.off, self.lens):
            raise Decline


class Codes:
    """The distinct strings of one column, in order of first appearance, and their codes."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self.values: list[str] = []

    def _codes_of(self, raws: list[bytes]) -> list[int]:
        found: list[int | None] = list(map(self.index.get, raws))
        if None in found:
            for i, code in enumerate(found):
                if code is None:
                    text = raws[i].decode("utf-8")  # UnicodeDecodeError: declined by the caller
                    if "\\" in text:
                        raise Decline
                    found[i] = self.index[raws[i]] = len(self.values)
                    self.values.append(text)
        return found  # type: ignore[return-value]  # no None left

    def codes(self, keys: list[np.ndarray]) -> np.ndarray:
        """The code of each row's key, given as its columns of packed words (no key holds a
        NUL byte: the zero padding is unambiguous)."""
        n, k = len(keys[0]), len(keys)
        change = keys[0][1:] != keys[0][:-1]
        for col in keys[1:]:
            change |= col[1:] != col[:-1]
        starts = np.concatenate(([0], np.flatnonzero(change) + 1))
        runs = [col[starts] for col in keys]
        run_codes = np.full(len(starts), -1, dtype=np.int32)
        if len(self.values) <= 16:
            for raw, code in self.index.items():
                if len(raw) <= 8 * k:
                    row = np.frombuffer(raw.ljust(8 * k, b"\0"), dtype="<u8")
                    hit = runs[0] == row[0]
                    for col, word in zip(runs[1:], row[1:].tolist(), strict=True):
                        hit &= col == word
                    run_codes[hit] = code
            rest = np.flatnonzero(run_codes < 0)
            runs = [col[rest] for col in runs]
        else:
            rest = np.arange(len(starts))
        if rest.size:
            first, inverse = _first_seen(runs)
            raws = np.stack([col[first] for col in runs], axis=1).view(f"S{8 * k}")
            new = np.array(self._codes_of(raws.ravel().tolist()), dtype=np.int32)
            run_codes[rest] = new[inverse]
        return np.repeat(run_codes, np.diff(np.append(starts, n)))


def _first_seen(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(the row where each distinct key first appears, in that order; each row's distinct
    key's number in that order), the keys given as columns."""
    order = np.lexsort(keys[::-1])
    change = np.zeros(len(order), dtype=np.bool_)
    change[0] = True
    for col in keys:
        ordered = col[order]
        change[1:] |= ordered[1:] != ordered[:-1]
    bounds = np.flatnonzero(change)
    first = np.minimum.reduceat(order, bounds)  # each group's first row
    rank = np.argsort(first, kind="stable")
    number = np.empty(len(rank), dtype=np.int64)
    number[rank] = np.arange(len(rank))
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = number[np.cumsum(change) - 1]
    return first[rank], inverse


def _block(buf: bytearray, size: int, ends: np.ndarray, chunk: int, template: Template,
           codes: dict[str, Codes], cols: dict[str, list[np.ndarray]]) -> None:
    starts = np.empty_like(ends)
    starts[0], starts[1:] = 0, ends[:-1] + 1
    for at in range(0, len(ends), chunk):
        rows = Rows(buf, size, starts[at:at + chunk], ends[at:at + chunk])
        for kind, name, text in template:
            if kind == "c":
                rows.const(text)
            elif kind in "sl":
                cols[name].append(codes[name].codes(rows.string(text)))
            elif kind == "i":
                cols[name].append(rows.repeat(text))
            elif kind == "b":
                cols[name].append(rows.same())
        rows.finish()


def _block_size(fd: int, block: int) -> int:
    """``block``, or less for a regular file smaller than it: its size and one byte, so that
    the whole file is one block and a small file does not zero a buffer of ``BLOCK`` bytes
    (~13 ms); the blocks, and so the columns, are the same."""
    st = os.fstat(fd)
    return min(block, st.st_size + 1) if stat.S_ISREG(st.st_mode) else block


def read_columns(path: Path, templates: list[Template], block: int = BLOCK, chunk: int = CHUNK
                 ) -> tuple[Template, dict[str, Codes], dict[str, np.ndarray]]:
    """(the template, codes of each string field, column of each field) of a file whose every
    line follows the one of ``templates`` that its first line follows. A list field ("l") is
    coded as a string: its text between the brackets (up to the first ``]``)."""
    codes: dict[str, Codes] = {}
    cols: dict[str, list[np.ndarray]] = {}
    template: Template | None = None
    carry = 0
    with open(path, "rb", buffering=0) as f:
        block = _block_size(f.fileno(), block)
        buf = bytearray(block + MAX_LINE + 32)  # room for a row's width past the last line
        data = np.frombuffer(buf, dtype=np.uint8)
        while True:
            got = f.readinto(memoryview(buf)[carry:block])
            size = carry + got
            if not got:
                if not carry:
                    break
                buf[size] = 10  # a last line without newline
                size += 1
            ends = np.flatnonzero(data[:size] < 32)  # newlines, and any other control byte
            if not ends.size or not (data[ends] == 10).all():
                raise Decline
            cut = int(ends[-1]) + 1
            if template is None:
                template = pick(templates, bytes(buf[:int(ends[0])]))
                codes = {name: Codes() for kind, name, _ in template if kind in "sl"}
                cols = {name: [] for _, name, _ in template if name}
            _block(buf, cut, ends, chunk, template, codes, cols)
            carry = size - cut
            buf[:carry] = buf[cut:size]
            if not got:
                break
    if template is None:
        raise Decline  # no line
    return template, codes, {name: np.concatenate(parts) for name, parts in cols.items()}
