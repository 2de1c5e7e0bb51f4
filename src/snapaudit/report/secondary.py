"""The report's "Beyond D" section: secondary statistics that never change the gate's verdict.

Flip rates against gold, paired utility deltas, the permutation test of equal answer
distributions and Holm-adjusted ladder p-values, as results.json states them
(docs/results-schema.md, schema 2), plus the negatively flipped questions (old EM-match, new
EM-nonmatch on some matched repeat) for the comparison view: :func:`negative_flip_ids` is the
hook a comparison view filters on.
"""

from __future__ import annotations

from typing import Any

from snapaudit.report.model import Section, Table, interval, num

RATES = (("nfr", "negative flip rate NFR"), ("pfr", "positive flip rate PFR"),
         ("nfi", "negative flip impact NFI"), ("btc", "backward trust compatibility BTC"),
         ("bec", "backward error compatibility BEC"))


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def negative_flip_ids(results: dict[str, Any]) -> list[str]:
    """Questions with at least one matched comparison EM-match -> EM-nonmatch (empty without
    gold or in results older than schema 2)."""
    ids = _d(results.get("flip_rates")).get("negative_question_ids")
    return [str(q) for q in ids] if isinstance(ids, list) else []


def overlap_docs(results: dict[str, Any]) -> str | None:
    """'1.19 of 8 documents' (the mean number of shared top-k documents), when known."""
    o = _d(results.get("overlap"))
    if not isinstance(o.get("mean_docs"), (int, float)) or not isinstance(o.get("k"), int):
        return None
    return f"{num(float(o['mean_docs']))} of {o['k']} documents"


def secondary_section(r: dict[str, Any]) -> Section | None:
    tables: list[Table] = []
    rows: tuple[tuple[str, ...], ...]
    paragraphs: list[str] = []
    fr = _d(r.get("flip_rates"))
    if fr:
        rows = tuple((name, num(_d(fr.get(k)).get("point")), interval(_d(fr.get(k)).get("ci95")))
                     for k, name in RATES)
        tables.append(Table(f"Flip rates against gold over {num(fr.get('comparisons'))} "
                            "matched-repeat comparisons (percent)",
                            ("rate", "value", "95% CI"), rows))
        neg = negative_flip_ids(r)
        paragraphs.append(f"Negatively flipped questions (EM-match → EM-nonmatch on a matched "
                          f"repeat): {len(neg)}" + (f": {', '.join(neg[:20])}"
                                                    + (" …" if len(neg) > 20 else "")
                                                    if neg else "."))
    delta = _d(_d(r.get("utility")).get("delta"))
    if delta:
        rows = tuple((k.upper(), num(_d(delta.get(k)).get("point")),
                      interval(_d(delta.get(k)).get("ci95")),
                      num(_d(delta.get(k)).get("p_nonpositive"), 4)) for k in ("em", "f1"))
        tables.append(Table("Paired utility change new − old (pp)",
                            ("metric", "change", "95% CI", "P(change ≤ 0)"), rows))
    dist = _d(r.get("distribution_test"))
    if dist:
        rows = tuple((k, num(_d(dist.get(k)).get("mmd2"), 4),
                      num(_d(dist.get(k)).get("p_value"), 4))
                     for k in ("exact", "semantic") if k in dist)
        tables.append(Table(f"Permutation test of equal answer distributions "
                            f"({num(dist.get('permutations'))} permutations, stratified by "
                            "question)", ("kernel", "mean MMD² (unbiased)", "p-value"), rows))
    mult = _d(r.get("multiplicity"))
    if mult:
        rows = tuple((f"{t.get('old')} → {t.get('new')}", str(t.get("kind")), num(t.get("d_hat")),
                      num(t.get("p_nonpositive"), 4), num(t.get("p_holm"), 4))
                     for t in mult.get("tests") or [] if isinstance(t, dict))
        tables.append(Table(f"Ladder steps, Holm-adjusted (secondary; {mult.get('kernel')} D)",
                            ("step", "kind", "D (pp)", "P(D ≤ 0)", "Holm p"), rows))
    unit = _d(_d(r.get("comparison")).get("resampled"))
    if unit.get("unit") == "cluster":
        paragraphs.append(f"Intervals resample whole clusters ({num(unit.get('clusters'))} "
                          "clusters), not single questions.")
    if not tables:
        return None
    return Section("Beyond D (secondary; the gate does not use these)", tuple(paragraphs),
                   tuple(tables))
