"""A RAG pipeline written in Python as a system: ``[systems.<state>] target = "pkg.mod:fn"``.

The target is imported once per state and called once per attempt with a typed
:class:`PythonCall` and the state's ``kwargs`` (and ``resources=``, what ``setup`` returned,
when a ``setup`` is configured). How its calls run is the state's execution settings:
``max_concurrency`` calls at once (1 for a sync target unless ``thread_safe``), in threads
and on the event loop (``isolation = "thread"``: :mod:`snapaudit.systems.python_threads`) or
in worker processes (``"process"``: :mod:`snapaudit.systems.workers`). It returns the
answer as a string or a mapping ``{"answer": str, "doc_ids"?: [str, ...], "doc_texts"?:
[str, ...], "meta"?: {...}, "steps"?: [{"tool", "input", "doc_ids", "output"?}, ...],
"turn_answers"?: [str, ...]}`` (``doc_texts``: each document's text, hashed into the evidence
and never stored; ``steps``: an agent's trajectory, :mod:`snapaudit.tables.steps`;
``turn_answers``: one answer per turn of a conversation's ``call.turns``, required then and
refused otherwise, ``answer`` then optional and the last, :mod:`snapaudit.tables.turns`).
Any exception it raises is one transport-invalid attempt whose reason names the exception's
type and message (its redacted traceback, at most 4 KB of the innermost frames, is kept in
the attempt's meta); the engine retries it under the same policy as an HTTP failure.

The spec binds the target, its kwargs, its ``setup`` and their code: the SHA-256 of each
one's module source file, or the installed distribution's name and version when the module
comes from one; the local modules they import and the installed distributions those use
(``imports``), and the ``bind_files`` (``files``): :mod:`snapaudit.systems.python_code`.
:func:`python_spec` is that spec without building the system (a finished run checks its
code cheaply; ``setup`` is imported, never run). The execution settings are not in it.
What the calls import later (a helper imported inside a function) is reported after the
call that imported it to :attr:`PythonSystem.on_imports` (the run records it durably before
the answer is accepted, :mod:`snapaudit.run.bound_systems`).

A sync target in ``isolation = "thread"`` shares its slots with every state whose target
shares its function or modules (:mod:`snapaudit.systems.python_slots`). A target that
raises a :class:`~snapaudit.errors.ConfigError` (an adapter's ``DocIdError``: a document
without a stable id) stops the stage at once: retrying cannot fix it.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.hashing import sha256_file
from snapaudit.systems.base import (
    AnswerCall,
    AnswerOutcome,
    reply_steps,
    reply_turns,
    text_hashes,
)
from snapaudit.systems.config import PythonSystemConfig, RunConfig
from snapaudit.systems.failure import R
from snapaudit.systems.loop_watch import BLOCKED_S
from snapaudit.systems.python_call import TRACEBACK_CHARS as TRACEBACK_CHARS
from snapaudit.systems.python_call import ModuleWatch, PythonCall, Returned, load_target
from snapaudit.systems.python_call import traceback_tail as traceback_tail
from snapaudit.systems.python_code import (
    CallImports,
    bound_files,
    imported_code,
    local_modules,
    target_roots,
)
from snapaudit.systems.python_slots import SlotGroups
from snapaudit.systems.python_threads import AsyncCalls, SetupOnce, SyncCalls, blocking_fix
from snapaudit.systems.workers import WorkerPool, WorkerSpec

# (state, what a call imported that the spec does not hold) -> None; called before the
# call's outcome is returned (the run records it durably)
ImportsHook = Callable[[str, dict[str, dict[str, Any]]], None]

__all__ = ["PythonCall", "PythonSystem", "code_identity", "load_target", "python_spec",
           "to_outcome", "traceback_tail"]


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


def to_outcome(value: Any, latency_s: float, turns: tuple[str, ...] | None = None
               ) -> AnswerOutcome:
    """A callable's return value as an outcome to a call of ``turns`` (a conversation's;
    None: one question); TransportInvalid("schema") when malformed."""
    if isinstance(value, str):
        reply_turns(value, None, turns)  # a conversation needs its turn answers
        return AnswerOutcome(answer=value, latency_s=latency_s)
    if not isinstance(value, Mapping):
        raise TransportInvalid(R.SCHEMA, detail="the callable must return a str or a mapping "
                               f"with 'answer', got {type(value).__name__}")
    extra = set(value) - {"answer", "doc_ids", "doc_texts", "meta", "steps", "turn_answers"}
    answer = value.get("answer")
    if not (isinstance(answer, str) or (answer is None and "turn_answers" in value)) or extra:
        raise TransportInvalid(R.SCHEMA, detail="expected {answer: str, doc_ids?, doc_texts?, "
                               f"meta?, steps?, turn_answers?}}, got keys "
                               f"{sorted(map(str, value))}")
    answer, turn_answers = reply_turns(answer, value.get("turn_answers"), turns)
    ids = value.get("doc_ids")
    if ids is not None and (not isinstance(ids, list | tuple)
                            or not all(isinstance(d, str | int) for d in ids)):
        raise TransportInvalid(R.SCHEMA, detail="'doc_ids' must be a list of ids")
    meta = value.get("meta") or {}
    if not isinstance(meta, Mapping):
        raise TransportInvalid(R.SCHEMA, detail="'meta' must be a mapping")
    return AnswerOutcome(answer=answer,
                         doc_ids=tuple(str(d) for d in ids) if ids is not None else None,
                         latency_s=latency_s, meta={str(k): v for k, v in meta.items()},
                         doc_hashes=text_hashes(ids, value.get("doc_texts")),
                         steps=reply_steps(value.get("steps")), turn_answers=turn_answers)


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
    folders = [p for p in (base_dir, search) if p is not None]
    spec: dict[str, Any] = {"kind": "python", "target": config.target,
                            "kwargs": dict(config.kwargs), "code": code_identity(config.target),
                            "imports": imported_code(module_name,
                                                     target_roots(module_name, folders))}
    if config.setup:  # its module bound like the target's (without running it)
        load_target(config.setup, search)
        setup_module = config.setup.partition(":")[0]
        spec["setup"] = {"target": config.setup, "code": code_identity(config.setup)}
        more = imported_code(setup_module, target_roots(setup_module, folders))
        spec["imports"] = {part: dict(sorted({**spec["imports"][part], **more[part]}.items()))
                           for part in ("modules", "distributions")}
    if config.bind_files:
        spec["files"] = bound_files(config.bind_files, base_dir)
    return spec


def _roots(config: PythonSystemConfig, base_dir: Path | None) -> list[Path]:
    folders = [p for p in (base_dir, search_path(config, base_dir)) if p is not None]
    names = [t.partition(":")[0] for t in (config.target, config.setup) if t]
    return list(dict.fromkeys(r for n in names for r in target_roots(n, folders)))


class PythonSystem:
    """One state's Python callable, run as its execution settings say. ``slot_groups``: the
    run's (states sharing a sync target share its slots); without it the state has its
    own."""

    def __init__(self, state: str, config: PythonSystemConfig, run: RunConfig,
                 base_dir: Path | None = None, slot_groups: SlotGroups | None = None):
        self.state = state
        self.config = config
        self._base_dir = base_dir
        search = search_path(config, base_dir)
        fn = load_target(config.target, search)
        if config.setup:
            load_target(config.setup, search)  # an import error is a ConfigError now
        self._spec: dict[str, Any] | None = None
        is_async = inspect.iscoroutinefunction(fn)
        self.accepts_evidence = accepts_evidence(fn)
        self.slots = config.slots(run.concurrency, is_async)
        roots = _roots(config, base_dir)
        self.imports = CallImports(roots, base_dir)
        self.on_imports: ImportsHook | None = None
        self._watch: ModuleWatch | None = None  # made at the first call
        self._calls: AsyncCalls | SyncCalls | WorkerPool
        setup = SetupOnce(config.setup, search, state, config.kwargs)
        if config.isolation == "process":
            self._calls = WorkerPool(WorkerSpec(config.target, config.setup,
                                                str(search) if search else None,
                                                dict(config.kwargs), state),
                                     self.slots, run.timeout_s)
        elif is_async:
            self._calls = AsyncCalls(fn, setup, self.slots, run.timeout_s, state, search)
        else:
            groups = slot_groups if slot_groups is not None else SlotGroups()
            module = config.target.partition(":")[0]
            shares = [("function", id(fn)),
                      *(("module", m) for m in [module, *local_modules(module, roots)])]
            groups.join(state, shares, self.slots, config.thread_safe)
            self._calls = SyncCalls(fn, setup, search,
                                    lambda: groups.slots(state, run.timeout_s),
                                    lambda: groups.close(state))

    def spec(self) -> dict[str, Any]:
        if self._spec is None:  # once: bind_files may be large
            self._spec = python_spec(self.config, self._base_dir)
        return self._spec

    async def answer(self, call: AnswerCall) -> AnswerOutcome:
        extra: dict[str, Any] = {}
        if call.evidence is not None and self.accepts_evidence:  # snapaudit attribute's
            extra["evidence"] = call.evidence.documents
        if self._watch is None:
            self._watch = ModuleWatch()
        returned = await self._calls.call(PythonCall(
            call.question, call.question_id, call.state, call.repeat, call.seed, call.attempt,
            call.turns), extra)
        gained = returned.modules if self.config.isolation == "process" \
            else self._watch.gained()
        new = self.imports.observe(gained) if gained else {}
        if new and self.on_imports is not None:
            self.on_imports(self.state, new)
        return outcome_of(returned, self.state, call.turns)

    async def aclose(self) -> None:
        await self._calls.aclose()


def outcome_of(returned: Returned, state: str, turns: tuple[str, ...] | None = None
               ) -> AnswerOutcome:
    """An attempt's outcome from what the call gave (TransportInvalid for a raised exception
    or a malformed value); a call that blocked the loop is accepted with a warning in the
    attempt's meta."""
    if returned.config_error:
        raise ConfigError(f"state {state}: the target raised {returned.error} (a configuration "
                          "error: not retried; fix it and run again)")
    if returned.error is not None:
        raise TransportInvalid(R.EXCEPTION, detail=returned.error, traceback=returned.traceback)
    out = to_outcome(returned.value, returned.latency_s, turns)
    if returned.blocked_s > BLOCKED_S:
        out.meta["snapaudit_warning"] = (
            f"the event loop was blocked for {returned.blocked_s:.1f} s during this call (an "
            f"async target that blocks; no other call ran meanwhile): {blocking_fix(state)}")
    return out
