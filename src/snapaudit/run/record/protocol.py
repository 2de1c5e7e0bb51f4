"""The protocol file: typed models, ``--set`` overrides, the resolved TOML and the hash split.

Every field except the ``[run]`` section shapes outputs and is bound into the protocol
hash; ``[run]`` holds operational knobs (concurrency, rate limit, timeouts, retries, log
level) that may change when a run is resumed. Every key is documented in docs/protocol.md.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationError,
    model_serializer,
    model_validator,
)

from snapaudit._model import Frozen, describe_error
from snapaudit.errors import ProtocolError
from snapaudit.hashing import sha256_json
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.registry import judge_kind
from snapaudit.names import check_name
from snapaudit.run.record.gatespec import GateSpec
from snapaudit.run.record.toml_text import toml_text
from snapaudit.systems.config import AuthConfig, HttpSystemConfig, PythonSystemConfig, RunConfig
from snapaudit.testbed.generate.config import GeneratorConfig
from snapaudit.testbed.paths import expand_path_states
from snapaudit.testbed.retrieval.config import TestbedConfig

__all__ = ["AuthConfig", "HttpSystemConfig", "Protocol", "RunConfig", "load_protocol",
           "protocol_hash"]

SCHEMA_VERSION = 1


class StatesConfig(Frozen):
    order: list[str] = Field(min_length=2)
    old: str
    new: str

    @model_validator(mode="after")
    def _check(self) -> StatesConfig:
        if len(set(self.order)) != len(self.order):
            raise ValueError("states.order has duplicate states")
        for s in self.order:
            check_name(s, "state name")
        for key in ("old", "new"):
            if getattr(self, key) not in self.order:
                raise ValueError(f"states.{key} = {getattr(self, key)!r} is not in states.order")
        if self.old == self.new:
            raise ValueError("states.old and states.new must differ")
        return self


class DesignConfig(Frozen):
    repeats: int = Field(default=2, ge=2)
    seed: int = 0
    # sequential looks (stats/sequential.py): the cohort asked in K blocks, a look after each
    looks: int = Field(default=1, ge=1)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fixed design (1 look) is left out, so protocols without it keep their hashes."""
        data: dict[str, Any] = handler(self)
        if data.get("looks") == 1:
            del data["looks"]
        return data


class CohortConfig(Frozen):
    source: Literal["nq-open", "triviaqa-dpr", "jsonl", "csv"]
    path: str
    size: int = Field(ge=1)
    seed: int = 0
    exclude: str | None = None
    id_field: str = "id"
    question_field: str = "question"
    # jsonl/csv: a field naming each question's cluster (the bootstrap then resamples clusters)
    cluster_field: str | None = None


class GoldConfig(Frozen):
    path: str
    # nq-open / triviaqa-dpr: the benchmark file itself (ids as in [cohort]);
    # jsonl: the interchange gold table {"question_id", "answers"}.
    format: Literal["nq-open", "triviaqa-dpr", "jsonl"] = "jsonl"
    benchmark: Literal["nq", "triviaqa"] = "nq"


class SystemKind(Frozen):
    kind: Literal["http", "testbed", "python"] = "http"


class AnswersConfig(Frozen):
    """``[answers]``: checked by :mod:`snapaudit.run.answers`."""

    # short: a few words (exact kernel meaningful); long: paragraphs (judge-only gate)
    kind: Literal["short", "long"] = "short"
    # None: 512 UTF-8 bytes for the testbed (the study's cap), 65,536 for http/python systems
    max_bytes: int | None = Field(default=None, ge=1)


class LineageConfig(Frozen):
    """``[lineage]``: a re-judged run's parent (written by ``snapaudit rejudge``)."""

    parent_run: str
    parent_protocol_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    parent_answer_lock_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class BootstrapConfig(Frozen):
    draws: int = Field(default=50_000, ge=100)
    seed: int = 0
    permutations: int = Field(default=10_000, ge=0)  # distribution test; 0 skips it
    # "exact": the exact bootstrap of gridded means (stats/exact.py); "draws": Monte Carlo
    method: Literal["exact", "draws"] = "exact"

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The default method is left out, so protocols without it keep their hashes."""
        data: dict[str, Any] = handler(self)
        if data.get("method") == "exact":
            del data["method"]
        return data


def _system_tag(value: Any) -> str:
    return "python" if "target" in (value if isinstance(value, dict) else vars(value)) else "http"


# a [systems.<state>] table: a Python target, else an HTTP endpoint
SystemConfig = Annotated[Annotated[HttpSystemConfig, Tag("http")]
                         | Annotated[PythonSystemConfig, Tag("python")],
                         Discriminator(_system_tag)]


class Protocol(Frozen):
    schema_version: Literal[1] = 1
    name: str
    states: StatesConfig
    design: DesignConfig = DesignConfig()
    cohort: CohortConfig
    gold: GoldConfig
    system: SystemKind = SystemKind()
    systems: dict[str, SystemConfig] = Field(default_factory=dict)
    testbed: TestbedConfig | None = None
    generator: GeneratorConfig | None = None
    answers: AnswersConfig = AnswersConfig()
    judge: JudgeConfig = JudgeConfig()
    gate: GateSpec = GateSpec()
    bootstrap: BootstrapConfig = BootstrapConfig()
    run: RunConfig = RunConfig()
    lineage: LineageConfig | None = None

    @model_validator(mode="after")
    def _check_systems(self) -> Protocol:
        states = self.states.order
        kind = self.system.kind
        if kind in ("http", "python"):
            missing = [s for s in states if s not in self.systems]
            if missing:
                raise ValueError(f"system.kind = '{kind}' needs [systems.<state>] for {missing}")
            extra = [s for s in self.systems if s not in states]
            if extra:
                raise ValueError(f"[systems.*] names states not in states.order: {extra}")
            want = HttpSystemConfig if kind == "http" else PythonSystemConfig
            wrong = [s for s, c in self.systems.items() if not isinstance(c, want)]
            if wrong:
                need = "url" if kind == "http" else "target"
                raise ValueError(f"system.kind = '{kind}': [systems.<state>] needs '{need}' "
                                 f"(states {wrong})")
        else:
            if self.testbed is None:
                raise ValueError("system.kind = 'testbed' needs a [testbed] section")
            if self.systems:
                raise ValueError("[systems.*] is only for system.kind = 'http' or 'python'")
            missing = [s for s in states if s not in self.testbed.states]
            if missing:
                raise ValueError(f"testbed.states lacks states of states.order: {missing}")
        if judge_kind(self.judge.kind).from_file and not self.judge.labels_path:
            raise ValueError(f"judge.kind = {self.judge.kind!r} needs judge.labels_path")
        if judge_kind(self.judge.kind).generator and self.judge.generator is None:
            raise ValueError(f"judge.kind = {self.judge.kind!r} needs [judge.generator]")
        return self


# ---------------------------------------------------------------- loading


def _parse_value(raw: str) -> Any:
    """A ``--set`` value as TOML (``3``, ``true``, ``"x"``, ``[1, 2]``); a bare word is a string."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply ``dotted.key=value`` overrides to raw protocol data (a new dict)."""
    import copy

    out = copy.deepcopy(data)
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ProtocolError(f"--set {item!r}: expected dotted.key=value")
        parts = key.split(".")
        node = out
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ProtocolError(f"--set {key}: {part!r} is not a table")
            node = child
        node[parts[-1]] = _parse_value(raw.strip())
    return out


# the tables that are a union of per-kind models, and their union tags (kind names)
_KIND_TABLES = {"generator": ("openai", "anthropic", "local"),
                "retriever": ("bm25", "dense", "http")}
_KIND_FIELD = {"generator": "backend", "retriever": "kind"}


def _format_errors(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        parts = list(err["loc"])
        if len(parts) > 2 and parts[0] == "systems" and parts[2] in ("http", "python"):
            del parts[2]  # the union tag of a [systems.<state>] table
        parts = [p for i, p in enumerate(parts)  # the union tag of a per-kind table
                 if not (i and p in _KIND_TABLES.get(str(parts[i - 1]), ()))]
        loc = ".".join(str(p) for p in parts)
        if err["type"] == "union_tag_invalid":
            tags = [repr(t) for t in _KIND_TABLES[str(parts[-1])]]
            got = (err.get("ctx") or {}).get("tag", "?")
            lines.append(f"'{loc}.{_KIND_FIELD[str(parts[-1])]}': must be one of "
                         f"{', '.join(tags[:-1])} or {tags[-1]}, got {got!r}")
        elif err["type"] == "extra_forbidden":
            lines.append(f"unknown key '{loc}'")
        elif err["type"] == "missing":
            lines.append(f"missing required key '{loc}'")
        else:
            where = f"'{loc}': " if loc else ""
            lines.append(f"{where}{describe_error(err)}")
    return f"{source}: invalid protocol:\n  " + "\n  ".join(lines)


def parse_protocol(data: Mapping[str, Any], source: str = "protocol") -> Protocol:
    """Validate strictly: a string where a number belongs (``repeats = "2"``) is an error,
    never converted. Validation goes through JSON so TOML arrays still fill tuple fields."""
    try:
        text = json.dumps(expand_path_states(dict(data), source), default=str)  # [testbed.paths]
        return Protocol.model_validate_json(text, strict=True)
    except ValidationError as exc:
        raise ProtocolError(_format_errors(exc, source)) from None


def load_protocol(path: str | Path, overrides: Sequence[str] = ()) -> Protocol:
    """Read, override and validate a protocol TOML file; ProtocolError on any problem."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProtocolError(f"{p}: protocol file not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{p}: not valid TOML: {exc}") from None
    return parse_protocol(apply_overrides(data, overrides), str(p))


# ---------------------------------------------------------------- hashing


def bound_fields(protocol: Protocol) -> dict[str, Any]:
    """Everything that shapes outputs (all but ``[run]`` and EXECUTION_KEYS), as JSON data."""
    data: dict[str, Any] = protocol.model_dump(mode="json", exclude={"run"},
                                               context={"bound": True})
    return data


def protocol_hash(protocol: Protocol) -> str:
    return sha256_json(bound_fields(protocol))


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = value


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Dotted keys whose values differ between two bound-field dicts."""
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    _flatten(dict(old), "", a)
    _flatten(dict(new), "", b)
    return sorted(k for k in set(a) | set(b) if a.get(k, _MISSING) != b.get(k, _MISSING))


_MISSING = object()


def to_toml(protocol: Protocol) -> str:
    """The resolved protocol as TOML (None fields omitted); it parses back to the same model."""
    return toml_text(protocol.model_dump(mode="json", exclude_none=True),
                     "# resolved protocol written by snapaudit; do not edit")
