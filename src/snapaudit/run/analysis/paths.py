"""The corpus paths of a testbed run (``[testbed.paths] count = K > 1``): the analysis's
ladder (path 0's states) and the ``paths`` section of ``results.json``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from snapaudit.judge.registry import judge_kind
from snapaudit.run.record.protocol import Protocol, bound_fields
from snapaudit.stats.paths import PathsResult, paths_analysis
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


def corpus_shards(protocol: Protocol) -> int | None:
    """The corpus's shard count (None: no corpus to read)."""
    from snapaudit.errors import SnapauditError
    from snapaudit.testbed.corpus.store import DocStore

    assert protocol.testbed is not None
    try:
        return int(DocStore(protocol.testbed.corpus).n_shards)
    except (SnapauditError, OSError):
        return None


def paths_section(protocol: Protocol, rows: Sequence[AnswerRow], labels: Sequence[PairLabel]
                  ) -> PathsResult | None:
    """``results.json`` ``paths`` of a run (None for one path)."""
    if path_count(protocol) == 1:
        return None
    return paths_document(bound_fields(protocol), rows, labels, corpus_shards(protocol))


def paths_document(protocol: Mapping[str, Any], rows: Sequence[AnswerRow],
                   labels: Sequence[PairLabel], n_shards: int | None) -> PathsResult:
    """``paths`` from the bound protocol fields (a run's, or an artifact's protocol.json):
    D per path and step, the path-averaged D with its two-stage interval, spread and path
    share (:mod:`snapaudit.stats.paths`). The semantic kernel is included when the judge
    labelled every state's answers (``judge.scope = "all"``)."""
    from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
    from snapaudit.stats.normalize import normalizer
    from snapaudit.testbed.paths import path_ladders, path_orders

    tb, states = protocol["testbed"], protocol["states"]
    count, seed = int(tb["paths"]["count"]), int(tb["paths"].get("seed", 0))
    grid = AnswerGrid.from_rows(rows)
    kernels: dict[str, Kernel] = {
        "exact": ExactKernel(grid, normalizer(protocol["gold"].get("benchmark", "nq")))}
    judge = protocol.get("judge", {})
    if judge_kind(judge.get("kind", "none")).labels and judge.get("scope", "all") == "all" \
            and labels:
        kernels["semantic"] = SemanticKernel(labels, str(judge.get("name", "judge")))
    boot = protocol.get("bootstrap", {})
    return paths_analysis(grid, kernels, path_ladders(states["order"], tb["states"], count),
                          states["old"], states["new"], draws=int(boot.get("draws", 50_000)),
                          seed=int(boot.get("seed", 0)),
                          orders=path_orders(n_shards, count, seed) if n_shards else None)
