"""The attribution stage: counterfactual evidence lists answered by the new state's
generator, then judged against the question's old and new answers.

Two ledger stages: ``attribution`` holds one answer cell per (question, variant, repeat),
key ``qid|variant|repeat`` (variants of :func:`snapaudit.stats.attribution.counterfactual_lists`),
request ``{"question_id", "variant", "repeat", "doc_ids", "evidence": sha256(rendered)}``,
payload as an answer cell's; ``attribution:judge:<judge>`` one blind packet per
(question, variant), key ``qid|variant``, holding the old answers, the new answers and the
variant's answers (state :data:`CF_STATE`), payload as a judge cell's. The keys are the one
codec's (:class:`~snapaudit.run.stages.keys.AttributionKey`, ``AttributionJudgeKey``); the
cells are built by the answer and judge cell code (:func:`~snapaudit.run.stages.answer.answer_cell`
with a seed hook, :func:`~snapaudit.run.stages.judge.judge_cell`) and executed by
:func:`~snapaudit.run.stages.base.run_stage`.

Common random numbers: the first attempt of a counterfactual cell draws with the seed that
the answer of the same question and repeat was drawn with in the state the variant is built
from (:func:`reference_side`: ``suff``/``set-in`` edit O, so the old state's seed; ``nec``/
``set-out`` edit N, so the new state's). A counterfactual answer then differs from that
state's answer only through its evidence, not through the draw. A retry after an unusable
response draws the stage's own next seed (:func:`~snapaudit.run.execution.schedule.derive_seed`
with the stage name as tag). The request binds the seed. The verdict table is
:func:`snapaudit.stats.attribution.attribute_question` over the accepted cells.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snapaudit.hashing import sha256_json
from snapaudit.judge.base import Judge
from snapaudit.judge.packets import LABELS, build_packet
from snapaudit.run.execution.schedule import derive_seed
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.stages.answer import SeedHook, answer_cell
from snapaudit.run.stages.base import Cell
from snapaudit.run.stages.judge import judge_cell
from snapaudit.run.stages.keys import AnswerKey, AttributionJudgeKey, AttributionKey
from snapaudit.run.stages.payloads import decode_labels
from snapaudit.stats.attribution import Agreement, counterfactual_lists, majority_agreement
from snapaudit.systems.base import AnswerCall, Evidence, System
from snapaudit.tables import AnswerRef, AnswerRow
from snapaudit.testbed.render import join_blocks, split_blocks

STAGE = "attribution"
CF_STATE = "~counterfactual"  # the counterfactual answers' state in a blind packet


def judge_stage(judge: str) -> str:
    return f"{STAGE}:judge:{judge}"


@dataclass(frozen=True, slots=True)
class QuestionPlan:
    """One flagged question: its locked evidence in both states and its counterfactuals."""

    question_id: str
    question: str
    flip: bool
    old: tuple[str, ...]
    new: tuple[str, ...]
    variants: dict[str, Evidence]


def plan_question(question_id: str, question: str, flip: bool, old: Evidence,
                  new: Evidence) -> QuestionPlan:
    """The counterfactual evidence of one question, rendered from the blocks of O and N."""
    blocks = {**split_blocks(old.rendered, old.doc_ids), **split_blocks(new.rendered,
                                                                        new.doc_ids)}
    variants = {name: Evidence(ids, join_blocks([blocks[d] for d in ids]))
                for name, ids in counterfactual_lists(old.doc_ids, new.doc_ids).items()}
    return QuestionPlan(question_id, question, flip, old.doc_ids, new.doc_ids, variants)


def reference_side(variant: str) -> str:
    """``"old"`` for the variants that edit O (``suff<i>``, ``set-in``), else ``"new"``."""
    return "old" if variant.startswith(("suff", "set-in")) else "new"


def state_seeds(ledger: Ledger, design_seed: int, states: Sequence[str]
                ) -> dict[tuple[str, str, int], int]:
    """(question, state, repeat) -> the seed its accepted answer was drawn with."""
    out: dict[tuple[str, str, int], int] = {}
    for cell in ledger.cells("answer"):
        key = AnswerKey.decode(cell.cell_key)
        if key.state in states:
            index = ledger.seed_index("answer", cell.cell_key, ledger.attempt_no(cell.attempt_id))
            out[(key.question_id, key.state, key.repeat)] = derive_seed(
                design_seed, "answer", cell.cell_key, index)
    return out


def answer_cells(system: System, states: tuple[str, str], plans: Sequence[QuestionPlan],
                 repeats: int, max_bytes: int, seeds: Mapping[tuple[str, str, int], int],
                 design_seed: int) -> list[Cell[AttributionKey]]:
    """Every counterfactual answer cell, question by question, variant by variant, answered
    by ``system`` (the new state's); ``states`` = (old, new), ``seeds`` as
    :func:`state_seeds` gives them."""
    cells: list[Cell[AttributionKey]] = []
    for plan in plans:
        for variant, evidence in plan.variants.items():
            ref = states[0] if reference_side(variant) == "old" else states[1]
            for repeat in range(1, repeats + 1):
                key = AttributionKey(plan.question_id, variant, repeat)
                asked = AnswerCall(plan.question_id, plan.question, states[1], repeat, 0, 0,
                                   evidence)
                seed = seeds[(plan.question_id, ref, repeat)]
                extra = {"doc_ids": list(evidence.doc_ids),
                         "evidence": sha256_json(evidence.rendered),
                         "seed": {"state": ref, "seed": seed}}
                cells.append(answer_cell(system, key, asked, max_bytes, extra=extra,
                                         seed_of=edited_seed(design_seed, key, seed),
                                         steps=False))
    return cells


def edited_seed(design_seed: int, key: AttributionKey, reference_seed: int) -> SeedHook:
    """The seed hook of a counterfactual cell: its first seed index draws with the reference
    state's seed (common random numbers), a later one with the stage's own seed."""
    first = derive_seed(design_seed, STAGE, key.encode(), 1)
    return lambda seed: reference_seed if seed == first else seed


Payloads = Iterable[tuple[str, Mapping[str, Any]]]  # (cell key, payload) of accepted cells


def ledger_cells(ledger: Ledger, stage: str) -> list[tuple[str, dict[str, Any]]]:
    return [(cell.cell_key, cell.payload) for cell in ledger.cells(stage)]


def counterfactual_answers(cells: Payloads) -> dict[tuple[str, str], dict[int, str]]:
    """(question, variant) -> repeat -> accepted counterfactual answer, from the
    ``attribution`` cells."""
    out: dict[tuple[str, str], dict[int, str]] = {}
    for cell_key, payload in cells:
        key = AttributionKey.decode(cell_key)
        out.setdefault((key.question_id, key.variant), {})[key.repeat] = str(payload["answer"])
    return out


def judge_tables(cells: Payloads, judge: str
                 ) -> dict[tuple[str, str], dict[tuple[AnswerRef, AnswerRef], bool]]:
    """(question, variant) -> answer pair (both orders) -> the judge's label, from the
    ``attribution:judge:<judge>`` cells."""
    out: dict[tuple[str, str], dict[tuple[AnswerRef, AnswerRef], bool]] = {}
    for cell_key, payload in cells:
        key = AttributionJudgeKey.decode(cell_key)
        table = out.setdefault((key.question_id, key.variant), {})
        for lab in decode_labels(key.question_id, payload, judge):
            table[(lab.a, lab.b)] = table[(lab.b, lab.a)] = lab.same
    return out


def endpoint_answers(rows: Iterable[AnswerRow], old: str, new: str
                     ) -> dict[tuple[str, str], list[tuple[AnswerRef, str]]]:
    """(question, "old"|"new") -> the locked answers of that endpoint, repeat order."""
    out: dict[tuple[str, str], list[tuple[AnswerRef, str]]] = {}
    for r in sorted(rows, key=lambda r: (r.question_id, r.state, r.repeat)):
        out.setdefault((r.question_id, "old"), [])
        out.setdefault((r.question_id, "new"), [])
        if r.state in (old, new):
            out[(r.question_id, "old" if r.state == old else "new")].append(
                (AnswerRef(r.state, r.repeat), r.answer))
    return out


def judge_cells(judge: Judge, plans: Sequence[QuestionPlan],
                answers: Mapping[tuple[str, str], Sequence[tuple[AnswerRef, str]]],
                cf: Mapping[tuple[str, str], Mapping[int, str]], seed: int
                ) -> list[Cell[AttributionJudgeKey]]:
    """One blind packet per (question, variant): old, new and counterfactual answers.
    ``answers``: (question, "old"|"new") -> the locked answers of that endpoint. The packet
    is built for the id ``qid|variant`` (its own label permutation), never split."""
    cells: list[Cell[AttributionJudgeKey]] = []
    for plan in plans:
        qid = plan.question_id
        base = [*answers[(qid, "old")], *answers[(qid, "new")]]
        for variant in plan.variants:
            mine = [(AnswerRef(CF_STATE, r), a) for r, a in sorted(cf[(qid, variant)].items())]
            if len(base) + len(mine) > len(LABELS):
                raise ValueError(f"question {qid}: {len(base) + len(mine)} answers do not fit "
                                 f"one judge packet ({len(LABELS)} at most)")
            key = AttributionJudgeKey(qid, variant)
            packet = build_packet(key.encode(), plan.question, [*base, *mine], seed)
            cells.append(judge_cell(judge, key, packet))
    return cells


def agreements(cf: Mapping[tuple[str, str], Mapping[int, str]],
               labelled: Mapping[tuple[str, str], Mapping[tuple[AnswerRef, AnswerRef], bool]],
               same_text: Callable[[str, str], bool], variants: Mapping[str, Iterable[str]],
               answers: Mapping[tuple[str, str], Sequence[tuple[AnswerRef, str]]]
               ) -> dict[str, dict[str, list[Agreement]]]:
    """question -> variant -> one Agreement per repeat: a counterfactual answer agrees with
    an endpoint answer when their normalized texts are equal (the exact kernel) or the judge
    labelled the pair the same. ``variants``: question -> its variant names."""
    out: dict[str, dict[str, list[Agreement]]] = {}
    for qid, names in variants.items():
        for variant in names:
            table = labelled.get((qid, variant), {})
            row = []
            for repeat, text in sorted(cf.get((qid, variant), {}).items()):
                me = AnswerRef(CF_STATE, repeat)
                row.append(majority_agreement(
                    [same_text(text, a) or table.get((me, r), False)
                     for r, a in answers[(qid, "old")]],
                    [same_text(text, a) or table.get((me, r), False)
                     for r, a in answers[(qid, "new")]]))
            out.setdefault(qid, {})[variant] = row
    return out
