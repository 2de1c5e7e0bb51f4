"""Bounded reads and defensive JSON for every response of a service snapaudit does not control.

A response body is read as a stream and counted twice: the bytes on the wire and, for a
``gzip`` or ``deflate`` body, the bytes after decompression (decompressed incrementally,
never more than the cap plus one byte at a time). Past ``max_bytes`` on either count the
read stops, the connection is closed and the call is :class:`TransportInvalid`
(``response_too_large``, the cap and the size read in the detail): a gzip bomb or a
never-ending chunked body costs at most about twice the cap in memory. aiohttp sessions
that use :func:`read_body` must be made with ``auto_decompress=False``; requests send
:data:`ACCEPT_ENCODING` so that a server has no reason to use another encoding.

:func:`parse_json` refuses a body nested deeper than :data:`MAX_JSON_DEPTH` before
decoding it, and maps every decoder failure (syntax, encoding, a number too long to
convert, recursion) to :class:`TransportInvalid`, so no hostile body becomes a traceback.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from typing import Any

import aiohttp

from snapaudit.errors import TransportInvalid
from snapaudit.systems.failure import FailureReason, R

DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
MAX_JSON_DEPTH = 128
ACCEPT_ENCODING = "gzip, deflate"
_CHUNK = 64 * 1024

_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN = frozenset(b"[{")


def _too_large(max_bytes: int, size: int, what: str) -> TransportInvalid:
    return TransportInvalid(
        R.RESPONSE_TOO_LARGE,
        detail=f"response body over max_response_bytes = {max_bytes} "
               f"(stopped after {size} bytes {what})")


class _Decoder:
    """Incremental decompression of one Content-Encoding, output capped at ``max_bytes``."""

    def __init__(self, encoding: str, max_bytes: int):
        self.encoding = encoding
        self.max_bytes = max_bytes
        self.size = 0
        self._raw_deflate = False
        self._d: Any = self._new()

    def _new(self) -> Any:
        if self.encoding == "gzip":
            return zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
        return zlib.decompressobj(wbits=-zlib.MAX_WBITS if self._raw_deflate else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> bytes:
        out: list[bytes] = []
        while data:
            try:
                piece = self._d.decompress(data, self.max_bytes - self.size + 1)
            except zlib.error:
                if self.encoding == "deflate" and not self._raw_deflate and self.size == 0:
                    self._raw_deflate = True  # "deflate" sent without its zlib header
                    self._d = self._new()
                    continue
                raise TransportInvalid(R.MALFORMED_BODY,
                                       detail=f"corrupt {self.encoding} stream") from None
            self.size += len(piece)
            if self.size > self.max_bytes:
                raise _too_large(self.max_bytes, self.size, f"after {self.encoding} decoding")
            out.append(piece)
            data = self._d.unconsumed_tail
            if self._d.eof:  # a second gzip member may follow
                data = self._d.unused_data
                self._d = self._new()
        return b"".join(out)


def _decoder(encoding: str | None, max_bytes: int) -> _Decoder | None:
    enc = (encoding or "identity").strip().lower()
    if enc in ("", "identity"):
        return None
    if enc in ("gzip", "x-gzip"):
        return _Decoder("gzip", max_bytes)
    if enc == "deflate":
        return _Decoder("deflate", max_bytes)
    raise TransportInvalid(R.MALFORMED_BODY, detail=f"unsupported Content-Encoding {enc[:40]!r}")


async def read_body(resp: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    """The (decoded) body of ``resp``, at most ``max_bytes`` on the wire and decoded."""
    parts: list[bytes] = []
    await copy_body(resp, max_bytes, parts.append)
    return b"".join(parts)


async def copy_body(resp: aiohttp.ClientResponse, max_bytes: int,
                    write: Callable[[bytes], object]) -> None:
    """Hand the (decoded) body of ``resp`` to ``write`` chunk by chunk (a file's ``write``:
    memory stays one chunk), at most ``max_bytes`` on the wire and decoded."""
    declared = resp.content_length
    if declared is not None and declared > max_bytes:
        resp.close()
        raise _too_large(max_bytes, declared, "declared by Content-Length")
    try:
        decoder = _decoder(resp.headers.get("Content-Encoding"), max_bytes)
        wire = 0
        async for chunk in resp.content.iter_chunked(_CHUNK):
            wire += len(chunk)
            if wire > max_bytes:
                raise _too_large(max_bytes, wire, "on the wire")
            write(decoder.feed(chunk) if decoder is not None else chunk)
    except TransportInvalid:
        resp.close()  # never drain the rest of a hostile body
        raise


def json_depth_exceeds(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether brackets outside string literals nest deeper than ``limit``."""
    if raw.count(b"[") + raw.count(b"{") <= limit:  # too few openings to nest that deep
        return False
    brackets = _STRINGS.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = 0
    for b in brackets:
        if b in _OPEN:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def parse_json(raw: bytes | str, reason: FailureReason = R.MALFORMED_BODY) -> Any:
    """Decode a service's JSON body; TransportInvalid(``reason``) for anything unusable.

    The detail says what is wrong, never what the body says (see
    :func:`snapaudit.systems.redact.body_excerpt` for a safe excerpt).
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if json_depth_exceeds(data):
        raise TransportInvalid(reason, detail=f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise TransportInvalid(reason, detail=f"not JSON ({exc.msg} at char {exc.pos})") from None
    except UnicodeDecodeError:
        raise TransportInvalid(reason, detail="not JSON (not valid UTF-8)") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer over the digit limit
        raise TransportInvalid(reason, detail=f"not usable JSON ({type(exc).__name__})") \
            from None
