"""Tokens and cost a run actually used, per ledger stage (``results.json`` key ``usage``).

Counts come from the ledger's attempts: every attempt of a stage, retries and failed calls
included, with the token counts its provider reported (``prompt_tokens``,
``completion_tokens``; services that report none count 0, and ``attempts_with_usage`` says how
many did). Cost uses ``[run.pricing]`` for the model the stage's calls are billed for, as the
stage recorded it when it ran (:func:`~snapaudit.run.stages.base.run_stage`: the generator of
``answer``, of replication and of attribution; a judge's generator for ``judge:<name>``, the
judge audit's and the counterfactuals' packets), with the batch discount on the tokens
of the attempts that went through a provider batch (their meta names the batch). Usage is
metered, not derived from the answers: the artifact verifier does not recompute it, and it is
not a claim. The stages ``human:NAME`` (people's labels, ``snapaudit review``) make no calls
and are left out.
"""

from __future__ import annotations

from snapaudit.judge.registry import judge_model
from snapaudit.results.sections import StageUsage, Usage
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.stages.base import recorded_models
from snapaudit.stats.human import HUMAN_PREFIX


def stage_models(ledger: Ledger, protocol: Protocol) -> dict[str, str]:
    """Ledger stage -> the model id billed for its calls (stages without a model omitted):
    as recorded by the stages, else (a run begun before they recorded it) the protocol's
    generator for ``answer`` and its judge's for ``judge:<name>``."""
    out: dict[str, str] = {}
    if protocol.system.kind == "testbed" and protocol.generator is not None:
        out["answer"] = protocol.generator.model
    model = judge_model(protocol.judge)
    if model is not None:
        out[f"judge:{protocol.judge.name}"] = model
    return {**out, **recorded_models(ledger)}


def usage_summary(ledger: Ledger, protocol: Protocol) -> Usage:
    """Every stage of this run's ledger with attempts, and their total."""
    models = stage_models(ledger, protocol)
    stages: dict[str, StageUsage] = {}
    for stage, totals in ledger.usage_totals().items():
        if stage.startswith(HUMAN_PREFIX):  # people's labels (snapaudit review): no calls
            continue
        calls, reported, prompt, completion, batch_prompt, batch_completion = totals
        model = models.get(stage)
        stages[stage] = StageUsage(calls, reported, model, prompt, completion, batch_prompt,
                                   batch_completion,
                                   _cost(protocol, model, (prompt, completion),
                                         (batch_prompt, batch_completion)))
    return Usage.of(stages)


def _cost(protocol: Protocol, model: str | None, tokens: tuple[int, int],
          batched: tuple[int, int]) -> float | None:
    """USD of ``tokens`` (prompt, completion), of which ``batched`` at the batch discount."""
    price = protocol.run.pricing.get(model or "")
    if price is None:
        return None

    def usd(prompt: int, completion: int) -> float:
        return (prompt * price.input_per_mtok + completion * price.output_per_mtok) / 1e6

    full = usd(tokens[0] - batched[0], tokens[1] - batched[1])
    return round(full + usd(*batched) * (1 - price.batch_discount), 6)
