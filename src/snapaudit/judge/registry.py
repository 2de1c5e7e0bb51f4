"""Judge kinds, registered once: each entry names its judge (imported lazily) and what the kind
can do. Every module asks a kind's capabilities (:func:`judge_kind`); none compares kind names.

======== ======== ======== ========== ========= ===== ============= ==========
kind     labels   packets  from_file  generator batch packet_budget short_only
======== ======== ======== ========== ========= ===== ============= ==========
none     no       no       no         no        no    no            no
labels   yes      no       yes        no        no    no            no
llm      yes      yes      no         yes       yes   yes           no
rule     yes      yes      no         no        no    no            yes
======== ======== ======== ========== ========= ===== ============= ==========
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError
from snapaudit.judge.base import Judge
from snapaudit.judge.config import JudgeConfig
from snapaudit.registry import Entry, Registry

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources


@dataclass(frozen=True, slots=True)
class JudgeKind(Entry):
    """A judge kind: its factory (None: the engine needs no judge object) and capabilities."""

    labels: bool = True  # gives pair labels: the semantic kernel, a primary judge
    packets: bool = False  # judges blind packets: a Judge is built, its cells are calls
    from_file: bool = False  # its labels are read from judge.labels_path
    generator: bool = False  # calls [judge.generator]: priced, reachable, its dialect probed
    batch: bool = False  # its packets can ride in provider batches (a batch-API generator)
    packet_budget: bool = False  # packets cost prompt tokens: the dry run prices them
    short_only: bool = False  # decides short answers only (answers.kind = "long" refused)
    description: str = ""  # how the report names the primary judge


JUDGES: Registry[Judge] = Registry("judge kind", {
    "none": JudgeKind(None, labels=False),
    "labels": JudgeKind(None, from_file=True, description="imported pair labels"),
    "llm": JudgeKind("snapaudit.judge.llm:LLMJudge", packets=True, generator=True, batch=True,
                     packet_budget=True, description="a blind LLM judge"),
    "rule": JudgeKind("snapaudit.judge.rule:RuleJudge", packets=True, short_only=True,
                      description="the transparent offline rule judge (normalization, alias "
                                  "and containment rules; not a language model)"),
})


def judge_kind(kind: str) -> JudgeKind:
    """The registry entry of ``kind`` (ConfigError naming the known kinds when unknown)."""
    entry = JUDGES.entry(kind)
    assert isinstance(entry, JudgeKind)
    return entry


def kinds_that(capability: str) -> tuple[str, ...]:
    """The kinds with ``capability`` (a :class:`JudgeKind` field), in registry order."""
    return tuple(k for k in JUDGES if getattr(judge_kind(k), capability))


def judge_model(config: JudgeConfig) -> str | None:
    """The model id a judge's calls are billed for (None: a kind that calls no generator)."""
    if judge_kind(config.kind).generator and config.generator is not None:
        return config.generator.model
    return None


def build_judge(config: JudgeConfig, resources: RunResources | None = None) -> Judge:
    """The judge of ``config``: ``llm`` (any generator backend; ``resources``: the run's, for
    its shared generator and replica pools) or ``rule`` (offline)."""
    if not judge_kind(config.kind).packets:
        raise ConfigError(f"judge.kind = {config.kind!r} has no judge to build "
                          f"(use {' or '.join(repr(k) for k in kinds_that('packets'))})")
    return JUDGES.build(config.kind, config, resources=resources)
