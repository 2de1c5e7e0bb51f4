"""Preflight: every secret, path and endpoint the remaining stages need, checked before the
run writes anything.

What is checked depends on which stages are still open (read from the ledger's locks; the
chain itself is verified when the run is opened):

* answer stage open: each HTTP system's secret variables are set and its endpoint accepts a
  TCP connection; the testbed generator's ``api_key_env`` is set and its endpoint
  (``openai``/``anthropic`` backends) accepts a connection;
* semantic stage open: the LLM judge's ``api_key_env`` and endpoint, or the ``labels`` file
  (exists and is readable);
* gold not unlocked: the gold file exists and is readable (its content is not read before
  the unlock).

Once the answer stage is locked no system is built at all (:func:`needs_systems`): a finished
run can be re-analysed after its services and their keys are gone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from snapaudit.errors import BackendError, ConfigError
from snapaudit.judge.registry import judge_kind
from snapaudit.run.record import cohort
from snapaudit.run.record.protocol import Protocol
from snapaudit.systems.base import System
from snapaudit.testbed.generate.config import GeneratorConfig, LocalGeneratorConfig

DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


def needs_systems(locked: set[str]) -> bool:
    """Systems are called only by the retrieval and answer stages."""
    return "answer" not in locked


async def preflight(protocol: Protocol, base: Path, systems: Mapping[str, System],
                    locked: set[str]) -> None:
    """Raise ConfigError/BackendError for the first thing the open stages lack."""
    from snapaudit.systems.http import HttpSystem
    from snapaudit.systems.transport import check_reachable

    timeout = min(protocol.run.timeout_s, 10.0)
    if "answer" not in locked:
        for system in systems.values():
            if isinstance(system, HttpSystem):
                system.check_credentials()
                await check_reachable(system.config.url, timeout)
        if protocol.system.kind == "testbed" and protocol.generator is not None:
            await check_generator(protocol.generator, "generator", timeout)
    if "semantic" not in locked:
        judge = protocol.judge
        if judge_kind(judge.kind).generator and judge.generator is not None:
            await check_generator(judge.generator, "judge.generator", timeout)
        if judge_kind(judge.kind).from_file and judge.labels_path is not None:
            _readable(cohort.resolve(str(judge.labels_path), base), "judge.labels_path")
    if "gold" not in locked:
        _readable(cohort.resolve(protocol.gold.path, base), "gold.path")


async def check_generator(config: GeneratorConfig, where: str, timeout: float) -> None:
    """The generator's key variable is set and its endpoint accepts a connection."""
    from snapaudit.systems.transport import check_reachable

    if isinstance(config, LocalGeneratorConfig):
        return  # no key, no endpoint
    env = config.api_key_env
    if env is not None and not os.environ.get(env):
        raise BackendError(f"environment variable {env} ({where}.api_key_env) is not set or "
                           "empty")
    await check_reachable(config.base_url or DEFAULT_URLS[config.backend], timeout)


def _readable(path: Path, key: str) -> None:
    """Exists, is a file and is readable; the content is not read."""
    if not path.is_file():
        raise ConfigError(f"{key}: {path} does not exist or is not a file")
    if not os.access(path, os.R_OK):
        raise ConfigError(f"{key}: {path} is not readable")


def check_conversations(protocol: Protocol, manifest: Mapping[str, object]) -> None:
    """ConfigError when the testbed would be asked a conversation (it answers one question
    per call): a cohort question with ``turns`` needs a Python or HTTP system."""
    if protocol.system.kind != "testbed":
        return
    questions = manifest.get("questions")
    talk = [q for q in questions if isinstance(q, dict) and "turns" in q] \
        if isinstance(questions, list) else []
    if talk:
        raise ConfigError(f"cohort question {talk[0]['question_id']} is a conversation (it has "
                          f"turns; {len(talk)} such question(s)): the built-in testbed answers "
                          "single questions; audit conversations with a Python or HTTP system")
