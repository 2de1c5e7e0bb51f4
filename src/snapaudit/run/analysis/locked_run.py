"""The locked run a review reads: answers, the primary judge's labels, gold once unlocked.

Read from the ledger (accepted cells, checked when the ledger opens) and the cohort manifest,
never from the derived tables, except ``tables/gold.jsonl``, read only once the gold lock
exists. A review is *bound* to the stored hash of the semantic lock: the lock chain links it
to the answer lock, so the hash names exactly the answers and labels the review saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from snapaudit.errors import ConfigError
from snapaudit.judge.registry import judge_kind
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.locks import verify_chain
from snapaudit.run.record.review_items import (
    BlindAnswer,
    blind_order,
    item_pairs,
    shown_sha256,
)
from snapaudit.run.record.rundir import RunDir
from snapaudit.run.stages.answer import answer_rows
from snapaudit.run.stages.judge import labels_of_stage
from snapaudit.run.stages.judge_audit import audit_sample
from snapaudit.stats.changes import listed_questions
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
from snapaudit.stats.normalize import normalizer
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel, read_gold

DEFAULT_SAMPLE = 50


def bound_hash(ledger: Ledger) -> tuple[str, int]:
    """The stored hash of the semantic lock and the chain's length (ConfigError when the
    answer or semantic lock is missing; IntegrityError when the chain does not verify)."""
    stored = ledger.locks()
    records = verify_chain(stored)
    stages = [r.stage for r in records]
    if "answer" not in stages or "semantic" not in stages:
        raise ConfigError("the run's answer and semantic stages are not locked yet: finish "
                          "them with `snapaudit run` before a review")
    return stored[stages.index("semantic")][1], len(stages)


@dataclass(frozen=True, slots=True)
class ChangeRow:
    """What one change item shows (the decision is the session's)."""

    question_id: str
    question: str
    old: tuple[str, ...]
    new: tuple[str, ...]
    gold: tuple[str, ...] | None
    d_i: float
    shown_sha256: str


@dataclass
class LockedRun:
    """The review's view of one locked run."""

    rd: RunDir
    old: str
    new: str
    seed: int
    primary: str | None
    benchmark: str
    bound: str
    chain_length: int
    questions: dict[str, str]
    answers: list[AnswerRow]
    primary_labels: list[PairLabel]
    gold: dict[str, tuple[str, ...]] | None
    _by_q: dict[str, list[PairLabel]] = field(default_factory=dict, repr=False)
    _changes: list[ChangeRow] | None = field(default=None, repr=False)

    @classmethod
    def load(cls, rd: RunDir) -> LockedRun:
        ledger = rd.ledger()
        bound, length = bound_hash(ledger)
        protocol = rd.load_protocol()
        manifest = cohort.read_manifest(rd.cohort_path)
        judge = protocol.judge.name if judge_kind(protocol.judge.kind).labels else None
        labels = labels_of_stage(ledger, judge) if judge is not None else []
        run = cls(rd, protocol.states.old, protocol.states.new, protocol.design.seed, judge,
                  protocol.gold.benchmark, bound, length,
                  {q.question_id: q.question for q in manifest},
                  answer_rows(ledger, manifest), labels, None)
        run.reload_gold()
        for lab in labels:
            run._by_q.setdefault(lab.question_id, []).append(lab)
        return run

    def reload_gold(self) -> None:
        """Read the gold when the gold lock exists (and the chain's length now)."""
        self.bound, self.chain_length = bound_hash(self.rd.ledger())
        gold_locked = any(rec["stage"] == "gold" for rec, _ in self.rd.ledger().locks())
        path = self.rd.table("gold")
        self.gold = read_gold(path, "jsonl") if gold_locked and path.exists() else None
        self._changes = None

    # ------------------------------------------------------------ blind labels

    def sample(self, n: int | None) -> list[str]:
        """The outcome-blind hash sample of the judge audit over the labelled questions."""
        if not self._by_q:
            raise ConfigError("the run has no labels of a primary judge: there is nothing "
                              "to label blind (a run with judge kind \"none\")")
        size = DEFAULT_SAMPLE if n is None else n
        if size < 1:
            raise ConfigError(f"the label sample needs at least 1 question, not {size}")
        return audit_sample(sorted(self._by_q), size, self.seed)

    def items(self, qid: str) -> dict[str, AnswerRef]:
        """Item name -> answer: the answers the primary judge labelled, blind-permuted."""
        refs = sorted({r for lab in self._by_q.get(qid, []) for r in (lab.a, lab.b)})
        return blind_order(qid, refs, self.seed)

    def blind(self, qid: str) -> tuple[tuple[BlindAnswer, ...], tuple[str, ...]]:
        items = self.items(qid)
        grid_answers = {(r.state, r.repeat): r.answer for r in self.answers
                        if r.question_id == qid}
        answers = tuple(BlindAnswer(k, grid_answers[(ref.state, ref.repeat)])
                        for k, ref in items.items())
        return answers, item_pairs(list(items))

    # ------------------------------------------------------------ change review

    def grid(self) -> AnswerGrid:
        return AnswerGrid.from_rows(self.answers)

    def kernel(self, grid: AnswerGrid) -> Kernel:
        if self.primary is not None and self.primary_labels:
            return SemanticKernel(self.primary_labels, self.primary)
        return ExactKernel(grid, normalizer(self.benchmark))

    def changes(self) -> list[ChangeRow]:
        """Every question the comparison view lists, largest |D_i| first, then by id (kept
        until the gold is read again)."""
        if self._changes is not None:
            return self._changes
        grid = self.grid()
        listed = listed_questions(grid, self.kernel(grid), self.old, self.new,
                                  normalizer(self.benchmark))
        rows = [self.change_row(grid, qid, d) for qid, d in listed]
        rows.sort(key=lambda r: (-abs(r.d_i), r.question_id))
        self._changes = rows
        return rows

    def change_row(self, grid: AnswerGrid, qid: str, d_i: float) -> ChangeRow:
        old = _texts(grid, qid, self.old)
        new = _texts(grid, qid, self.new)
        gold = self.gold.get(qid) if self.gold is not None else None
        question = self.questions.get(qid, "")
        return ChangeRow(qid, question, old, new, gold, d_i,
                         shown_sha256(qid, question, self.old, self.new, old, new, gold))


def _texts(grid: AnswerGrid, qid: str, state: str) -> tuple[str, ...]:
    refs: Sequence[AnswerRef] = sorted(grid.refs(state), key=lambda r: r.repeat)
    return tuple(grid.answer(qid, r) for r in refs)
