"""Vectorized tokenization and term counting of whole document batches (tokenizer v1, exact).

:func:`count_batch` gives, for a batch of texts, exactly the per-document term counts of
``Counter(tokenize(text))`` (:mod:`snapaudit.testbed.retrieval.tokenize`), without a Python
object per token:

1. every text is NFKC-normalized and case-folded (one C call per document), the batch is
   joined with ``\\n`` (a separator character, never part of a token; NFKC and case folding
   are per-document, so joining afterwards changes nothing) and viewed as UTF-32 code points;
2. a code point is a token character iff ``str.isalnum()`` (what ``[^\\W_]`` matches), by a
   table over all code points built once per process;
3. tokens are the maximal runs of token characters; runs longer than 64 are dropped;
4. every token gets two 64-bit keys (:mod:`snapaudit.testbed.retrieval.bm25_keys`: a short
   token's own bytes, else two polynomial hashes); tokens are grouped by the first key, and
   the second must agree inside every group, else the batch falls back to the per-token path
   (no silent merge);
5. stopwords are dropped by key (a direct-mapped table), (token, document) pairs are counted
   with one sort, and one string per new distinct term is cut out of the joined text.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from snapaudit.testbed.retrieval.bm25_keys import stop_keys, token_codes, token_keys
from snapaudit.testbed.retrieval.tokenize import MAX_TOKEN_CHARS, STOPWORDS, tokenize

_state: dict[str, Any] = {}


def _alnum_table() -> Any:
    table = _state.get("alnum")
    if table is None:
        table = np.fromiter((chr(c).isalnum() for c in range(0x110000)), dtype=bool,
                            count=0x110000)
        _state["alnum"] = table
    return table


def fold(text: str) -> str:
    return text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()


class TermTable:
    """The vocabulary of one segment, keyed by the two token hashes (numpy, no Python work
    per token or per known term): ``words[gid]``, ``stop[gid]``. New terms arrive as code
    points (decoded to strings in one call when ``words`` is read); two different terms with
    equal first hash raise (never merged silently)."""

    def __init__(self) -> None:
        self._words: list[str] = []
        self._parts: list[Any] = []  # code points of terms not yet decoded, "\n" after each
        self.size = 0
        self._stop = np.zeros(1 << 12, dtype=bool)
        self.index: dict[str, int] | None = None  # the per-token path's vocabulary, once used
        self._keys = np.zeros(0, dtype=np.uint64)   # sorted first hashes, merged ...
        self._h2 = np.zeros(0, dtype=np.uint64)
        self._gid = np.zeros(0, dtype=np.int64)
        self._dkeys = np.zeros(0, dtype=np.uint64)  # ... and a small sorted delta
        self._dh2 = np.zeros(0, dtype=np.uint64)
        self._dgid = np.zeros(0, dtype=np.int64)

    @property
    def words(self) -> list[str]:
        if self._parts:
            buf = np.concatenate(self._parts)
            self._parts = []
            self._words += buf.tobytes().decode("utf-32-le", "surrogatepass").split("\n")[:-1]
        return self._words

    @property
    def stop(self) -> Any:
        return self._stop[: self.size]

    def _grow(self, n: int) -> None:
        if n > len(self._stop):
            grown = np.zeros(max(n, 2 * len(self._stop)), dtype=bool)
            grown[: self.size] = self.stop
            self._stop = grown

    def append(self, words: list[str]) -> None:
        n = self.size + len(words)
        self._grow(n)
        self._stop[self.size: n] = [w in STOPWORDS for w in words]
        self.words.extend(words)
        self.size = n

    def append_code_points(self, buf: Any, count: int) -> None:
        """``count`` new terms (never stopwords), as code points each followed by ``\n``."""
        self._grow(self.size + count)
        self._parts.append(buf)
        self.size += count

    @staticmethod
    def _find(keys: Any, u: Any) -> tuple[Any, Any]:
        pos = np.searchsorted(keys, u)
        pos_c = np.minimum(pos, max(len(keys) - 1, 0))
        found = (pos < len(keys)) & (keys[pos_c] == u) if len(keys) else np.zeros(len(u), bool)
        return pos_c, found

    def lookup(self, u: Any, h2: Any, cut: Callable[[Any], Any]) -> Any:
        """Segment ids of the distinct terms ``u`` (sorted first hashes) of a batch;
        ``cut(positions)`` gives the code points of the terms at those positions (the new
        ones), each followed by ``\n``."""
        gid = np.full(len(u), -1, dtype=np.int64)
        for keys, hs, ids in ((self._keys, self._h2, self._gid),
                              (self._dkeys, self._dh2, self._dgid)):
            pos, found = self._find(keys, u)
            if np.any(hs[pos[found]] != h2[found]):
                raise _Collision
            gid[found] = ids[pos[found]]
        new = np.flatnonzero(gid < 0)
        if len(new):
            base = self.size
            self.append_code_points(cut(new), len(new))
            gid[new] = np.arange(base, base + len(new))
            self._add(u[new], h2[new], gid[new])
        return gid

    def _add(self, u: Any, h2: Any, gid: Any) -> None:
        """Merge sorted new keys into the delta (and the delta into the main table when it
        grows): insertion at ``searchsorted`` positions, linear, no re-sort."""
        at = np.searchsorted(self._dkeys, u)
        self._dkeys, self._dh2 = np.insert(self._dkeys, at, u), np.insert(self._dh2, at, h2)
        self._dgid = np.insert(self._dgid, at, gid)
        if len(self._dkeys) > max(1 << 14, len(self._keys) // 4):
            at = np.searchsorted(self._keys, self._dkeys)
            self._keys = np.insert(self._keys, at, self._dkeys)
            self._h2 = np.insert(self._h2, at, self._dh2)
            self._gid = np.insert(self._gid, at, self._dgid)
            self._dkeys = np.zeros(0, dtype=np.uint64)
            self._dh2 = np.zeros(0, dtype=np.uint64)
            self._dgid = np.zeros(0, dtype=np.int64)


class _Collision(Exception):
    """Two different tokens share the first hash (astronomically rare): count slowly."""


_DOC_BITS = 16  # documents per call to count_batch: at most 2^16 (doc ids are uint16-safe)


class Counts:
    """Term counts of a batch: ``doc_lens[d]`` (tokens kept), and one posting per (term,
    document): term ``gids[i]`` of the table occurs ``tfs[i]`` times in document ``docs[i]``
    (stopwords dropped; postings in no particular order)."""

    __slots__ = ("doc_lens", "docs", "gids", "tfs")

    def __init__(self, doc_lens: Any, gids: Any, docs: Any, tfs: Any):
        self.doc_lens, self.gids, self.docs, self.tfs = doc_lens, gids, docs, tfs


def count_batch(texts: Sequence[str], table: TermTable) -> Counts:
    """Per-document term counts of ``texts``, equal to ``Counter(tokenize(t))`` for each."""
    if len(texts) > 1 << _DOC_BITS:
        raise ValueError(f"count_batch takes at most {1 << _DOC_BITS} texts")
    if table.index is None:
        try:
            return _count(texts, table)
        except _Collision:
            table.index = {w: i for i, w in enumerate(table.words)}
    return _slow(texts, table)


_IDX_BITS = 24


def _group(h1: Any) -> tuple[Any, Any]:
    """A token order grouping equal hashes, token order inside a group (so documents
    ascend), and where each group starts. One sort of (40-bit hash prefix, token index)
    packed in 64 bits; on a prefix collision, a stable sort of the whole hashes."""
    n = len(h1)
    if n < 1 << _IDX_BITS:
        bits = np.uint64(_IDX_BITS)
        packed = np.sort(((h1 >> bits) << bits) | np.arange(n, dtype=np.uint64))
        order = (packed & np.uint64((1 << _IDX_BITS) - 1)).astype(np.int64)
        grp = packed >> bits
        new = np.empty(n, dtype=bool)
        new[:1] = True
        np.not_equal(grp[1:], grp[:-1], out=new[1:])
        hs = h1[order]
        if not np.any(~new[1:] & (hs[1:] != hs[:-1])):
            return order, new
    order = np.argsort(h1, kind="stable")
    hs = h1[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(hs[1:], hs[:-1], out=new[1:])
    return order, new


def _count(texts: Sequence[str], table: TermTable) -> Counts:
    folded = [fold(t) for t in texts]
    joined = "\n".join(folded) + "\n"
    cp = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    alnum = _alnum_table().take(cp)
    change = np.flatnonzero(alnum[1:] != alnum[:-1]) + 1  # runs alternate: start, end, ...
    if len(alnum) and alnum[0]:
        change = np.concatenate([np.zeros(1, dtype=change.dtype), change])
    starts, ends = change[0::2], change[1::2]  # the text ends with "\n": every run ends
    keep = (ends - starts) <= MAX_TOKEN_CHARS
    if not keep.all():
        starts, ends = starts[keep], ends[keep]
    lens = np.fromiter(map(len, folded), dtype=np.int64, count=len(folded)) + 1
    doc = np.repeat(np.arange(len(folded), dtype=np.int32), lens)[starts]
    h1, h2 = token_keys(cp, starts, ends)
    s1, s2, mask = stop_keys()
    at = (h1 & mask).view(np.int64)  # slots < 2^bits: non-negative
    stop = s1[at] == h1
    hit = np.flatnonzero(stop)
    if len(hit):  # stopwords go before the sort (a third of running text)
        if np.any(s2[at[hit]] != h2[hit]):
            raise _Collision
        keep_at = np.flatnonzero(~stop)
        h1, h2, doc, starts, ends = (h1[keep_at], h2[keep_at], doc[keep_at], starts[keep_at],
                                     ends[keep_at])
    order, new_term = _group(h1)
    h1, h2, doc = h1[order], h2[order], doc[order]
    if np.any(~new_term[1:] & (h2[1:] != h2[:-1])):
        raise _Collision
    new_pair = new_term.copy()
    new_pair[1:] |= doc[1:] != doc[:-1]
    pair_at = np.flatnonzero(new_pair)
    tfs = np.diff(np.append(pair_at, len(h1)))
    term_at = np.flatnonzero(new_term)
    first = order[term_at]
    starts_l, ends_l = starts[first], ends[first]

    def cut(new: Any) -> Any:
        return token_codes(cp, starts_l[new], ends_l[new])[0]

    gid = table.lookup(h1[term_at], h2[term_at], cut)
    gids = gid[np.cumsum(new_term)[pair_at] - 1]
    docs = doc[pair_at].astype(np.int64)
    doc_lens = np.bincount(docs, weights=tfs, minlength=len(texts)).astype(np.int64)
    return Counts(doc_lens, gids, docs, tfs.astype(np.int64))


def _slow(texts: Sequence[str], table: TermTable) -> Counts:
    """The per-token path (the reference the fast path equals); a table that took it once
    stays on it."""
    assert table.index is not None
    index = table.index
    per_doc = [Counter(tokenize(t)) for t in texts]
    rows = []
    for d, counts in enumerate(per_doc):
        for w, tf in counts.items():
            if w not in index:
                index[w] = len(table.words)
                table.append([w])
            rows.append((index[w], d, tf))
    arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
    lens = np.array([sum(c.values()) for c in per_doc], dtype=np.int64)
    return Counts(lens, arr[:, 0], arr[:, 1], arr[:, 2])
