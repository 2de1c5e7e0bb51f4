"""Protocol sections owned by the systems: an HTTP endpoint per state and the call policy.

``RunConfig`` (``[run]``) holds the operational knobs every external call obeys
(concurrency, rate limit, timeouts, retries); it is not bound into the protocol hash.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from snapaudit._model import Frozen


class AuthConfig(Frozen):
    header: str = "Authorization"
    env: str
    prefix: str = "Bearer "


# the optional keys of an HTTP system (document texts, the trajectory): written only when
# set, so a protocol without them keeps its hash
_UNSET_DEFAULTS: dict[str, Any] = {"doc_texts_path": None, "steps_path": None,
                                   "step_tool": "tool", "step_input": "input",
                                   "step_doc_ids": "doc_ids", "step_output": "output",
                                   "turn_answers_path": "turn_answers"}


class HttpSystemConfig(Frozen):
    url: str
    method: Literal["POST", "PUT", "GET"] = "POST"
    body_template: dict[str, Any] = Field(default_factory=lambda: {"question": "{question}"})
    answer_path: str = "answer"
    doc_ids_path: str | None = "doc_ids"
    headers: dict[str, str] = Field(default_factory=dict)
    auth: AuthConfig | None = None
    # dotted path to the retrieved documents' texts (one per id): kept as their SHA-256, so
    # a document whose text changed under the same id is reported as changed
    doc_texts_path: str | None = None
    # the reply's list of steps (an agent's trajectory), and each step's fields within it
    steps_path: str | None = None
    step_tool: str = "tool"
    step_input: str = "input"
    step_doc_ids: str = "doc_ids"
    step_output: str | None = "output"
    # a conversation's answers in the reply, one per turn (its ``turns`` go in the request
    # body: a field whose whole value is "{turns}", else a top-level ``turns``)
    turn_answers_path: str = "turn_answers"

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        """``doc_texts_path`` and the step keys are written only when set: protocols without
        them keep their hashes."""
        data = handler(self)
        if isinstance(data, dict):
            for key, default in _UNSET_DEFAULTS.items():
                if key in data and data[key] == default:
                    data.pop(key)
        return data


class ModelPrice(Frozen):
    """USD per million tokens of one model, and the provider's batch discount (0.5 = half)."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    batch_discount: float = Field(default=0.5, ge=0, lt=1)


# How a Python system's calls run: operational, never bound into the protocol hash (like
# [run]: left out of a dump with context={"bound": True}, as bound_fields does); a setting
# at its default is never written
EXECUTION_KEYS = ("max_concurrency", "thread_safe", "isolation")

_DEFAULTS: dict[str, Any] = {"bind_files": [], "setup": None, "max_concurrency": None,
                             "thread_safe": False, "isolation": "thread"}


class PythonSystemConfig(Frozen):
    """``[systems.<state>]`` of ``system.kind = "python"``: a callable, its kwargs, and how
    its calls run (snapaudit.systems.python)."""

    target: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")  # "pkg.module:function"
    kwargs: dict[str, Any] = Field(default_factory=dict)
    # a folder put first on sys.path while the target's code runs (its import, setup, each
    # call) and removed after (relative to the protocol): snapaudit.systems.python_call
    python_path: str | None = None
    # index and model files (or folders) the answers depend on, relative to the protocol:
    # their sizes and SHA-256 are bound into the system's spec (snapaudit.systems.python_code)
    bind_files: list[str] = Field(default_factory=list)
    # "module:function" called once per worker process (once per system in thread
    # isolation) before the first call, outside every timeout; its return value reaches the
    # target as the keyword ``resources``; its module is bound into the spec like the target's
    setup: str | None = Field(default=None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
    # calls of this state at once; None: [run] concurrency for an async or thread-safe
    # target, 1 for a sync one (one model object called from two threads can crash); a sync
    # target's slots are shared by the states sharing its function or modules (python_slots)
    max_concurrency: int | None = Field(default=None, ge=1, le=4096)
    thread_safe: bool = False
    # "process": a pool of max_concurrency worker processes (snapaudit.systems.workers): a
    # native crash is one failed attempt, a call past its timeout is killed
    isolation: Literal["thread", "process"] = "thread"

    @model_serializer(mode="wrap")
    def _drop_defaults(self, handler: SerializerFunctionWrapHandler,
                       info: SerializationInfo) -> Any:
        """The keys added after the first release are written only when set: without them
        the bound fields (so the protocol hash) are as before."""
        data = handler(self)
        if isinstance(data, dict):
            bound = isinstance(info.context, dict) and info.context.get("bound")
            for key, default in _DEFAULTS.items():
                if key in data and (data[key] == default or (bound and key in EXECUTION_KEYS)):
                    data.pop(key)
        return data

    @model_validator(mode="after")
    def _resources_is_setup_s(self) -> PythonSystemConfig:
        if self.setup is not None and "resources" in self.kwargs:
            raise ValueError("kwargs.resources: with setup, the target's 'resources' argument "
                             "is what setup returned; rename the kwarg")
        return self

    def slots(self, run_concurrency: int, is_async: bool) -> int:
        """How many calls of this state run at once."""
        if self.max_concurrency is not None:
            return self.max_concurrency
        return run_concurrency if is_async or self.thread_safe else 1


class RunConfig(Frozen):
    """Operational knobs: NOT bound into the protocol hash; may change on resume."""

    concurrency: int = Field(default=16, ge=1, le=4096)
    rate_limit_per_s: float | None = Field(default=None, gt=0)
    timeout_s: float = Field(default=60.0, gt=0)
    # Bytes one response may have, on the wire and after decompression (4 MiB).
    max_response_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    max_attempts: int = Field(default=5, ge=1)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    max_retry_after_s: float = Field(default=300.0, ge=0)
    # The circuit breaker per endpoint (snapaudit.run.execution.breaker): opens after this many
    # consecutive transient failures (0: never); one probe after breaker_backoff_s, doubled
    # after each failed probe up to backoff_max_s; the stage gives up when the endpoint has
    # been failing for breaker_max_wait_s.
    breaker_failures: int = Field(default=1, ge=0)
    breaker_backoff_s: float = Field(default=1.0, gt=0)
    breaker_max_wait_s: float = Field(default=120.0, ge=0)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Replica fleets: each list is one endpoint's configured URL (a system's url or a
    # generator's base_url) followed by the other base URLs serving it (docs/protocol.md).
    replicas: list[list[str]] = Field(default_factory=list)
    replica_failures: int = Field(default=3, ge=1)
    replica_rest_s: float = Field(default=5.0, ge=0)
    # What ``snapaudit run --dry-run`` prices: model name -> price.
    pricing: dict[str, ModelPrice] = Field(default_factory=dict)
    # "batch": OpenAI/Anthropic generators and LLM judges go through the providers' batch
    # APIs (snapaudit.run.execution.batch); the limits default to the provider's own (None).
    mode: Literal["sync", "batch"] = "sync"
    batch_poll_s: float = Field(default=60.0, gt=0)
    batch_max_requests: int | None = Field(default=None, ge=1)
    batch_max_bytes: int | None = Field(default=None, ge=1024)
