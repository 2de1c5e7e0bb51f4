"""Read a run's ledger directly (plain sqlite3), independent of snapaudit's reader."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from itertools import combinations
from pathlib import Path
from typing import Any


def query(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        return list(db.execute(sql, params))


def accepted(db_path: Path, stage: str = "answer") -> dict[str, tuple[int, str]]:
    rows = query(db_path, "SELECT cell_key, attempt_id, payload FROM cells WHERE stage=?",
                 (stage,))
    return {k: (a, p) for k, a, p in rows}


def norm(text: str) -> str:
    """NQ normalization for the fake's simple answers: lower case, collapse spaces."""
    return " ".join(text.lower().split())


def d_from_ledger(db_path: Path, old: str, new: str) -> float:
    """Exact-kernel D in pp recomputed by hand from accepted answer cells."""
    by_q: dict[str, dict[str, dict[int, str]]] = {}
    for key, (_, payload) in accepted(db_path).items():
        qid, state, rep = key.rsplit("|", 2)
        by_q.setdefault(qid, {}).setdefault(state, {})[int(rep)] = norm(
            json.loads(payload)["answer"])
    ds = []
    for states in by_q.values():
        a, b = list(states[old].values()), list(states[new].values())
        w_old = sum(x == y for x, y in combinations(a, 2)) / len(list(combinations(a, 2)))
        w_new = sum(x == y for x, y in combinations(b, 2)) / len(list(combinations(b, 2)))
        c = sum(x == y for x in a for y in b) / (len(a) * len(b))
        ds.append((w_old + w_new) / 2 - c)
    return 100 * sum(ds) / len(ds)


def analysis(results: dict[str, Any]) -> dict[str, Any]:
    """``results.json`` without its metered ``usage`` (attempts differ between a resumed run
    and an uninterrupted one; the analysis must not)."""
    return {k: v for k, v in results.items() if k != "usage"}


def accepted_seeds(db_path: Path, design_seed: int, stage: str = "answer") -> dict[str, int]:
    """The seed each accepted cell of ``stage`` was answered with (the ledger stores the
    attempt numbers; the seed is derived from the design seed and the ledger's seed index)."""
    from snapaudit.run.execution.schedule import derive_seed
    from snapaudit.run.record.ledger import Ledger

    rows = query(db_path, "SELECT cell_key, attempt_no FROM attempts WHERE stage=? AND "
                 "outcome='accepted'", (stage,))
    with Ledger(db_path) as ledger:
        return {key: derive_seed(design_seed, stage, key, ledger.seed_index(stage, key, no))
                for key, no in rows}
