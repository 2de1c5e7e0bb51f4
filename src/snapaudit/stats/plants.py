"""How well an audit recovered the demo world's planted flips: recall and precision."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PlantScore:
    """Planted flips (regression, recovery, second reading) against the audit's strict flips."""

    planted: tuple[str, ...]
    flagged: tuple[str, ...]
    hits: tuple[str, ...]
    by_kind: dict[str, tuple[int, int]]  # kind -> (flagged, total)

    @property
    def recall(self) -> float | None:
        return len(self.hits) / len(self.planted) if self.planted else None

    @property
    def precision(self) -> float | None:
        return len(self.hits) / len(self.flagged) if self.flagged else None

    def to_json(self) -> dict[str, Any]:
        return {"planted": len(self.planted), "flagged": len(self.flagged),
                "hits": len(self.hits), "recall": self.recall, "precision": self.precision,
                "by_kind": {k: {"flagged": f, "total": t} for k, (f, t) in self.by_kind.items()}}


def score_plants(plants: Mapping[str, Mapping[str, Any]], flagged: Iterable[str]) -> PlantScore:
    """Score the audit's flagged questions against the plants (only questions in ``plants``)."""
    flagged_set = {q for q in flagged if q in plants}
    planted = sorted(q for q, p in plants.items() if p.get("expect_flip"))
    by_kind: dict[str, tuple[int, int]] = {}
    for qid, plant in sorted(plants.items()):
        kind = str(plant.get("kind"))
        got, total = by_kind.get(kind, (0, 0))
        by_kind[kind] = (got + (qid in flagged_set), total + 1)
    hits = tuple(q for q in planted if q in flagged_set)
    return PlantScore(tuple(planted), tuple(sorted(flagged_set)), hits,
                      dict(sorted(by_kind.items())))
