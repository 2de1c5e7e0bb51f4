"""What an analysis compares and how: :class:`AnalysisConfig` (a frozen dataclass, checked as
the pydantic model it was: the same fields, defaults, bounds and messages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from snapaudit.stats.bootstrap import DEFAULT_DRAWS, Method
from snapaudit.stats.fields import Checks
from snapaudit.stats.gate import GateConfig

Benchmark = Literal["nq", "triviaqa"]


@dataclass(frozen=True, slots=True)
class AnalysisConfig:
    """What to compare and how: old/new states, optional ladder, benchmark, bootstrap, gate."""

    old: str
    new: str
    ladder: tuple[str, ...] | None = None
    # the order states are reported in (the protocol's states.order); default: the ladder,
    # else old, new, then any other state by name
    states: tuple[str, ...] | None = None
    benchmark: Benchmark = "nq"
    draws: int = DEFAULT_DRAWS  # at least 100
    seed: int = 0
    # "exact": the exact bootstrap of every mean of gridded per-question values (D of each
    # kernel and ladder step, the EM change; stats/exact.py); "draws": Monte Carlo everywhere
    bootstrap: Method = "exact"
    gate: GateConfig = field(default_factory=GateConfig)
    primary_judge: str | None = None
    # permutations of the distribution test (stats/permutation.py); 0 skips it
    permutations: int = 10_000  # 0 or more
    # sequential looks (stats/sequential.py): 1 is the fixed design; with K > 1 the looks
    # split ``planned_questions`` (default: the table's questions) into K blocks
    looks: int = 1
    planned_questions: int | None = None

    def __post_init__(self) -> None:
        check = Checks(self)
        check.text("old")
        check.text("new")
        check.texts("ladder")
        check.texts("states")
        check.choice("benchmark", get_args(Benchmark))
        check.integer("draws", ge=100)
        check.integer("seed")
        check.choice("bootstrap", get_args(Method))
        if not isinstance(self.gate, GateConfig):
            check.fail("gate", f"must be a GateConfig, got {type(self.gate).__name__}")
        check.text("primary_judge", optional=True)
        check.integer("permutations", ge=0)
        check.integer("looks", ge=1)
        if self.planned_questions is not None:
            check.integer("planned_questions", ge=1)
        if not check.errors:
            self._check(check)
        check.done()

    def _check(self, check: Checks) -> None:
        """The rules across fields (named by the field ``""``)."""
        if self.old == self.new:
            check.fail("", "old and new must be different states")
        elif self.ladder is not None:
            if len(set(self.ladder)) != len(self.ladder) or len(self.ladder) < 2:
                check.fail("", "ladder must list at least 2 distinct states")
            elif self.old not in self.ladder or self.new not in self.ladder:
                check.fail("", "ladder must contain the old and new states")
        if self.looks > 1 and self.gate.kernels() - {"exact", "semantic"}:
            check.fail("", "a sequential design (looks > 1) gates on the answer kernels only; "
                       "a trajectory kernel (tools, queries, documents) cannot be a gate rule")
