"""Evidence rendering: the one text surface every state's prompt shows.

Each document becomes a numbered block with its id, its URL and at most ``max_chars``
characters of whitespace-compacted text::

    [1] id: <doc id>
    url: <url, or (none)>
    <text, whitespace runs collapsed to one space, cut at max_chars code points>

Blocks are joined by one blank line. The cut is Python ``str`` slicing, so it falls on a
code-point boundary and never inside a UTF-8 sequence. The same function renders every
state, so the surface is identical across states; a state with no retrieval (0 shards) gets
no evidence block at all (``None``).
"""

from __future__ import annotations

from collections.abc import Sequence

from snapaudit.testbed.retrieval.base import Document
from snapaudit.testbed.retrieval.config import RenderConfig

RENDER_VERSION = 1
NO_URL = "(none)"


def compact(text: str) -> str:
    """Collapse every run of whitespace (any Unicode space, tab, newline) to one space."""
    return " ".join(text.split())


def clip(text: str, max_chars: int) -> str:
    """At most ``max_chars`` code points of ``text`` (never a partial UTF-8 sequence)."""
    return text[:max_chars]


def render_document(rank: int, doc: Document, config: RenderConfig) -> str:
    """One numbered document block (``rank`` is 1-based)."""
    lines = [f"[{rank}] id: {compact(doc.doc_id)}"]
    if config.include_url:
        lines.append(f"url: {compact(doc.url) or NO_URL}")
    lines.append(clip(compact(doc.text), config.max_chars))
    return "\n".join(lines)


def render_evidence(docs: Sequence[Document] | None, config: RenderConfig) -> str | None:
    """The evidence block of ordered documents; ``None`` for a state without retrieval.

    An empty list (retrieval ran but nothing matched) renders as the empty string.
    """
    if docs is None:
        return None
    return "\n\n".join(render_document(i, d, config) for i, d in enumerate(docs, start=1))


def render_spec(config: RenderConfig) -> dict[str, object]:
    """What shapes the rendered bytes, for hash binding."""
    return {"version": RENDER_VERSION, "max_chars": config.max_chars,
            "include_url": config.include_url, "separator": "blank line"}


def split_blocks(rendered: str, doc_ids: Sequence[str]) -> dict[str, str]:
    """Doc id -> its block of ``rendered`` without the ``[rank] `` prefix (the rest of a
    block does not depend on the rank), for re-rendering the same documents in another
    order with :func:`join_blocks`. ValueError when ``rendered`` is not ``doc_ids``' block."""
    blocks = rendered.split("\n\n") if rendered else []
    if len(blocks) != len(doc_ids):
        raise ValueError(f"{len(blocks)} evidence block(s) for {len(doc_ids)} document(s)")
    out: dict[str, str] = {}
    for rank, (doc_id, block) in enumerate(zip(doc_ids, blocks, strict=True), start=1):
        prefix = f"[{rank}] "
        if not block.startswith(prefix):
            raise ValueError(f"evidence block {rank} does not start with {prefix!r}")
        out[doc_id] = block.removeprefix(prefix)
    return out


def join_blocks(bodies: Sequence[str]) -> str:
    """The evidence block of rank-free document blocks, numbered 1, 2, ... as
    :func:`render_evidence` numbers them."""
    return "\n\n".join(f"[{i}] {body}" for i, body in enumerate(bodies, start=1))
