"""The report's "Sequential looks" section (``[design] looks = K``): each look's questions,
its boundary and nominal level, each gate kernel's D with its repeated bounds and the
decision, drawn over the questions used with zero and the margin."""

from __future__ import annotations

from snapaudit.report import figures
from snapaudit.report.model import Figure, Section, Table, num
from snapaudit.report.summary import sequential_line
from snapaudit.stats.sequential import Sequential


def looks_section(seq: Sequential | None) -> Section | None:
    if seq is None:
        return None
    kernels = list(seq.looks[0].kernels) if seq.looks else []
    rows = tuple((str(k.look), num(k.questions), num(k.boundary),
                  f"{100 * k.nominal:.3g} %",
                  *(f"{num(b.d_hat)} [{num(b.lcb)}, {num(b.ucb)}]"
                    for b in (k.kernels[name] for name in kernels)), k.decision)
                 for k in seq.looks)
    table = Table("Looks: D [repeated lower, upper bound] per gate kernel (pp)",
                  ("look", "questions", "boundary z", "nominal level",
                   *(f"{name} D" for name in kernels), "decision"), rows)
    points = [figures.Point(f"{name} look {k.look}", float(k.questions),
                            k.kernels[name].d_hat, k.kernels[name].lcb, k.kernels[name].ucb)
              for k in seq.looks for name in kernels]
    lines = [(seq.margin_pp, f"margin {seq.margin_pp:g} pp")] if seq.margin_pp else []
    svg = figures.scatter(points, "questions used", "excess churn D (pp)",
                          "D and its repeated bounds at each look", hlines=lines)
    par = (f"{sequential_line(seq)}. The cohort of {num(seq.questions_planned)} questions was "
           f"asked in {seq.looks_planned} blocks; after each block the gate was evaluated with "
           "repeated bounds whose one-sided level is the look's nominal level "
           f"({seq.spending}; each upper bound also counts one unseen question at the top "
           "of D_i's range, D_i = 1, so a block without a churning question cannot pass the "
           "margin), so the error of each claim holds over every look.")
    figure = Figure("D at each look with its repeated bounds" + (", and the margin"
                                                                 if lines else ""),
                    svg, table)
    return Section("Sequential looks", (par,), (), (figure,))
