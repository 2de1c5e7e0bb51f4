"""A judge named on the command line: a TOML file with a ``[judge]`` table, or a short form.

Short forms: ``rule`` (the offline rule judge), ``rule+minilm@0.8`` (with the
embedding tie-breaker at that threshold), ``openai:MODEL@BASE_URL``,
``anthropic:MODEL@BASE_URL``, ``local:MODEL``. ``NAME=`` in front sets the judge
name (default: the kind, e.g. ``rule`` or ``openai-MODEL``).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from snapaudit.errors import ConfigError
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.registry import judge_kind
from snapaudit.names import check_name
from snapaudit.testbed.generate.config import GeneratorConfig, generator_config, parse_generator


def _from_toml(path: Path) -> JudgeConfig:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the judge file: {exc}") from None
    table = data.get("judge")
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: needs a [judge] table")
    return _validate(table, str(path))


def _validate(table: dict[str, Any], source: str) -> JudgeConfig:
    try:
        return JudgeConfig.model_validate(table)
    except ValidationError as exc:
        raise ConfigError(f"{source}: invalid judge: {exc}") from None


def _short(spec: str) -> dict[str, Any]:
    if spec == "rule":
        return {"kind": "rule", "name": "rule"}
    if spec.startswith("rule+minilm@"):
        return {"kind": "rule", "name": "rule-minilm",
                "rule_embedding_threshold": float(spec.split("@", 1)[1])}
    gen = short_generator(spec)
    return {"kind": "llm", "name": generator_name(gen), "generator": gen}


def short_generator(spec: str) -> GeneratorConfig:
    """``openai:MODEL@URL``, ``anthropic:MODEL@URL`` or ``local:MODEL``."""
    backend, sep, rest = spec.partition(":")
    if not sep or backend not in ("openai", "anthropic", "local") or not rest:
        raise ConfigError(f"spec {spec!r}: use a TOML file, 'openai:MODEL@URL', "
                          "'anthropic:MODEL@URL' or 'local:MODEL' (judges also: 'rule')")
    model, _, url = rest.partition("@")
    if backend == "local" and url:
        raise ConfigError(f"spec {spec!r}: 'local:MODEL' takes no '@URL'")
    return generator_config(backend=backend, model=model, base_url=url or None)


def generator_name(config: GeneratorConfig) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", f"{config.backend}-{config.model}")[:128]


def parse_generator_spec(spec: str) -> GeneratorConfig:
    """A generator: a TOML file with a ``[generator]`` table, or a short form."""
    if not spec.endswith(".toml"):
        return short_generator(spec)
    path = Path(spec)
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("generator")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the generator file: {exc}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: needs a [generator] table")
    try:
        return parse_generator(table)
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid generator: {exc}") from None


def parse_judge_spec(spec: str) -> JudgeConfig:
    """The judge config of ``spec`` (see the module docstring); ConfigError when unusable."""
    name, eq, body = spec.partition("=")
    if not eq or "/" in name or ":" in name:
        name, body = "", spec
    path = Path(body)
    if body.endswith(".toml"):
        config = _from_toml(path)
    else:
        try:
            config = _validate(_short(body), spec)
        except ValueError as exc:
            raise ConfigError(f"judge spec {spec!r}: {exc}") from None
    if not judge_kind(config.kind).packets:
        raise ConfigError(f"judge spec {spec!r}: an audit judge must be kind 'llm' or 'rule'")
    if name:
        try:
            check_name(name, "judge name")
        except ValueError as exc:
            raise ConfigError(f"judge spec {spec!r}: {exc}") from None
    return config.model_copy(update={"name": name}) if name else config
