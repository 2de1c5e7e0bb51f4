"""A document kept under the same id whose content hash changed: counted as changed."""

from __future__ import annotations

import json

from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.analysis_read import analysis_from_json
from snapaudit.stats.overlap import changed_ids
from snapaudit.tables import AnswerRow


def _rows(q: str, ids: dict[str, tuple[str, ...]],
          hashes: dict[str, tuple[str, ...] | None]) -> list[AnswerRow]:
    return [AnswerRow(q, s, r, f"{q} {s}", ids[s], doc_hashes=hashes[s])
            for s in ("A", "B") for r in (1, 2)]


def test_changed_documents_by_hand() -> None:
    # q1 keeps d1, d2, d3; d1 and d3 got new texts -> 2 changed
    # q2 keeps d4; same text -> 0 changed
    # q3 has no hashes on the new side: it cannot be told, so it is not counted
    rows = _rows("q1", {"A": ("d1", "d2", "d3"), "B": ("d3", "d2", "d1")},
                 {"A": ("h1", "h2", "h3"), "B": ("h3b", "h2", "h1b")})
    rows += _rows("q2", {"A": ("d4",), "B": ("d4",)}, {"A": ("h4",), "B": ("h4",)})
    rows += _rows("q3", {"A": ("d5",), "B": ("d5",)}, {"A": ("h5",), "B": None})
    result = analyze(rows, config=AnalysisConfig(old="A", new="B", draws=200,
                                                 permutations=0))
    o = result.overlap
    assert o is not None
    assert (o.identical, o.mean) == (3, 1.0)  # overlap itself is a matter of ids
    assert (o.changed, o.changed_docs) == (1, 1.0)  # 1 of 2 questions; (2 + 0) / 2 docs
    doc = result.to_json()
    assert doc["overlap"]["changed"] == 1 and doc["overlap"]["changed_docs"] == 1.0
    assert analysis_from_json(json.loads(json.dumps(doc))).to_json() == doc


def test_without_hashes_the_keys_are_not_written() -> None:
    rows = _rows("q1", {"A": ("d1",), "B": ("d1",)}, {"A": None, "B": None})
    rows += _rows("q2", {"A": ("d2",), "B": ("d3",)}, {"A": None, "B": None})
    o = analyze(rows, config=AnalysisConfig(old="A", new="B", draws=200,
                                            permutations=0)).overlap
    assert o is not None and o.changed is None and o.changed_docs is None
    assert "changed" not in o.to_json() and "changed_docs" not in o.to_json()


def test_changed_ids_keeps_the_old_order_and_needs_both_sides() -> None:
    assert changed_ids(("a", "b", "c"), ("1", "2", "3"), ("c", "a", "x"),
                       ("3x", "1x", "9")) == ["a", "c"]
    assert changed_ids(("a",), ("1",), ("a",), None) is None
    assert changed_ids(("a", "b"), ("1",), ("a",), ("1",)) is None  # not one hash per id
