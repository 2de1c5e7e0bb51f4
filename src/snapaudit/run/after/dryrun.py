"""``snapaudit run --dry-run``: the calls, tokens and cost of a run, before any call is made.

Calls per stage follow from the protocol and the cohort: answers = questions x states x
repeats; retrieval passes (testbed) = 2 x questions x states (with ``[testbed.paths]``
every path's states are states of the protocol, so K paths multiply the calls of the states
they do not share); judge packets (LLM judge) = one
per question. Tokens are estimates: prompt tokens from the rendered prompts (the fixed system
prompt and the question; the judge packet rendered with placeholder answers of the
answer budget's length; retrieved evidence is only known after retrieval and is not counted),
at :data:`CHARS_PER_TOKEN` characters per token; completion tokens are the ``max_tokens``
budgets, an upper bound. Cost uses ``[run.pricing]`` (USD per million tokens per model, and
the provider's batch discount).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapaudit.judge.registry import judge_kind
from snapaudit.run.record import cohort
from snapaudit.run.record.protocol import Protocol

if TYPE_CHECKING:
    from snapaudit.tables import AnswerRef

CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True, slots=True)
class StagePlan:
    stage: str
    calls: int
    model: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    batch_cost_usd: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "calls": self.calls, "model": self.model,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost_usd": self.cost_usd,
                "batch_cost_usd": self.batch_cost_usd}


def tokens(text: str) -> int:
    """Estimated tokens of ``text`` (:data:`CHARS_PER_TOKEN` characters per token)."""
    return round(len(text) / CHARS_PER_TOKEN)


def plan(protocol: Protocol, base: Path) -> list[StagePlan]:
    """The stages of a fresh run of ``protocol`` (paths resolve against ``base``)."""
    questions = cohort.select(protocol.cohort, base)["questions"]
    states, r = protocol.states.order, protocol.design.repeats
    n = len(questions)
    out: list[StagePlan] = []
    gen = protocol.generator
    if protocol.system.kind == "testbed":
        out.append(StagePlan("retrieval", 2 * n * len(states)))
        from snapaudit.testbed.prompt import SYSTEM_PROMPT, user_message

        prompt = sum(tokens(SYSTEM_PROMPT) + tokens(user_message(q["question"], None))
                     for q in questions) * len(states) * r
        model = gen.model if gen else None
        budget = gen.max_tokens if gen else 128
        out.append(priced(protocol, StagePlan("answers", n * len(states) * r, model, prompt,
                                              n * len(states) * r * budget)))
    else:
        out.append(StagePlan("answers", n * len(states) * r))
    judge = protocol.judge
    if judge_kind(judge.kind).packet_budget and judge.generator is not None:
        scope = len(states) if judge.scope == "all" else 2
        out.append(priced(protocol, _judge_plan(protocol, questions, scope * r)))
    return out


def paths_notes(protocol: Protocol) -> list[str]:
    """What the dry run says about ``[testbed.paths]``: K paths and the states they add."""
    tb = protocol.testbed
    if tb is None or tb.path_count == 1:
        return []
    order = protocol.states.order
    shared = [s for s in order if tb.states.get(s) == 0]
    per_path = (len(order) - len(shared)) // tb.path_count
    return [f"corpus paths: {tb.path_count} (testbed.paths), {len(order)} states = "
            f"{len(shared)} shared ({', '.join(shared) or 'none'}) + {tb.path_count} x "
            f"{per_path}; every count above is for all {tb.path_count} paths "
            f"({len(order)} states, one path alone: {len(shared) + per_path})"]


def _judge_plan(protocol: Protocol, questions: list[dict[str, Any]], m: int) -> StagePlan:
    from snapaudit.tables import AnswerRef

    judge = protocol.judge
    assert judge.generator is not None
    placeholder = answer_placeholder(protocol)
    prompt = completion = 0
    for q in questions:
        p, c = packet_tokens(protocol, q["question_id"], q["question"],
                             [(AnswerRef(f"s{i}", 1), placeholder) for i in range(m)])
        prompt, completion = prompt + p, completion + c
    return StagePlan("judge", len(questions), judge.generator.model, prompt, completion)


def answer_placeholder(protocol: Protocol) -> str:
    """A stand-in for an answer not yet given: the answer budget's length in characters."""
    answer_budget = protocol.generator.max_tokens if protocol.generator else 32
    return "x" * int(answer_budget * CHARS_PER_TOKEN)


def packet_tokens(protocol: Protocol, packet_id: str, question: str,
                  answers: Sequence[tuple[AnswerRef, str]]) -> tuple[int, int]:
    """(prompt, completion) token estimates of one blind judge packet of ``answers``: the
    rendered prompt, and 64 tokens plus ``tokens_per_pair`` for every pair."""
    from snapaudit.judge.packets import build_packet
    from snapaudit.judge.prompt import SYSTEM, render_user

    packet, _ = build_packet(packet_id, question, answers, protocol.design.seed)
    m = len(answers)
    return (tokens(SYSTEM) + tokens(render_user(packet)),
            64 + protocol.judge.tokens_per_pair * (m * (m - 1) // 2))


def priced(protocol: Protocol, stage: StagePlan) -> StagePlan:
    """``stage`` with its cost from ``[run.pricing]`` (unchanged when its model has no price)."""
    price = protocol.run.pricing.get(stage.model or "")
    if price is None:
        return stage
    cost = (stage.prompt_tokens * price.input_per_mtok
            + stage.completion_tokens * price.output_per_mtok) / 1e6
    return StagePlan(stage.stage, stage.calls, stage.model, stage.prompt_tokens,
                     stage.completion_tokens, round(cost, 6),
                     round(cost * (1 - price.batch_discount), 6))


TOKENS_NOTE = ("tokens are estimates: prompts at 4 characters per token without retrieved "
               "evidence; completions at their max_tokens budget (an upper bound)")


def render(stages: Sequence[StagePlan], notes: Sequence[str] = (),
           tokens_note: str = TOKENS_NOTE) -> str:
    """The plan as a text table (what ``snapaudit run --dry-run`` prints), then
    ``tokens_note`` and ``notes`` (e.g. :func:`snapaudit.run.dialect.dry_run_notes`)."""
    lines = ["stage       calls      model                     prompt tok  completion tok"
             "     cost USD  batch USD"]
    for s in stages:
        cost = f"{s.cost_usd:12.4f}" if s.cost_usd is not None else f"{'-':>12}"
        batch = f"{s.batch_cost_usd:10.4f}" if s.batch_cost_usd is not None else f"{'-':>10}"
        lines.append(f"{s.stage:<10}{s.calls:>7,}      {(s.model or '-'):<24}"
                     f"{s.prompt_tokens:>12,}{s.completion_tokens:>16,} {cost} {batch}")
    total = [s.cost_usd for s in stages if s.cost_usd is not None]
    if total:
        lines.append(f"total priced cost: {sum(total):.4f} USD "
                     f"(batch: {sum(s.batch_cost_usd or 0.0 for s in stages):.4f} USD)")
    lines.append(tokens_note)
    lines.extend(notes)
    return "\n".join(lines) + "\n"
