"""The corpus paths of a testbed run (``[testbed.paths] count = K > 1``): the analysis's
ladder (path 0's states) and the ``paths`` section of ``results.json``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from snapaudit.run.record.protocol import Protocol
from snapaudit.tables import AnswerRow, PairLabel


def path_count(protocol: Protocol) -> int:
    return protocol.testbed.path_count if protocol.testbed is not None else 1


def ladders(protocol: Protocol) -> tuple[tuple[str, ...], ...]:
    """Each path's states (path 0: the protocol's own ladder)."""
    from snapaudit.testbed.paths import path_ladders

    tb = protocol.testbed
    assert tb is not None
    return path_ladders(protocol.states.order, tb.states, tb.path_count)


def analysis_ladder(protocol: Protocol) -> tuple[str, ...] | None:
    """The ladder ``analyze`` reports: every state, or path 0's states with corpus paths."""
    order = tuple(ladders(protocol)[0]) if path_count(protocol) > 1 else tuple(
        protocol.states.order)
    return order if len(order) > 2 else None


def orders(protocol: Protocol) -> tuple[tuple[int, ...], ...] | None:
    """The paths' shard orders, from the corpus's shard count (None: no corpus to read)."""
    from snapaudit.errors import SnapauditError
    from snapaudit.testbed.corpus.store import DocStore
    from snapaudit.testbed.paths import path_orders

    tb = protocol.testbed
    assert tb is not None and tb.paths is not None
    try:
        n = DocStore(tb.corpus).n_shards
    except (SnapauditError, OSError):
        return None
    return path_orders(n, tb.paths.count, tb.paths.seed)


def paths_section(protocol: Protocol, rows: Sequence[AnswerRow], labels: Sequence[PairLabel]
                  ) -> dict[str, Any] | None:
    """``results.json`` ``paths``: D per path and step, the path-averaged D with its
    two-stage interval, spread and path share (:mod:`snapaudit.stats.paths`); None for one
    path. The semantic kernel is included when the judge labelled every state's answers
    (``judge.scope = "all"``)."""
    if path_count(protocol) == 1:
        return None
    from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
    from snapaudit.stats.normalize import normalizer
    from snapaudit.stats.paths import paths_analysis

    grid = AnswerGrid.from_rows(rows)
    kernels: dict[str, Kernel] = {"exact": ExactKernel(grid, normalizer(protocol.gold.benchmark))}
    judge = protocol.judge
    if judge.kind != "none" and judge.scope == "all" and labels:
        kernels["semantic"] = SemanticKernel(labels, judge.name)
    result = paths_analysis(grid, kernels, ladders(protocol), protocol.states.old,
                            protocol.states.new, draws=protocol.bootstrap.draws,
                            seed=protocol.bootstrap.seed, orders=orders(protocol))
    return result.to_json()
