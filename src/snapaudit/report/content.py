"""What the report says: headline, figures and Tables 1-4, built from a run's results.

Reads the typed results (:class:`~snapaudit.stats.analysis.AnalysisResult`, as
:func:`snapaudit.results.read_results` reads results.json; percentages and percentage
points as the analysis writes them) and the run tables; returns a :class:`Report` both
renderers share.
"""

from __future__ import annotations

from typing import Any

from snapaudit.judge.registry import JUDGES, judge_kind
from snapaudit.report import figures
from snapaudit.report.agents import agents_section, conversation_section
from snapaudit.report.attribution import attribution_view
from snapaudit.report.comparison import EM_LEGEND, comparison
from snapaudit.report.drilldown import trajectory_table
from snapaudit.report.load import RunView
from snapaudit.report.looks import looks_section
from snapaudit.report.model import Figure, Report, Section, Table, interval, num
from snapaudit.report.paths import paths_section
from snapaudit.report.review import review_section
from snapaudit.report.secondary import overlap_docs, secondary_section
from snapaudit.stats.agreement import JudgeAgreement
from snapaudit.stats.analysis import AnalysisResult, KernelStats

KERNELS = ("exact", "semantic")
TRANSITIONS = (("match_to_match", "match → match"), ("match_to_nonmatch", "match → nonmatch"),
               ("nonmatch_to_match", "nonmatch → match"),
               ("nonmatch_to_same_nonmatch", "nonmatch → same nonmatch"),
               ("nonmatch_to_different_nonmatch", "nonmatch → different nonmatch"))


def _pair(r: AnalysisResult) -> tuple[str, str]:
    return r.comparison.old, r.comparison.new


def _kernels(r: AnalysisResult) -> list[KernelStats]:
    return [r.kernels[k] for k in KERNELS if k in r.kernels]


def verdict(r: AnalysisResult) -> tuple[str, bool | None]:
    """The verdict line (the one vocabulary of :mod:`snapaudit.stats.verdict`) and whether it
    is INCOMPATIBLE (``False``), or ``None`` for every other verdict."""
    v = r.verdict()
    return v.line(), _ok(v.key)


def _ok(key: str) -> bool | None:
    """INCOMPATIBLE is bad news for a release, COMPATIBLE good; nothing else is either."""
    return {"incompatible": False, "compatible": True}.get(key)


def headline(r: AnalysisResult) -> Section:
    old, new = _pair(r)
    rows = [(k.kernel, num(k.within), num(k.cross), num(k.d_hat), num(k.lcb95), num(k.ucb95),
             interval(k.ci95), num(k.p_nonpositive, 4)) for k in _kernels(r)]
    churn = Table(f"Excess answer churn {old} → {new} (Within and Cross: agreement in percent, "
                  "the share of same-state and of old × new answer pairs the kernel calls the "
                  "same; D = Within − Cross, LCB95/UCB95 its one-sided bounds, in percentage "
                  "points)", ("kernel", "Within agreement", "Cross agreement", "D", "LCB95",
                              "UCB95", "95% CI", "P(D ≤ 0)"), tuple(rows))
    u = r.utility
    em_old = u.states[old].em if u is not None and old in u.states else None
    em_new = u.states[new].em if u is not None and new in u.states else None
    paragraphs = [f"Comparison {old} → {new}: {num(r.comparison.questions)} "
                  f"questions × {num(r.comparison.repeats)} repeats.",
                  f"Exact match {num(em_old)} % → {num(em_new)} % "
                  f"(change {num(u.em_delta if u is not None else None)} pp)."
                  + _contains(r)]
    gate_rows = tuple((x.rule, num(x.value), "holds" if x.passed else "does not hold")
                      for x in r.gate.rules)
    gate = Table("Release gate rules (all must hold for the gate to flag excess churn)",
                 ("rule", "value", "outcome"), gate_rows)
    tables = [churn, gate]
    if r.gate.margin_pp is not None:
        tables.append(Table(f"Compatibility within {r.gate.margin_pp:g} pp (all must hold "
                            "for COMPATIBLE)", ("rule", "value", "outcome"),
                            tuple((x.rule, num(x.value), "holds" if x.passed else
                                   "does not hold") for x in r.gate.compatibility)))
    return Section("Headline", tuple(paragraphs), tuple(tables))


def _contains(r: AnalysisResult) -> str:
    """The contains-gold rates beside EM (results written before them have none)."""
    u, old, new = r.utility, *_pair(r)
    if u is None or u.contains_delta is None:
        return ""
    return (f" The answer contains a gold answer (a run of whole words): "
            f"{num(u.states[old].contains)} % → {num(u.states[new].contains)} % (change "
            f"{num(u.contains_delta)} pp).")


def _scatter(r: AnalysisResult) -> Figure:
    em = (float(r.utility.em_delta) if r.utility is not None else None) or 0.0
    points, rows = [], []
    for k in _kernels(r):
        d = float(k.d_hat)
        ci = k.ci95
        points.append(figures.Point(k.kernel, em, d, float(ci[0]), float(ci[1])))
        rows.append((k.kernel, num(em), num(d), interval(ci)))
    svg = figures.scatter(points, "EM change (pp)", "excess churn D (pp)",
                          "Excess churn against EM change")
    return Figure("Excess churn D against EM change, with 95% intervals",
                  svg, Table("", ("kernel", "EM change", "D", "95% CI"), tuple(rows)))


def _transitions(r: AnalysisResult) -> Figure | None:
    if not r.transitions:
        return None
    percent = (r.transitions.get("semantic") or r.transitions["exact"]).percent()
    shares = [float(percent[key]) for key, _ in TRANSITIONS]
    names = [name for _, name in TRANSITIONS]
    old, new = _pair(r)
    svg = figures.stacked([f"{old} → {new}"], names, [shares],
                          "Matched-repeat EM transition composition",
                          "percent of matched-repeat comparisons", "state pair")
    rows = tuple((name, num(v)) for name, v in zip(names, shares, strict=True))
    return Figure("Matched-repeat EM transition composition (percent of comparisons)", svg,
                  Table("", ("transition", "percent"), rows))


def _histogram(r: AnalysisResult) -> Figure | None:
    o = r.overlap
    if o is None:
        return None
    have = {int(k): float(v) for k, v in o.histogram.items()}
    items = [(i, have.get(i, 0.0)) for i in range(o.k + 1)]
    labels = [str(k) for k, _ in items]
    svg = figures.bars(labels, [("questions", [v for _, v in items])],
                       "documents shared by the old and new top-k lists", "questions",
                       "Top-k document overlap", counts=True)
    rows = tuple((str(k), num(v, 0)) for k, v in items)
    docs = overlap_docs(r)
    caption = (f"Documents shared by the two top-k lists (mean {num(o.mean)}"
               + (f", {docs}" if docs else "")
               + f", none shared: {num(o.zero_rate)} %"
               + (f"; text changed under the same id: {num(o.changed)} questions"
                  if o.changed is not None else "") + ")")
    return Figure(caption, svg, Table("", ("shared documents", "questions"), rows))


def ladder_steps(r: AnalysisResult) -> list[dict[str, Any]]:
    """Ladder steps (then the endpoints) as dicts with ``step``, ``d_hat``, ``flips``,
    ``questions``."""
    if r.ladder is None:
        return []
    return [{"step": f"{s.old} → {s.new}".replace("->", "→"), "d_hat": float(s.d_hat),
             "flips": s.flips, "questions": r.comparison.questions}
            for s in (*r.ladder.steps, r.ladder.endpoints)]


def _ladder(r: AnalysisResult) -> tuple[list[Figure], Table | None]:
    """Two figures (D in pp, flips in questions: never one axis for both) and Table 4."""
    steps = ladder_steps(r)
    if not steps or r.ladder is None:
        return [], None
    kernel = r.ladder.kernel or "semantic"
    rows = []
    for s in steps:
        n, f = s["questions"], s["flips"]
        share = f" ({100 * f / n:.2f}%)" if isinstance(f, int) and isinstance(n, int) and n else ""
        rows.append((s["step"], num(s["d_hat"]), f"{num(f)}/{num(n)}{share}"))
    table = Table(f"Table 4. Per-step decomposition: {kernel} D (pp) and strict flips",
                  ("transition", "D", "stable flips"), tuple(rows))
    names = [s["step"] for s in steps]
    d_svg = figures.bars(names, [(f"{kernel} D (pp)", [s["d_hat"] or 0.0 for s in steps])],
                         "ladder step", f"{kernel} D (pp)", f"{kernel} D per ladder step")
    f_svg = figures.bars(names, [("strict flips", [float(s["flips"] or 0) for s in steps])],
                         "ladder step", "strict flips (questions)",
                         "Strict flips per ladder step", counts=True)
    d_rows = tuple((s["step"], num(s["d_hat"])) for s in steps)
    f_rows = tuple((s["step"], num(s["flips"])) for s in steps)
    return [Figure(f"{kernel.capitalize()} D per step of the ladder (pp)", d_svg,
                   Table("", ("step", "D (pp)"), d_rows)),
            Figure("Strict flips per step of the ladder (questions)", f_svg,
                   Table("", ("step", "strict flips"), f_rows))], table


def design_table(view: RunView) -> Table:
    r = view.results
    old, new = _pair(r)
    depth = max((len(a.doc_ids) for a in view.answers if a.doc_ids), default=0)
    judges = sorted({lab.judge for lab in view.labels})
    rows = (("Cohort", f"{num(r.comparison.questions)} questions"),
            ("Conditions", ", ".join(view.states) + (f"; top-{depth} evidence" if depth else "")),
            ("Confirmatory pair", f"{old} → {new}"),
            ("Answer cells", f"{len(view.answers)}"),
            ("Semantic judging", _judging(view, judges)),
            ("Judge on identical answers", _identical(r)),
            ("Locks", ", ".join(str(x.get("stage", x.get("name", "?"))) for x in view.locks)
             or "-"))
    return Table("Table 1. Locked design", ("component", "value"), rows)


def _judging(view: RunView, judges: list[str]) -> str:
    if not judges:
        return "none (exact kernel only)"
    name = str(view.judge.get("kind", ""))
    kind = judge_kind(name).description if name in JUDGES else None
    return ", ".join(judges) + (f"; primary judge: {kind}" if kind else "")


def _identical(r: AnalysisResult) -> str:
    sem = r.kernels.get("semantic")
    if sem is None or sem.identical_pairs is None:
        return "-"
    return (f"labelled same on {sem.identical_labelled_same} of {sem.identical_pairs} "
            "pairs whose normalized answers are identical")


def judges_table(j: JudgeAgreement | None) -> Table | None:
    """Cross-judge agreement when a second judge labelled the answers."""
    if j is None:
        return None
    rows = [("judges", " vs ".join(str(x) for x in j.judges)),
            ("pairs / questions", f"{num(j.pairs)} / {num(j.questions)}"),
            ("agreement", f"{num(j.agreement)} {interval(j.agreement_ci95)}"),
            ("Cohen's kappa", f"{num(j.kappa)} {interval(j.kappa_ci95)}"),
            ("identical partitions", f"{num(j.partitions_identical)} "
                                     f"{interval(j.partitions_identical_ci95)}")]
    rows += [(f"semantic D by {name}", num(value)) for name, value in sorted(j.d_hat.items())]
    return Table("Cross-judge agreement", ("", "value"), tuple(rows))


def build_report(view: RunView, plant_score: dict[str, Any] | None = None) -> Report:
    r = view.results
    old, new = _pair(r)
    v = r.verdict()
    head = headline(r)
    figs = [f for f in (_scatter(r), _transitions(r), _histogram(r)) if f is not None]
    ladder_figs, ladder_table = _ladder(r)
    figs += ladder_figs
    flips = r.flips
    kernel = flips.kernel or "semantic"
    flip_par = (f"Strict flips ({kernel} kernel) {old} → {new}: {num(flips.count)} "
                "questions; "
                f"they account for {num(flips.contribution_pp)} pp of D, the rest "
                f"{num(flips.rest_pp)} pp.")
    tables = [design_table(view), Table("Table 2. Excess answer churn", head.tables[0].header,
                                        head.tables[0].rows),
              trajectory_table(view, list(flips.question_ids))]
    if ladder_table is not None:
        tables.append(ladder_table)
    judges = judges_table(r.judges)
    if judges is not None:
        tables.append(judges)
    legend = ((EM_LEGEND,) if view.gold is not None else ())
    sections = [head, Section("Figures", (flip_par,), (), tuple(figs)),
                Section("Tables", legend, tuple(tables))]
    agents = agents_section(r.trajectory, old, new)
    if agents is not None:  # answers with steps only
        sections.insert(1, agents)
    talk = conversation_section(r.conversation, old, new)
    if talk is not None:  # conversations only
        sections.insert(1, talk)
    beyond = secondary_section(r)
    if beyond is not None:
        sections.append(beyond)
    people = review_section(view.review, view.record.human)
    if people is not None:
        sections.append(people)
    paths = paths_section(view.record.paths)
    if paths is not None:
        sections.append(paths)
    looks = looks_section(r.sequential)
    if looks is not None:
        sections.insert(1, looks)
    if plant_score is not None:
        sections.append(_plants_section(plant_score))
    return Report(title="Snapshot Compatibility Audit", subtitle=f"{old} → {new}",
                  verdict=f"{v.label}: {v.meaning}",
                  verdict_ok=_ok(v.key),
                  sections=tuple(sections), states=tuple(view.states),
                  comparison=comparison(view), small_sample=v.small_sample,
                  attribution=attribution_view(view))


def _plants_section(score: dict[str, Any]) -> Section:
    rows = tuple((kind, f"{v['flagged']}/{v['total']}") for kind, v in score["by_kind"].items())
    par = (f"Planted flips recovered: recall {num(score['recall'])}, precision "
           f"{num(score['precision'])} ({score['hits']} of {score['planted']} planted flips "
           f"flagged; {score['flagged']} questions flagged in all).")
    return Section("Demo world: planted changes", (par,),
                   (Table("Questions flagged as strict flips, by plant", ("plant", "flagged"),
                          rows),))
