"""Token keys for the vectorized counter: two 64-bit words per token, computed for a whole
batch at once (no Python work per token).

A token ``cp[s:e]`` (code points of the batch's joined, folded text) gets ``(h1, h2)``:

- **packed** (at most :data:`PACK_CHARS` code points, all below 256: almost every word of
  running text): the token's bytes *are* the key. ``lo``/``hi`` = its first and next 8 bytes
  (little-endian, zero-padded), read through an unaligned 8-byte window over the batch;
  ``h2 = hi | 2^63`` (``hi`` < 2^56 since the token has at most 15 bytes) and
  ``h1 = fmix64(lo ^ fmix64(hi + salt))``, a bijection of ``lo`` for a fixed ``hi``. So
  ``(h1, h2)`` determines the token exactly: equal pairs are equal tokens;
- **polynomial** (longer tokens, or any code point >= 256): two independent polynomial
  hashes ``sum c_i * P^i`` modulo 2^64 from prefix sums over those tokens' code points only;
  ``h2`` has its top bit cleared, so it never equals a packed token's ``h2``.

The counter groups tokens by ``h1`` and requires ``h2`` to agree inside every group (else it
falls back to the per-token path): two packed tokens in one group are equal; a packed and a
polynomial token never pass; only two polynomial tokens colliding in both hashes at once
could merge. The keys never reach the index (it stores the terms' strings), so they can
change without changing a byte of the output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snapaudit.testbed.retrieval.tokenize import STOPWORDS

PACK_CHARS = 15
_P1, _P2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_TAG = np.uint64(1 << 63)
_SALT = np.uint64(0x243F6A8885A308D3)
_cache: dict[str, Any] = {}


def mix(h: Any) -> Any:
    """A bijective 64-bit finalizer (MurmurHash3 fmix64), in place: every bit depends on
    every bit."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


def _inverse(p: int) -> int:
    """p^-1 modulo 2^64 (p odd), by Newton iteration."""
    inv = p
    for _ in range(7):
        inv = (inv * (2 - p * inv)) % (1 << 64)
    return inv


def _powers(n: int) -> tuple[Any, Any, Any, Any]:
    """P1^i, P1^-i, P2^i, P2^-i for i < n (cached per process, grown by doubling)."""
    cached = _cache.get("powers")
    if cached is not None and len(cached[0]) >= n:
        return cached  # type: ignore[no-any-return]
    size = max(n, 1 << 12, (5 * (0 if cached is None else len(cached[0]))) // 4)
    out = []
    for p in (int(_P1), _inverse(int(_P1)), int(_P2), _inverse(int(_P2))):
        arr = np.full(size, p, dtype=np.uint64)
        arr[0] = 1
        out.append(np.cumprod(arr, dtype=np.uint64))
    _cache["powers"] = tuple(out)
    return _cache["powers"]  # type: ignore[no-any-return]


def _poly(cp: Any, starts: Any, ends: Any) -> tuple[Any, Any]:
    """The two polynomial hashes of every token ``cp[s:e]``: sum of ``cp[s+i] * P^i``
    mod 2^64, from prefix sums over ``cp`` (sequential passes, no per-token work)."""
    n = len(cp)
    pw1, ip1, pw2, ip2 = _powers(n)
    acc = np.zeros(n + 1, dtype=np.uint64)
    out = []
    for pw, ip in ((pw1, ip1), (pw2, ip2)):
        np.multiply(cp, pw[:n], out=acc[1:])
        np.cumsum(acc[1:], out=acc[1:])
        out.append((acc[ends] - acc[starts]) * ip[starts])
    return mix(out[0]), out[1]


def _wide_tokens(cp: Any, starts: Any, ends: Any) -> Any:
    """Indexes of the tokens holding a code point >= 256."""
    wide = np.flatnonzero(cp > 255)
    if not len(wide):
        return wide
    tok = np.searchsorted(starts, wide, side="right") - 1
    return tok[(tok >= 0) & (wide < ends[np.maximum(tok, 0)])]


def token_keys(cp: Any, starts: Any, ends: Any) -> tuple[Any, Any]:
    """``(h1, h2)`` of every token ``cp[starts[i]:ends[i]]`` (``cp``: uint32 code points)."""
    n = len(cp)
    lens = ends - starts
    u8 = np.zeros(n + 16, dtype=np.uint8)
    u8[:n] = cp  # wraps code points >= 256: their tokens take the polynomial path
    window = np.ndarray(shape=(n + 9,), dtype="<u8", buffer=u8, strides=(1,))
    lo = window[starts] & _MASKS[np.minimum(lens, 8)]
    hi = window[starts + 8] & _MASKS[np.clip(lens - 8, 0, 8)]
    h2 = hi | _TAG
    hi += _SALT
    h1 = mix(lo ^ mix(hi))
    slow = lens > PACK_CHARS
    slow[_wide_tokens(cp, starts, ends)] = True
    at = np.flatnonzero(slow)
    if len(at):
        h1[at], h2[at] = _slow_keys(cp, starts[at], ends[at])
    return h1, h2


def token_codes(cp: Any, starts: Any, ends: Any) -> tuple[Any, Any]:
    """The code points of tokens ``cp[starts[i]:ends[i]]`` copied one after another, each
    followed by ``\n``, and where each such piece ends."""
    size = ends - starts + 1  # the token and one separator
    end = np.cumsum(size)
    buf = cp[np.arange(int(end[-1])) - np.repeat(end - size - starts, size)]
    buf[end - 1] = 10
    return buf, end


def _slow_keys(cp: Any, starts: Any, ends: Any) -> tuple[Any, Any]:
    """Polynomial keys of a few tokens, over a compact copy of their code points."""
    buf, end = token_codes(cp, starts, ends)
    h1, h2 = _poly(buf, end - (ends - starts + 1), end - 1)
    return h1, h2 & ~_TAG


def stop_keys() -> tuple[Any, Any, Any]:
    """A direct-mapped table of the stopwords' keys, slot = low bits of ``h1`` (the fewest
    bits that give every stopword its own slot): ``(h1 table, h2 table, mask)``."""
    cached = _cache.get("stop")
    if cached is None:
        words = sorted(STOPWORDS)
        joined = "\n".join(words) + "\n"
        cp = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        ends = np.cumsum([len(w) + 1 for w in words]) - 1
        h1, h2 = token_keys(cp, ends - np.array([len(w) for w in words]), ends)
        bits = next(b for b in range(6, 64) if len(set((h1 % (1 << b)).tolist())) == len(words))
        slot = (h1 % np.uint64(1 << bits)).astype(np.int64)
        t1 = np.zeros(1 << bits, dtype=np.uint64)
        t2 = np.zeros(1 << bits, dtype=np.uint64)
        t1[slot], t2[slot] = h1, h2
        t1[~np.isin(np.arange(1 << bits), slot)] = ~h1[0]  # a value no empty slot matches
        cached = _cache["stop"] = (t1, t2, np.uint64((1 << bits) - 1))
    return cached  # type: ignore[no-any-return]
