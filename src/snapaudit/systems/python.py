"""A RAG pipeline written in Python as a system: ``[systems.<state>] target = "pkg.mod:fn"``.

The target is imported once per state and called once per attempt with a typed
:class:`PythonCall` and the state's ``kwargs``. A sync callable runs in a bounded thread pool
(``[run] concurrency`` threads per state); an async one runs on the event loop. It returns the
answer as a string or a mapping ``{"answer": str, "doc_ids"?: [str, ...], "meta"?: {...}}``.
Any exception it raises is one transport-invalid attempt whose reason names the exception's
type and message (its redacted traceback, at most 4 KB of the innermost frames, is kept in
the attempt's meta); the engine retries it under the same policy as an HTTP failure.

The spec binds the target, its kwargs and its code: the SHA-256 of the target module's source
file, or the installed distribution's name and version when the module comes from one; the
local modules it imports and the installed distributions they use (``imports``), and the
``bind_files`` (``files``): :mod:`snapaudit.systems.python_code`. :func:`python_spec` is that
spec without building the system (a finished run checks its code cheaply).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.hashing import sha256_file
from snapaudit.systems.base import AnswerCall, AnswerOutcome
from snapaudit.systems.config import PythonSystemConfig, RunConfig
from snapaudit.systems.failure import R
from snapaudit.systems.python_code import bound_files, imported_code, target_roots
from snapaudit.systems.redact import redact


@dataclass(frozen=True, slots=True)
class PythonCall:
    """What a Python system receives for one attempt at one cell."""

    question: str
    question_id: str
    state: str
    repeat: int
    seed: int
    attempt: int


def load_target(target: str, search_path: Path | None = None) -> Callable[..., Any]:
    """Import ``package.module:function`` (ConfigError naming the problem)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"python target {target!r}: expected 'package.module:function'")
    if search_path is not None and str(search_path) not in sys.path:
        sys.path.insert(0, str(search_path))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure of user code is a config problem
        raise ConfigError(f"python target {target!r}: cannot import {module_name!r}: "
                          f"{type(exc).__name__}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ConfigError(f"python target {target!r}: {module_name!r} has no {attr!r}")
    if not callable(obj):
        raise ConfigError(f"python target {target!r} is not callable")
    return obj  # type: ignore[no-any-return]


def accepts_evidence(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes an ``evidence`` keyword: it then receives the counterfactual
    documents of ``snapaudit attribute`` ((id, url, text) records) instead of retrieving."""
    try:
        param = inspect.signature(fn).parameters.get("evidence")
    except (TypeError, ValueError):  # no signature (some builtins)
        return False
    return param is not None and param.kind in (inspect.Parameter.KEYWORD_ONLY,
                                                inspect.Parameter.POSITIONAL_OR_KEYWORD)


def code_identity(target: str) -> dict[str, str]:
    """The target's code: its distribution's name and version, else its source file's hash."""
    module_name = target.partition(":")[0]
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if path is None:
        return {"module": module_name, "source": "unknown"}
    dist = _distribution(module_name, Path(path))
    if dist is not None:
        return {"module": module_name, "distribution": dist[0], "version": dist[1]}
    return {"module": module_name, "source_sha256": sha256_file(Path(path))}


def _distribution(module_name: str, path: Path) -> tuple[str, str] | None:
    from importlib.metadata import packages_distributions, version

    if not any(p in ("site-packages", "dist-packages") for p in path.parts):
        return None
    names = packages_distributions().get(module_name.split(".")[0]) or []
    for name in names:
        try:
            return name, version(name)
        except Exception:  # metadata of a broken install: try the next name
            continue
    return None


def to_outcome(value: Any, latency_s: float) -> AnswerOutcome:
    """A callable's return value as an outcome; TransportInvalid("schema") when malformed."""
    if isinstance(value, str):
        return AnswerOutcome(answer=value, latency_s=latency_s)
    if not isinstance(value, Mapping):
        raise TransportInvalid(R.SCHEMA, detail="the callable must return a str or a mapping "
                               f"with 'answer', got {type(value).__name__}")
    extra = set(value) - {"answer", "doc_ids", "meta"}
    answer = value.get("answer")
    if not isinstance(answer, str) or extra:
        raise TransportInvalid(R.SCHEMA, detail="expected {answer: str, doc_ids?, meta?}, got "
                               f"keys {sorted(value)}")
    ids = value.get("doc_ids")
    if ids is not None and (not isinstance(ids, list | tuple)
                            or not all(isinstance(d, str | int) for d in ids)):
        raise TransportInvalid(R.SCHEMA, detail="'doc_ids' must be a list of ids")
    meta = value.get("meta") or {}
    if not isinstance(meta, Mapping):
        raise TransportInvalid(R.SCHEMA, detail="'meta' must be a mapping")
    return AnswerOutcome(answer=answer,
                         doc_ids=tuple(str(d) for d in ids) if ids is not None else None,
                         latency_s=latency_s, meta={str(k): v for k, v in meta.items()})


def search_path(config: PythonSystemConfig, base_dir: Path | None) -> Path | None:
    """``python_path`` resolved against the protocol's folder."""
    if config.python_path is None:
        return None
    search = Path(config.python_path)
    return base_dir / search if not search.is_absolute() and base_dir is not None else search


def python_spec(config: PythonSystemConfig, base_dir: Path | None) -> dict[str, Any]:
    """The spec of a Python system (its target imported if it is not yet)."""
    search = search_path(config, base_dir)
    load_target(config.target, search)
    module_name = config.target.partition(":")[0]
    roots = target_roots(module_name, [p for p in (base_dir, search) if p is not None])
    spec: dict[str, Any] = {"kind": "python", "target": config.target,
                            "kwargs": dict(config.kwargs), "code": code_identity(config.target),
                            "imports": imported_code(module_name, roots)}
    if config.bind_files:
        spec["files"] = bound_files(config.bind_files, base_dir)
    return spec


TRACEBACK_CHARS = 4096


def traceback_tail(exc: BaseException, limit: int = TRACEBACK_CHARS) -> str:
    """``exc``'s traceback, redacted, cut to its last ``limit`` characters at a line start
    (the innermost frames and the exception itself are kept; the outer frames go first)."""
    text = redact("".join(traceback.format_exception(exc)))
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    cut = cut[cut.find("\n") + 1:] if "\n" in cut else cut
    return "... (outer frames cut)\n" + cut


class PythonSystem:
    """One state's Python callable."""

    def __init__(self, state: str, config: PythonSystemConfig, run: RunConfig,
                 base_dir: Path | None = None):
        self.state = state
        self.config = config
        self._base_dir = base_dir
        self._fn = load_target(config.target, search_path(config, base_dir))
        self._spec: dict[str, Any] | None = None
        self._async = inspect.iscoroutinefunction(self._fn)
        self.accepts_evidence = accepts_evidence(self._fn)
        self._timeout_s = run.timeout_s
        self._pool = None if self._async else ThreadPoolExecutor(
            max_workers=run.concurrency, thread_name_prefix=f"snapaudit-{state}")

    def spec(self) -> dict[str, Any]:
        if self._spec is None:  # once: bind_files may be large
            self._spec = python_spec(self.config, self._base_dir)
        return self._spec

    async def answer(self, call: AnswerCall) -> AnswerOutcome:
        pc = PythonCall(call.question, call.question_id, call.state, call.repeat, call.seed,
                        call.attempt)
        kwargs = dict(self.config.kwargs)
        if call.evidence is not None and self.accepts_evidence:  # snapaudit attribute's
            kwargs["evidence"] = call.evidence.documents
        start = time.monotonic()
        try:
            if self._async:
                value = await asyncio.wait_for(self._fn(pc, **kwargs), self._timeout_s)
            else:
                loop = asyncio.get_running_loop()
                value = await asyncio.wait_for(
                    loop.run_in_executor(self._pool, lambda: self._fn(pc, **kwargs)),
                    self._timeout_s)
        except TimeoutError:
            raise TransportInvalid(R.TIMEOUT, detail=f"no return within {self._timeout_s:g} s")\
                from None
        except TransportInvalid:
            raise
        except Exception as exc:  # the pipeline's own failure: one retryable attempt
            message = " ".join(str(exc).split())[:300]
            raise TransportInvalid(R.EXCEPTION, detail=f"{type(exc).__name__}: {message}",
                                   traceback=traceback_tail(exc)) from None
        return to_outcome(value, time.monotonic() - start)

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
