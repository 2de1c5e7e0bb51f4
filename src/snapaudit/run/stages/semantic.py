"""The semantic-lock stage: pair labels from a file or a blind judge, one cell per question.

Packets hold the answers of the judge's scope (every state, or the endpoints); the stage
ends in the semantic lock over the judge's ledger content. ``pair_labels`` reads back the
labels of every judge that labelled this run (the protocol's judge, then judge audits).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

from snapaudit.errors import InputError
from snapaudit.hashing import sha256_file
from snapaudit.judge.registry import judge_kind
from snapaudit.run.record import cohort
from snapaudit.run.stages.base import Stage, run_stage
from snapaudit.run.stages.batch_calls import BatchCalls
from snapaudit.run.stages.judge import judge_cells, labels_of_stage
from snapaudit.run.stages.keys import JudgeKey
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

if TYPE_CHECKING:
    from snapaudit.run.context import RunContext as Run


async def semantic_stage(run: Run, answers: Sequence[AnswerRow]) -> None:
    cfg = run.protocol.judge
    kind = judge_kind(cfg.kind)
    if kind.from_file:
        _import_labels(run, answers)
    elif kind.packets:
        await _judge_questions(run, answers)
    semantic = {"judge_kind": cfg.kind, **run.ledger.content_hashes(run.judge_stage)}
    run.lock("semantic", semantic)


def _scope_answers(run: Run, answers: Sequence[AnswerRow]) -> dict[str, list[AnswerRow]]:
    keep = set(run.protocol.states.order)
    if run.protocol.judge.scope == "endpoints":
        keep = {run.protocol.states.old, run.protocol.states.new}
    out: dict[str, list[AnswerRow]] = {q.question_id: [] for q in run.questions}
    for row in answers:
        if row.state in keep:
            out[row.question_id].append(row)
    return out


def _import_labels(run: Run, answers: Sequence[AnswerRow]) -> None:
    from snapaudit.tables import read_labels

    cfg = run.protocol.judge
    path = cohort.resolve(str(cfg.labels_path), run.base_dir)
    labels = read_labels(path, answers)
    names = {lab.judge for lab in labels}
    chosen = [lab for lab in labels if lab.judge == cfg.name] or (
        labels if len(names) == 1 else [])
    if not chosen:
        raise InputError(f"no labels from judge {cfg.name!r} (found {sorted(names)})",
                         path=str(path))
    given = {(lab.question_id, *sorted((lab.a, lab.b))): lab.same for lab in chosen}
    payloads: dict[str, dict[str, Any]] = {}
    missing: list[str] = []
    for qid, rows in _scope_answers(run, answers).items():
        refs = sorted(AnswerRef(r.state, r.repeat) for r in rows)
        items = []
        for a, b in combinations(refs, 2):
            same = given.get((qid, a, b))
            if same is None:
                missing.append(f"{qid} {a.state}/{a.repeat}-{b.state}/{b.repeat}")
            items.append({"a": [a.state, a.repeat], "b": [b.state, b.repeat], "same": same})
        payloads[JudgeKey(qid).encode()] = {"labels": items}
    if missing:
        raise InputError(f"labels do not cover {len(missing)} pair(s), e.g. "
                         + "; ".join(missing[:5]), path=str(path))
    request_hash = sha256_file(path)
    done = run.ledger.accepted_keys(run.judge_stage)
    for key, payload in payloads.items():
        if key not in done:
            aid = run.ledger.begin_attempt(run.judge_stage, key, request_hash)
            run.ledger.finish_and_accept(run.judge_stage, key, aid, payload)


async def _judge_questions(run: Run, answers: Sequence[AnswerRow]) -> None:
    from snapaudit.judge.registry import build_judge

    cfg = run.protocol.judge
    if cfg.prompt == "auto":
        cfg = cfg.model_copy(update={"prompt": run.protocol.answers.kind})
    judge = build_judge(cfg, run.resources)
    batch = BatchCalls(run.protocol)  # run.mode = "batch": provider batch APIs
    text = {q.question_id: q.question for q in run.questions}
    cells = [cell for qid, rows in _scope_answers(run, answers).items()
             for cell in judge_cells(judge, qid, text[qid],
                                     [(AnswerRef(r.state, r.repeat), r.answer) for r in rows],
                                     run.protocol.design.seed, cfg.max_packet_tokens, batch)]
    try:
        await run_stage(run.ledger, Stage(run.judge_stage, cells, model=judge.model),
                        run.policy(), run.progress, run.protocol.run)
    finally:
        await judge.aclose()


def pair_labels(run: Run) -> list[PairLabel]:
    """Accepted pair labels from the ledger: the protocol's judge first, then every other
    judge that labelled this run's answers (``judge-audit`` stages ``judge:<name>``)."""
    others = sorted(s for s in run.ledger.stages()
                    if s.startswith("judge:") and s != run.judge_stage)
    return [lab for stage in [run.judge_stage, *others]
            for lab in labels_of_stage(run.ledger, stage.removeprefix("judge:"), stage)]
