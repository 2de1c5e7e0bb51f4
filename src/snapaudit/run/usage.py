"""Tokens and cost a run actually used, per ledger stage (``results.json`` key ``usage``).

Counts come from the ledger's attempts: every attempt of a stage, retries and failed calls
included, with the token counts its provider reported (``prompt_tokens``,
``completion_tokens``; services that report none count 0, and ``attempts_with_usage`` says how
many did). Cost uses ``[run.pricing]`` for the model that served the stage (the generator for
``answer``, the judge's generator for ``judge:<name>``), with the batch discount when
``[run] mode = "batch"``. Usage is metered, not derived from the answers: the artifact
verifier does not recompute it, and it is not a claim.
"""

from __future__ import annotations

from typing import Any

from snapaudit.run.ledger import Ledger
from snapaudit.run.protocol import Protocol


def stage_models(protocol: Protocol) -> dict[str, str]:
    """Ledger stage -> the model id billed for its calls (stages without a model omitted)."""
    out: dict[str, str] = {}
    if protocol.system.kind == "testbed" and protocol.generator is not None:
        out["answer"] = protocol.generator.model
    judge = protocol.judge
    if judge.kind == "llm" and judge.generator is not None:
        out[f"judge:{judge.name}"] = judge.generator.model
    return out


def usage_summary(ledger: Ledger, protocol: Protocol) -> dict[str, Any]:
    """``{"stages": {stage: {...}}, "total": {...}}`` of this run's ledger."""
    models = stage_models(protocol)
    batch = getattr(protocol.run, "mode", "sync") == "batch"
    stages: dict[str, Any] = {}
    for stage, (calls, reported, prompt, completion) in ledger.usage_totals().items():
        model = models.get(stage)
        stages[stage] = {"attempts": calls, "attempts_with_usage": reported, "model": model,
                         "prompt_tokens": prompt, "completion_tokens": completion,
                         "cost_usd": _cost(protocol, model, prompt, completion, batch)}
    costs = [s["cost_usd"] for s in stages.values() if s["cost_usd"] is not None]
    total = {"attempts": sum(s["attempts"] for s in stages.values()),
             "prompt_tokens": sum(s["prompt_tokens"] for s in stages.values()),
             "completion_tokens": sum(s["completion_tokens"] for s in stages.values()),
             "cost_usd": round(sum(costs), 6) if costs else None}
    return {"stages": stages, "total": total}


def _cost(protocol: Protocol, model: str | None, prompt: int, completion: int,
          batch: bool) -> float | None:
    price = protocol.run.pricing.get(model or "")
    if price is None:
        return None
    cost = (prompt * price.input_per_mtok + completion * price.output_per_mtok) / 1e6
    return round(cost * (1 - price.batch_discount) if batch else cost, 6)
