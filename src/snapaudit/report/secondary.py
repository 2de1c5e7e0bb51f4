"""The report's "Beyond D" section: secondary statistics that never change the gate's verdict.

Flip rates against gold, paired utility deltas, the permutation test of equal answer
distributions and Holm-adjusted ladder p-values, as the typed results state them
(docs/results-schema.md, schema 2), plus the negatively flipped questions (old EM-match, new
EM-nonmatch on some matched repeat) for the comparison view: :func:`negative_flip_ids` is the
hook a comparison view filters on.
"""

from __future__ import annotations

from snapaudit.report.model import Section, Table, interval, num
from snapaudit.stats.analysis import AnalysisResult

RATES = (("nfr", "negative flip rate NFR"), ("pfr", "positive flip rate PFR"),
         ("nfi", "negative flip impact NFI"), ("btc", "backward trust compatibility BTC"),
         ("bec", "backward error compatibility BEC"))


def negative_flip_ids(results: AnalysisResult) -> list[str]:
    """Questions with at least one matched comparison EM-match -> EM-nonmatch (empty without
    gold)."""
    rates = results.secondary.flip_rates
    return [str(q) for q in rates.negative_question_ids] if rates is not None else []


def overlap_docs(results: AnalysisResult) -> str | None:
    """'1.19 of 8 documents' (the mean number of shared top-k documents), when known."""
    o = results.overlap
    if o is None:
        return None
    return f"{num(float(o.mean_docs))} of {o.k} documents"


def secondary_section(r: AnalysisResult) -> Section | None:
    tables: list[Table] = []
    rows: tuple[tuple[str, ...], ...]
    paragraphs: list[str] = []
    sec = r.secondary
    fr = sec.flip_rates
    if fr is not None:
        rows = tuple((name, num(fr.rates[k].point), interval(fr.rates[k].ci95))
                     for k, name in RATES)
        tables.append(Table(f"Flip rates against gold over {num(fr.comparisons)} "
                            "matched-repeat comparisons (percent)",
                            ("rate", "value", "95% CI"), rows))
        neg = negative_flip_ids(r)
        paragraphs.append(f"Negatively flipped questions (EM-match → EM-nonmatch on a matched "
                          f"repeat): {len(neg)}" + (f": {', '.join(neg[:20])}"
                                                    + (" …" if len(neg) > 20 else "")
                                                    if neg else "."))
    delta = sec.utility_delta
    if delta:
        rows = tuple((k.upper(), num(delta[k].point), interval(delta[k].ci95),
                      num(delta[k].p_nonpositive, 4)) for k in ("em", "f1"))
        tables.append(Table("Paired utility change new − old (pp)",
                            ("metric", "change", "95% CI", "P(change ≤ 0)"), rows))
    dist = sec.distribution
    if dist is not None:
        rows = tuple((k, num(dist.kernels[k].mmd2, 4), num(dist.kernels[k].p_value, 4))
                     for k in ("exact", "semantic") if k in dist.kernels)
        tables.append(Table(f"Permutation test of equal answer distributions "
                            f"({num(dist.permutations)} permutations, stratified by "
                            "question)", ("kernel", "mean MMD² (unbiased)", "p-value"), rows))
    mult = sec.multiplicity
    if mult is not None:
        rows = tuple((f"{t.old} → {t.new}", str(t.kind), num(t.d_hat),
                      num(t.p_nonpositive, 4), num(t.p_holm, 4)) for t in mult.tests)
        tables.append(Table(f"Ladder steps, Holm-adjusted (secondary; {mult.kernel} D)",
                            ("step", "kind", "D (pp)", "P(D ≤ 0)", "Holm p"), rows))
    unit = r.comparison.resampled
    if unit.unit == "cluster":
        paragraphs.append(f"Intervals resample whole clusters ({num(unit.clusters)} "
                          "clusters), not single questions.")
    if not tables:
        return None
    return Section("Beyond D (secondary; the gate does not use these)", tuple(paragraphs),
                   tuple(tables))
