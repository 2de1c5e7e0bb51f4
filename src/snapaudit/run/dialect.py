"""``response_format = "auto"`` resolved before the run writes anything.

A fresh run probes each distinct (base_url, model) endpoint of an ``openai`` generator once
(:func:`snapaudit.testbed.dialect.probe_dialect`); the ``anthropic`` and ``local`` backends
only tell "none" from the rest, so "auto" is "json_schema" for them without a call. The
concrete value replaces "auto" in the protocol, so ``protocol.resolved.toml`` and the
protocol hash bind it like any other key. A resumed run never probes again: "auto" in the
given protocol takes the value its run directory's resolved protocol recorded.
"""

from __future__ import annotations

from typing import Any

from snapaudit.judge.registry import judge_kind
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.record.rundir import RunDir
from snapaudit.testbed.generate.config import GeneratorConfig, OpenAIGeneratorConfig

AUTO = "auto"


def _slots(protocol: Protocol) -> dict[str, GeneratorConfig]:
    """The generator configs a run calls: ``generator`` (testbed) and ``judge.generator``."""
    out: dict[str, GeneratorConfig] = {}
    if protocol.system.kind == "testbed" and protocol.generator is not None:
        out["generator"] = protocol.generator
    if judge_kind(protocol.judge.kind).generator and protocol.judge.generator is not None:
        out["judge.generator"] = protocol.judge.generator
    return out


def auto_dialects(protocol: Protocol) -> list[str]:
    """Where ``response_format = "auto"`` is set (``generator``, ``judge.generator``)."""
    return [where for where, c in _slots(protocol).items() if c.response_format == AUTO]


def dry_run_notes(protocol: Protocol) -> list[str]:
    """What ``snapaudit run --dry-run`` says about the dialects a fresh run would probe."""
    notes = []
    for where, config in _slots(protocol).items():
        if config.response_format != AUTO:
            continue
        if isinstance(config, OpenAIGeneratorConfig):
            notes.append(f"{where}.response_format = \"auto\": a fresh run probes "
                         f"{config.base_url or 'https://api.openai.com/v1'} (model "
                         f"{config.model}) with one small call per dialect until one is "
                         "honoured, and records it in protocol.resolved.toml")
        else:
            notes.append(f"{where}.response_format = \"auto\": \"json_schema\" for the "
                         f"{config.backend} backend (no probe)")
    return notes


def _replace(protocol: Protocol, values: dict[str, str]) -> Protocol:
    update: dict[str, Any] = {}
    if "generator" in values and protocol.generator is not None:
        update["generator"] = protocol.generator.model_copy(
            update={"response_format": values["generator"]})
    if "judge.generator" in values and protocol.judge.generator is not None:
        judge_gen = protocol.judge.generator.model_copy(
            update={"response_format": values["judge.generator"]})
        update["judge"] = protocol.judge.model_copy(update={"generator": judge_gen})
    return protocol.model_copy(update=update) if update else protocol


def resolve_offline(protocol: Protocol) -> Protocol:
    """``protocol`` with "auto" made "json_schema" where no probe is needed (the anthropic
    and local backends); an openai generator's "auto" is left for the probe."""
    return _replace(protocol, {w: "json_schema" for w in auto_dialects(protocol)
                               if not isinstance(_slots(protocol)[w], OpenAIGeneratorConfig)})


async def resolve_dialects(protocol: Protocol, rd: RunDir, fresh: bool) -> Protocol:
    """``protocol`` with every "auto" response_format concrete: probed on a fresh run,
    read from the run directory's resolved protocol on a resume."""
    auto = auto_dialects(protocol)
    if not auto:
        return protocol
    if not fresh:
        recorded = _slots(rd.load_protocol())
        return _replace(protocol, {w: recorded[w].response_format for w in auto
                                   if w in recorded and recorded[w].response_format != AUTO})
    from snapaudit.run.preflight import check_generator
    from snapaudit.testbed.dialect import probe_dialect

    protocol = resolve_offline(protocol)
    slots = _slots(protocol)
    chosen: dict[tuple[str | None, str], str] = {}
    values: dict[str, str] = {}
    for where in auto_dialects(protocol):
        config = slots[where]
        assert isinstance(config, OpenAIGeneratorConfig)
        await check_generator(config, where, min(protocol.run.timeout_s, 10.0))
        endpoint = (config.base_url, config.model)
        if endpoint not in chosen:
            chosen[endpoint] = await probe_dialect(config)
        values[where] = chosen[endpoint]
    return _replace(protocol, values)
