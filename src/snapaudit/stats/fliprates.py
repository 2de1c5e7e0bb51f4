"""Flip rates against gold over the matched-repeat comparisons (repeat j old vs repeat j new).

Each of the n x r comparisons is match->match (MM), match->nonmatch (MN, a negative flip),
nonmatch->match (NM, a positive flip) or nonmatch->nonmatch (NN), by EM against gold. In
percent:

- NFR = 100 MN / (n r)                        negative flip rate
- PFR = 100 NM / (n r)                        positive flip rate
- NFI = 100 NFR / (100 - EM_new) = 100 MN / (MN + NN)   negative flip impact (share of the
  new state's nonmatches that were matches before)
- BTC = 100 MM / (MM + MN)                    backward trust compatibility
- BEC = 100 NN / (MN + NN)                    backward error compatibility (= 100 - NFI)

Intervals: the whole-question (or cluster) bootstrap of the per-question counts
[MM, MN, NM, NN] / r, all four resampled jointly; each draw's rate is computed from the drawn
sums, so ratio rates are ratios of sums (never means of per-question ratios). A rate whose
denominator is 0 is null; draws with a zero denominator are left out of its interval
(``numpy.nanpercentile``), and the interval is null when every draw is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from snapaudit.stats.bootstrap import BootstrapDraws, percentiles
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.codec import decode
from snapaudit.stats.matched import CELLS, matched_table
from snapaudit.stats.utility import GoldScores

RATES = ("nfr", "pfr", "nfi", "btc", "bec")


@dataclass(frozen=True, slots=True)
class Rate:
    point: float | None
    ci95: tuple[float, float] | None

    def to_json(self) -> dict[str, object]:
        return {"point": self.point, "ci95": list(self.ci95) if self.ci95 else None}


@dataclass(frozen=True)
class FlipRates:
    comparisons: int
    counts: dict[str, int]
    rates: dict[str, Rate]
    negative_question_ids: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {k: self.rates[k].to_json() for k in RATES}
        out["comparisons"] = self.comparisons
        out["counts"] = dict(self.counts)
        out["negative_question_ids"] = list(self.negative_question_ids)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FlipRates:
        return decode(cls, data, rates={k: decode(Rate, data[k]) for k in RATES})


def category_values(scores: GoldScores) -> np.ndarray:
    """(n, 4) per-question shares of the r comparisons: MM, MN, NM, NN."""
    shares: np.ndarray = matched_table(scores.em_old, scores.em_new) / scores.em_old.shape[1]
    return shares


def rates_of(sums: np.ndarray) -> dict[str, np.ndarray]:
    """Rates (percent) from sums or means of [MM, MN, NM, NN] along the last axis (NaN when
    a denominator is 0)."""
    mm, mn, nm, nn = (sums[..., k] for k in range(4))
    total = mm + mn + nm + nn
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"nfr": 100 * mn / total, "pfr": 100 * nm / total,
                "nfi": np.where(mn + nn > 0, 100 * mn / (mn + nn), np.nan),
                "btc": np.where(mm + mn > 0, 100 * mm / (mm + mn), np.nan),
                "bec": np.where(mn + nn > 0, 100 * nn / (mn + nn), np.nan)}


def flip_rates(scores: GoldScores, resampling: Resampling, draws: int, seed: int,
               drawn: BootstrapDraws | None = None) -> FlipRates:
    """The rates; ``drawn``: the bootstrap of :func:`category_values`, if already drawn."""
    values = category_values(scores)
    r = scores.em_old.shape[1]
    counts = np.rint(values.sum(axis=0) * r).astype(np.int64)
    point = rates_of(counts.astype(np.float64))
    if drawn is None:
        drawn = resampling.bootstrap(values, draws, seed)
    boot = rates_of(drawn.draws)
    rates = {}
    for k in RATES:
        p = float(point[k])
        ok = boot[k][~np.isnan(boot[k])]
        bounds = percentiles(ok, (2.5, 97.5)) if ok.size else None
        ci = (bounds[0], bounds[1]) if bounds else None
        rates[k] = Rate(None if np.isnan(p) else p, None if np.isnan(p) else ci)
    neg = tuple(q for q, v in zip(scores.question_ids, values[:, 1], strict=True) if v > 0)
    return FlipRates(int(counts.sum()), dict(zip(CELLS, (int(c) for c in counts), strict=True)),
                     rates, neg)
