"""Plain-text summary of an :class:`~snapaudit.stats.analysis.AnalysisResult`.

Tables in the spirit of the reference study: excess churn per kernel (its Table 2) and the
per-step decomposition over a ladder (its Table 4), then the gate, utility and diagnostics.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from snapaudit.report.top_changes import change_lines, run_change_lines
from snapaudit.results import RunResults
from snapaudit.stats.analysis import AnalysisResult
from snapaudit.stats.answer_form import kernel_to_read
from snapaudit.stats.sequential import Sequential
from snapaudit.stats.transitions import CATEGORIES
from snapaudit.tables import AnswerRow, PairLabel

AGREEMENT = ("  Within / Cross: agreement in % (the share of same-state / old x new answer pairs "
             "the kernel calls the same); D = Within - Cross: how much more the answers "
             "disagree across the two states than within one, in pp")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    def fmt(cells: Sequence[str]) -> str:
        first = f"{cells[0]:<{widths[0]}}"
        rest = [f"{c:>{w}}" for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()
    return [fmt(header), "  ".join("-" * w for w in widths), *(fmt(r) for r in rows)]


def _pp(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def churn_table(result: AnalysisResult) -> list[str]:
    c = result.comparison
    rows = [[name, _pp(k.within), _pp(k.cross), _pp(k.d_hat), _pp(k.lcb95), _pp(k.ucb95),
             f"[{_pp(k.ci95[0])}, {_pp(k.ci95[1])}]", f"{k.p_nonpositive:.4f}"]
            for name, k in result.kernels.items()]
    unit = ("whole-question" if c.resampled.unit == "question"
            else f"cluster ({c.resampled.clusters} clusters)")
    boot = (f"exact {unit} bootstrap" if all(k.method == "exact" for k in result.kernels.values())
            else f"{c.draws} {unit} bootstrap draws (seed {c.seed})")
    title = (f"Excess answer churn {c.old} -> {c.new}: {c.questions} questions x {c.repeats} "
             f"repeats, {boot}. Within/Cross agreement in %, D/LCB/UCB/CI in pp.")
    seq = result.sequential
    if seq is not None:
        title += (f" LCB95/UCB95: the repeated bounds of look {seq.looks_done} of "
                  f"{seq.looks_planned} (nominal {100 * seq.looks[-1].nominal:.3g}% a side).")
    return [title, *_table(["kernel", "Within agreement", "Cross agreement", "D", "LCB95",
                            "UCB95", "CI95", "P(D<=0)"], rows), AGREEMENT]


def reading_lines(result: AnalysisResult, run_dir: str | Path | None = None) -> list[str]:
    """Which kernel to read, when the answers are sentences (nothing for short answers)."""
    kernel, why = kernel_to_read(result.kernels, result.comparison.answer_words)
    if not why:
        return []
    if kernel is not None:
        gate = ("; the gate's exact rules count them too: gate these answers on the semantic "
                'kernel alone ([gate] profile = "long-form")'
                if any(r.kernel == "exact" for r in result.gate.rules) else "")
        return [f"Read the {kernel} kernel: {why}{gate}."]
    fix = (f"snapaudit rejudge {shlex.quote(str(run_dir))} --judge rule --gate long-form --out "
           f"{shlex.quote(f'{run_dir}-rule')} (no system call)" if run_dir is not None else
           "pair labels from a judge (--labels; the offline rule judge: snapaudit rejudge "
           "RUN_DIR --judge rule --gate long-form --out NEW_RUN_DIR)")
    return [f"No kernel here reads these answers: {why}, and no judge labelled them. "
            f"Judge them offline (no API key): {fix}."]


def gate_lines(result: AnalysisResult) -> list[str]:
    v = result.verdict()
    lines = [f"Verdict: {v.label}: {v.meaning}"]
    if v.small_sample:
        lines.append(f"  {v.small_sample}; treat this verdict as provisional")
    lines.append("Release gate rules (all must hold for INCOMPATIBLE):")
    for r in result.gate.rules:
        value = _pp(r.value)
        note = f"  ({r.note})" if r.note else ""
        lines.append(f"  [{'x' if r.passed else ' '}] {r.rule}: {value}{note}")
    return lines + decision_lines(result)


def decision_lines(result: AnalysisResult) -> list[str]:
    """The compatibility check (with a margin) and where a sequential audit stopped."""
    gate, lines = result.gate, []
    if gate.margin_pp is not None:
        lines.append(f"Compatibility within {gate.margin_pp:g} pp (all must hold for "
                     "COMPATIBLE):")
        lines += [f"  [{'x' if r.passed else ' '}] {r.rule}: {_pp(r.value)}"
                  for r in gate.compatibility]
    if result.sequential is not None:
        lines.append(sequential_line(result.sequential))
    return lines


def sequential_line(seq: Sequential) -> str:
    """E.g. "stopped at look 3 of 8: 150 of 400 questions, 2,000 of 3,200 answer calls not
    made"."""
    used, planned = seq.questions_used, seq.questions_planned
    head = (f"stopped at look {seq.looks_done} of {seq.looks_planned} ({seq.stop_reason})"
            if seq.stopped else f"every look taken ({seq.looks_done} of {seq.looks_planned}), "
                                "no claim established early")
    line = f"Sequential design: {head}: {used:,} of {planned:,} questions"
    calls = seq.calls()
    if calls is not None:
        line += f", {calls[1] - calls[0]:,} of {calls[1]:,} answer calls not made"
    return line


def ladder_table(result: AnalysisResult) -> list[str]:
    lad = result.ladder
    if lad is None:
        return []
    rows = [[f"{s.old} -> {s.new}", _pp(s.d_hat), str(s.flips)]
            for s in (*lad.steps, lad.endpoints)]
    lines = [f"Trajectory decomposition ({lad.kernel} D in pp; strict flips):",
             *_table(["step", "D", "flips"], rows)]
    for mid, counts in lad.middle.items():
        lines.append(f"  endpoint flips, middle state {mid}: "
                     + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for path, ids in lad.returns.items():
        lines.append(f"  returns {path} (X->Y->X): {len(ids)}")
    if lad.first_state is not None:
        lines.append(f"  endpoint flips vs first state {lad.states[0]}: "
                     + ", ".join(f"{k} {v}" for k, v in lad.first_state.items()))
    return lines


def utility_lines(result: AnalysisResult) -> list[str]:
    u = result.utility
    if u is None:
        return ["Utility: no gold given."]
    rows = [[s, _pp(x.em), _pp(x.f1), _pp(x.unknown), _pp(x.contains)]
            for s, x in u.states.items()]
    pair = f"{result.comparison.old} -> {result.comparison.new}"
    lines = ["Utility (%, over all questions and repeats; contains: the answer contains a "
             "gold answer):", *_table(["state", "EM", "F1", "UNKNOWN", "contains"], rows),
             f"EM delta {pair}: {u.em_delta:+.2f} pp"]
    if u.contains_delta is not None:
        lines.append(f"contains-gold delta {pair}: {u.contains_delta:+.2f} pp")
    return lines


def diagnostics_lines(result: AnalysisResult) -> list[str]:
    f = result.flips
    lines = [f"Strict flips ({f.kernel} kernel): {f.count}; contribution "
             f"{f.contribution_pp:.2f} pp, rest {f.rest_pp:.2f} pp"]
    if result.transitions:
        rows = [[k.replace("_", " "), *(_pp(t.percent()[k]) for t in result.transitions.values())]
                for k in CATEGORIES]
        lines += ["Matched-repeat EM transitions (% of comparisons):",
                  *_table(["transition", *result.transitions], rows)]
    o = result.overlap
    if o is not None:
        lines.append(f"Retrieval overlap (top-{o.k}): mean {o.mean:.3f} ({o.mean_docs:.2f} of "
                     f"{o.k} documents), zero {o.zero_rate:.2f}%,"
                     f" identical sets {o.identical}; flips {_pp(o.flips_mean, 3)} vs rest "
                     f"{_pp(o.rest_mean, 3)}" + _changed_text(result))
    j = result.judges
    if j is not None:
        lines.append(f"Judges {j.judges[0]} vs {j.judges[1]}: {j.pairs} pairs, agreement "
                     f"{j.agreement:.2f}% [{_pp(j.agreement_ci95[0])}, "
                     f"{_pp(j.agreement_ci95[1])}], kappa {_pp(j.kappa, 3)}, identical "
                     f"partitions {j.partitions_identical:.2f}%; D by judge: "
                     + ", ".join(f"{k} {_pp(v)}" for k, v in j.d_hat.items()))
    return lines


def _changed_text(result: AnalysisResult) -> str:
    o = result.overlap
    if o is None or o.changed is None:
        return ""
    return (f"; text changed under the same id: {o.changed} question(s), "
            f"{_pp(o.changed_docs)} documents per question")


def trajectory_lines(result: AnalysisResult) -> list[str]:
    """The trajectory kernels and the split of changed pairs (answers with steps only)."""
    t = result.trajectory
    if t is None:
        return []
    rows = [[name, _pp(k.within), _pp(k.cross), _pp(k.d_hat), _pp(k.lcb95),
             f"[{_pp(k.ci95[0])}, {_pp(k.ci95[1])}]"] for name, k in t.kernels.items()]
    return ["Excess trajectory churn (the agent's steps; Within/Cross agreement in %, "
            "D/LCB/CI in pp):",
            *_table(["kernel", "Within agreement", "Cross agreement", "D", "LCB95", "CI95"],
                    rows),
            *changed_lines(result)]


def conversation_lines(result: AnalysisResult) -> list[str]:
    """D of the exact kernel per turn of the conversations (answers with turns only)."""
    c = result.conversation
    if c is None:
        return []
    rows = [[name, str(t.questions), _pp(t.exact.within), _pp(t.exact.cross),
             _pp(t.exact.d_hat), _pp(t.exact.lcb95),
             f"[{_pp(t.exact.ci95[0])}, {_pp(t.exact.ci95[1])}]"]
            for name, t in [*((str(t.turn), t) for t in c.turns), ("final", c.final)]]
    return [f"Excess churn per conversation turn ({c.conversations} conversations; exact "
            "kernel; Within/Cross agreement in %, D/LCB/CI in pp):",
            *_table(["turn", "questions", "Within agreement", "Cross agreement", "D", "LCB95",
                     "CI95"], rows)]


def changed_lines(result: AnalysisResult) -> list[str]:
    """The split of the changed answer pairs and where old x new trajectories diverge."""
    t = result.trajectory
    if t is None:
        return []
    c, cross, within = t.changed_pairs, t.first_divergence.cross, t.first_divergence.within
    steps = ", ".join(f"step {j}: {n}" for j, n in cross.at_step.items()) or "none"
    return [f"Changed answer pairs {c.total}: same queries {c.same_queries} (index side), "
            f"different queries {c.different_queries} (agent side)",
            f"First divergence of old x new trajectories ({cross.pairs} pairs, identical "
            f"{cross.identical}): {steps}; same-state pairs identical {within.identical} of "
            f"{within.pairs}"]


def render_text(result: AnalysisResult, answers: Sequence[AnswerRow] | None = None,
                labels: Sequence[PairLabel] = ()) -> str:
    """The readable summary ``snapaudit analyze`` prints (with ``answers``: the questions
    that changed most)."""
    changes = change_lines(result, answers, labels) if answers is not None else []
    blocks = [churn_table(result) + reading_lines(result), trajectory_lines(result),
              conversation_lines(result),
              gate_lines(result), utility_lines(result), diagnostics_lines(result), changes,
              ladder_table(result), secondary_lines(result)]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def secondary_lines(result: AnalysisResult) -> list[str]:
    """Flip rates, paired utility deltas, the distribution test and Holm (secondary)."""
    sec = result.secondary
    lines: list[str] = []
    if sec.flip_rates is not None:
        rows = [[k.upper(), _pp(v.point), f"[{_pp(v.ci95[0])}, {_pp(v.ci95[1])}]"
                 if v.ci95 else "n/a"] for k, v in sec.flip_rates.rates.items()]
        lines += ["Flip rates against gold (% of matched comparisons; NFI/BTC/BEC ratios):",
                  *_table(["rate", "value", "CI95"], rows),
                  f"  negatively flipped questions: {len(sec.flip_rates.negative_question_ids)}"]
    if sec.utility_delta is not None:
        lines += [f"Paired {k.upper()} change: {d.point:+.2f} pp [{_pp(d.ci95[0])}, "
                  f"{_pp(d.ci95[1])}], P(change <= 0) {d.p_nonpositive:.4f}"
                  for k, d in sec.utility_delta.items()]
    if sec.distribution is not None:
        lines.append(f"Permutation test of equal answer distributions "
                     f"({sec.distribution.permutations} permutations): "
                     + ", ".join(f"{k} p = {v.p_value:.4f}"
                                 for k, v in sec.distribution.kernels.items()))
    if sec.multiplicity is not None:
        lines.append("Ladder steps, Holm-adjusted P(D <= 0) (secondary): "
                     + ", ".join(f"{t.old}->{t.new} {t.p_holm:.4f}"
                                 for t in sec.multiplicity.tests))
    return lines


def results_summary(record: RunResults, changes: Sequence[str] = (),
                    run_dir: str | Path | None = None) -> str:
    """The short summary ``run`` and ``demo`` print from the typed results: agreement and D
    per kernel, which kernel to read (sentence answers), the verdict (with its small-sample
    qualifier), the gate's rules, the decision (margin, looks), EM and contains-gold,
    warnings, the review and ``changes`` (:func:`snapaudit.report.top_changes.change_lines`)."""
    results = record.analysis
    lines = []
    for kernel, k in sorted(results.kernels.items()):
        lines.append(f"{kernel:<9} Within agreement {_pp(k.within)}%  Cross agreement "
                     f"{_pp(k.cross)}%  D {_signed(k.d_hat)} pp  lcb95 {_signed(k.lcb95)} pp  "
                     f"ucb95 {_signed(k.ucb95)} pp  "
                     f"95% CI [{_pp(k.ci95[0])}, {_pp(k.ci95[1])}]")
    if results.trajectory is not None:  # an agent's steps: the trajectory kernels too
        lines += [f"{name:<9} Within agreement {_pp(k.within)}%  Cross agreement "
                  f"{_pp(k.cross)}%  D {_signed(k.d_hat)} pp  lcb95 {_signed(k.lcb95)} pp  "
                  "(trajectory)" for name, k in results.trajectory.kernels.items()]
    lines += [AGREEMENT, *reading_lines(results, run_dir), *changed_lines(results),
              *conversation_lines(results)]
    v = results.verdict()
    lines.append(f"Verdict: {v.label}: {v.meaning}")
    if v.small_sample:
        lines.append(f"  {v.small_sample}; treat this verdict as provisional")
    for rule in results.gate.rules:
        note = f" ({rule.note})" if rule.note else ""
        lines.append(f"  [{'x' if rule.passed else ' '}] {rule.rule}: "
                     f"{_pp(rule.value)}{note}")
    lines += decision_lines(results)
    if results.utility is not None and results.utility.em_delta is not None:
        lines.append(f"EM change {results.utility.em_delta:+.2f} pp" + _contains(results))
    lines += [f"Warning ({w.code}): {w.message}" for w in record.warnings]
    review = record.review
    if review is not None:
        lines.append(f"Review: {review.reviewed} of {review.changed} changed "
                     f"questions reviewed; {review.regressions} regression(s), "
                     f"{review.improvements} improvement(s), {review.neutral} "
                     f"neutral, {review.unclear} unclear")
    lines += changes
    return "\n".join(lines) + "\n"


def run_summary(run_dir: str | Path, record: RunResults) -> str:
    """:func:`results_summary` of a finished run, with the questions that changed most."""
    return results_summary(record, run_change_lines(run_dir, record.analysis), run_dir)


def _contains(results: AnalysisResult) -> str:
    u, c = results.utility, results.comparison
    if u is None or u.contains_delta is None:
        return ""
    old, new = u.states[c.old].contains, u.states[c.new].contains
    return (f"; the answer contains a gold answer {_pp(old)}% -> {_pp(new)}% "
            f"({u.contains_delta:+.2f} pp)")


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.2f}"
