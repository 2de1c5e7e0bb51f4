"""``snapaudit attribute --dry-run``: the calls, tokens and cost of the counterfactuals still
to make, before any call.

Generations: one per pending (question, variant, repeat) cell. On a testbed run the prompt is
known exactly: the fixed system prompt and the question with the variant's rendered evidence
(at :data:`~snapaudit.run.after.dryrun.CHARS_PER_TOKEN` characters per token); the completion
is the generator's ``max_tokens``, an upper bound. A Python or HTTP system's prompt is its own:
its calls are counted, not priced. Judge packets (LLM judge): one per pending (question,
variant), holding the question's old and new answers as locked and the variant's ``repeats``
counterfactual answers as placeholders of the answer budget; completions as ``snapaudit run
--dry-run`` estimates them. A judge kind without a packet budget (the rule judge) is local:
counted, never priced. Cost uses
``[run.pricing]`` as ``snapaudit run --dry-run`` does.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from snapaudit.judge.registry import judge_kind
from snapaudit.run.after.dryrun import (
    StagePlan,
    answer_placeholder,
    packet_tokens,
    priced,
    tokens,
)
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.stages import attribution as stage
from snapaudit.run.stages.keys import AttributionJudgeKey, AttributionKey
from snapaudit.tables import AnswerRef

TOKENS_NOTE = ("tokens are estimates at 4 characters per token: generation prompts with their "
               "counterfactual evidence (testbed runs); completions at their max_tokens budget "
               "(an upper bound)")


def attribution_stages(protocol: Protocol, plans: Sequence[stage.QuestionPlan], repeats: int,
                       pending_answers: Collection[str], pending_judge: Collection[str],
                       answers: Mapping[tuple[str, str], Sequence[tuple[AnswerRef, str]]]
                       ) -> list[StagePlan]:
    """The attribution's pending calls as stages (``pending_*``: encoded cell keys;
    ``answers``: (question, "old"|"new") -> the locked answers of that endpoint)."""
    out = [_generations(protocol, plans, repeats, pending_answers)]
    if judge_kind(protocol.judge.kind).packets:
        out.append(_judge(protocol, plans, repeats, pending_judge, answers))
    return out


def _generations(protocol: Protocol, plans: Sequence[stage.QuestionPlan], repeats: int,
                 pending: Collection[str]) -> StagePlan:
    gen = protocol.generator
    testbed = protocol.system.kind == "testbed" and gen is not None
    calls = prompt = 0
    if testbed:
        from snapaudit.testbed.prompt import SYSTEM_PROMPT, user_message

        fixed = tokens(SYSTEM_PROMPT)
    for plan in plans:
        for name, evidence in plan.variants.items():
            keys = (AttributionKey(plan.question_id, name, r).encode()
                    for r in range(1, repeats + 1))
            todo = sum(k in pending for k in keys)
            calls += todo
            if testbed and todo:
                prompt += todo * (fixed + tokens(user_message(plan.question, evidence.rendered)))
    if not testbed:
        return StagePlan("answers", calls)
    assert gen is not None
    return priced(protocol, StagePlan("answers", calls, gen.model, prompt,
                                      calls * gen.max_tokens))


def _judge(protocol: Protocol, plans: Sequence[stage.QuestionPlan], repeats: int,
           pending: Collection[str],
           answers: Mapping[tuple[str, str], Sequence[tuple[AnswerRef, str]]]) -> StagePlan:
    judge = protocol.judge
    todo = [(plan, name) for plan in plans for name in plan.variants
            if AttributionJudgeKey(plan.question_id, name).encode() in pending]
    if not judge_kind(judge.kind).packet_budget or judge.generator is None:
        return StagePlan("judge", len(todo))
    placeholder = answer_placeholder(protocol)
    prompt = completion = 0
    for plan, name in todo:
        qid = plan.question_id
        p, c = packet_tokens(protocol, AttributionJudgeKey(qid, name).encode(),
                             plan.question,
                             [*answers[(qid, "old")], *answers[(qid, "new")],
                              *((AnswerRef(stage.CF_STATE, r), placeholder)
                                for r in range(1, repeats + 1))])
        prompt, completion = prompt + p, completion + c
    return priced(protocol, StagePlan("judge", len(todo), judge.generator.model, prompt,
                                      completion))
