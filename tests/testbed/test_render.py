from __future__ import annotations

import pytest

from snapaudit.testbed.render import clip, compact, render_document, render_evidence
from snapaudit.testbed.retrieval.base import Document
from snapaudit.testbed.retrieval.config import RenderConfig


def test_compact_collapses_every_whitespace_run() -> None:
    assert compact("  a\tb\n\n c\u00a0d\u2003 ") == "a b c d"


def test_clip_cuts_on_code_points_never_inside_utf8() -> None:
    text = "é😀漢字" * 3  # 2-, 4- and 3-byte sequences
    for n in range(len(text) + 1):
        part = clip(text, n)
        assert len(part) == n
        assert part.encode("utf-8").decode("utf-8") == part
    assert clip("😀😀😀", 2) == "😀😀"
    assert len(clip("😀😀😀", 2).encode()) == 8


def test_render_document_layout_and_limit() -> None:
    doc = Document("d1", "https://x.org/a", "one   two\nthree " + "é" * 2000)
    out = render_document(3, doc, RenderConfig(max_chars=12))
    assert out == "[3] id: d1\nurl: https://x.org/a\none two thre"
    full = render_document(1, doc, RenderConfig())
    assert len(full.split("\n")[2]) == 1200


def test_render_without_url_and_missing_url() -> None:
    doc = Document("d1", "", "text")
    assert render_document(1, doc, RenderConfig()) == "[1] id: d1\nurl: (none)\ntext"
    assert render_document(1, doc, RenderConfig(include_url=False)) == "[1] id: d1\ntext"


def test_render_evidence_joins_blocks_and_n0_is_none() -> None:
    docs = [Document("a", "u", "x"), Document("b", "v", "y")]
    assert render_evidence(docs, RenderConfig()) == "[1] id: a\nurl: u\nx\n\n[2] id: b\nurl: v\ny"
    assert render_evidence([], RenderConfig()) == ""
    assert render_evidence(None, RenderConfig()) is None


def test_split_blocks_rerender_other_orders_exactly() -> None:
    from snapaudit.testbed.render import join_blocks, split_blocks

    config = RenderConfig(max_chars=20)
    docs = [Document("d1", "https://x/1", "one  two\nthree"), Document("d2", "", "b" * 40),
            Document("d3", "u", "c")]
    rendered = render_evidence(docs, config)
    assert rendered is not None
    blocks = split_blocks(rendered, ["d1", "d2", "d3"])
    assert join_blocks([blocks["d3"], blocks["d1"]]) == render_evidence([docs[2], docs[0]],
                                                                        config)
    assert split_blocks("", []) == {} and join_blocks([]) == ""
    with pytest.raises(ValueError, match="block"):
        split_blocks(rendered, ["d1", "d2"])
