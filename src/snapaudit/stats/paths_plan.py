"""K corpus paths and n questions sized together for the path-averaged D.

Under the crossed random-effects model of :mod:`snapaudit.stats.paths` (D_ij = mu + a_j + b_i
+ e_ij: path effects a with SD sigma_p, question effects b with SD sigma_q, residual e with
SD sigma_e), the path-averaged D over K paths and n questions has variance

    Var = sigma_p^2 / K + sigma_q^2 / n + sigma_e^2 / (n K).

Its one-sided 95% lower bound exceeds 0 with power 1 - beta at a true D when
(z_0.95 + z_(1-beta))^2 Var <= D^2, so

    n >= (sigma_q^2 + sigma_e^2 / K) / ((D / z)^2 - sigma_p^2 / K),

and no n suffices while K <= sigma_p^2 z^2 / D^2 (more paths, not more questions, are needed:
``questions`` is None). The components come from a pilot with K >= 2 paths (``results.json``
``paths``: the endpoints' ``components``), or, for a one-path pilot, from its per-question
SD (all of it taken as question variance, an upper bound) and an assumed ``path_sd``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from snapaudit.stats.plan import LCB_ALPHA


@dataclass(frozen=True, slots=True)
class PathsNeed:
    target_d_pp: float
    paths: int
    questions: int | None  # None: K paths cannot reach the power at any n
    min_paths: int  # the fewest paths with which some n suffices


def paths_need(components: Mapping[str, float], targets_pp: Sequence[float],
               paths: Sequence[int], power: float = 0.8) -> list[PathsNeed]:
    """Questions needed for each (target D, K) from variance components (SDs in pp)."""
    z = NormalDist().inv_cdf(power) + NormalDist().inv_cdf(1 - LCB_ALPHA)
    sp, sq, se = (components.get(k, 0.0) ** 2 for k in ("path_sd", "question_sd",
                                                        "residual_sd"))
    out = []
    for d in targets_pp:
        floor = sp * z * z / (d * d)
        min_k = math.floor(floor) + 1
        for k in paths:
            room = (d / z) ** 2 - sp / k
            n = math.ceil((sq + se / k) / room) if room > 0 else None
            out.append(PathsNeed(d, k, max(n, 2) if n is not None else None, min_k))
    return out


def render_paths(rows: Sequence[PathsNeed], components: Mapping[str, float], power: float,
                 source: str) -> str:
    lines = [f"\ncorpus paths: questions for {power:.0%} power of the path-averaged D "
             f"(LCB95 > 0), from {source}: path SD {components.get('path_sd', 0.0):.2f} pp, "
             f"question SD {components.get('question_sd', 0.0):.2f} pp, residual SD "
             f"{components.get('residual_sd', 0.0):.2f} pp",
             "target D (pp)   paths K   questions   fewest paths"]
    for r in rows:
        n = f"{r.questions:,}" if r.questions is not None else "none suffice"
        lines.append(f"{r.target_d_pp:>13g}   {r.paths:>7d}   {n:>12}   {r.min_paths:>12d}")
    return "\n".join(lines) + "\n"


def paths_json(rows: Sequence[PathsNeed], components: Mapping[str, float],
               source: str) -> dict[str, object]:
    return {"components": dict(components), "source": source,
            "rows": [{"target_d": r.target_d_pp, "paths": r.paths, "questions": r.questions,
                      "min_paths": r.min_paths} for r in rows]}
