"""One replica of the embedded model: a llama.cpp instance, its saved states, one call at a time.

A call starts from a saved state, never from whatever the previous call left in the KV cache
(that made a draw depend on call order: 2 of 64 answers changed under a shuffled order):

- the **system prefix**: for each system message the token prefix every chat prompt with
  that system message shares (found with the model's own GGUF chat template), evaluated
  once and restored before every call;
- the **whole prompt** (``[generator] prompt_cache_mb`` > 0): after the first call of a
  prompt has evaluated it (from the system prefix, as above), the state is saved; a later
  call of the same prompt (a repeat, with its own seed) restores it and only decodes. The
  restored KV cache and logits are the saved bytes, so the draw is the one a fresh prefill
  of the prompt would give (:mod:`snapaudit.testbed.generate.prompt_states`).

Not thread-safe: a :class:`LocalModel` is used by one worker thread
(:mod:`snapaudit.testbed.generate.local_replicas`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from snapaudit.errors import BackendError, TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.testbed.generate._gbnf import grammar_for
from snapaudit.testbed.generate._http import left_to_provider
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import LocalGeneratorConfig
from snapaudit.testbed.generate.prompt_states import (
    PromptStates,
    SavedState,
    exact_restore_supported,
    restore,
    save,
    state_size,
)

# User messages whose chat prompts bound the shared prefix of a system message.
_PROBE_USERS = ("Question: a", "<evidence>\n[1] b", "z", " 1")
MAX_PREFIX_STATES = 8
_LOADING = threading.Lock()  # replicas load their models one at a time


def prompt_key(request: GenerationRequest) -> Hashable:
    """What a whole-prompt state is saved under: the prompt's two messages."""
    return (request.system, request.user)


class LocalModel:
    """One llama.cpp model (a replica), loaded on first use; see the module doc."""

    def __init__(self, model_path: Path, config: LocalGeneratorConfig, index: int = 0,
                 cache_bytes: int = 0) -> None:
        self.model_path = model_path
        self.config = config
        self.index = index
        self._llm: Any = None
        self._grammars: dict[str, Any] = {}
        self._prefixes: dict[str, tuple[SavedState | None, int]] = {}
        self.prompts = PromptStates(cache_bytes)
        self._reuse = False  # whole-prompt states: set when the model loads

    def holds(self, key: Hashable) -> bool:
        """Whether the whole-prompt state of ``key`` is saved here."""
        return key in self.prompts

    def generate(self, request: GenerationRequest, queued: float) -> GenerationResult:
        llm = self._model()
        kwargs = self._sampling(request)
        start = time.perf_counter()
        try:
            prefix_tokens, how = self._prompt(llm, request)
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
                  "kv_prefix_tokens": prefix_tokens,
                  "kv_prompt_state": how,
                  "replica": self.index},
        )

    def _prompt(self, llm: Any, request: GenerationRequest) -> tuple[int, str]:
        """Put ``llm`` where the call starts: the saved whole prompt ("loaded"), the whole
        prompt evaluated from the system prefix and saved ("saved"), or the system prefix
        with the rest left to llama-cpp-python ("none"). Returns the prefix's token count."""
        key = prompt_key(request)
        saved = self.prompts.get(key) if self._reuse else None
        if saved is not None and request.system in self._prefixes and restore(llm, saved):
            return self._prefixes[request.system][1], "loaded"
        count = self._load_prefix(llm, request.system)
        if not self._reuse:
            return count, "none"
        tokens = chat_prompt_tokens(llm, request.system, request.user)
        if len(tokens) >= llm.n_ctx() or tokens[:count] != list(llm.input_ids[:count]):
            return count, "none"  # the library reports the overlong prompt itself
        llm.eval(tokens[count:])  # what llama-cpp-python's generate would evaluate
        size = state_size(llm)
        if not self.prompts.fits(size + 4 * llm.n_vocab()):
            return count, "none"
        self.prompts.put(key, save(llm, tokens, size))
        return count, "saved"

    def _load_prefix(self, llm: Any, system: str) -> int:
        """Put ``llm`` in the saved state of ``system``'s shared prefix; its token count."""
        if system not in self._prefixes:
            tokens = shared_prefix(llm, system)
            llm.reset()
            state = None
            if tokens:
                llm.eval(tokens)
                state = save(llm, tokens)
            if len(self._prefixes) >= MAX_PREFIX_STATES:
                self._prefixes.pop(next(iter(self._prefixes)))
            self._prefixes[system] = (state, len(tokens))
        state, count = self._prefixes[system]
        if state is None:
            llm.reset()
        else:
            restore(llm, state)
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
            llm = load_llama(self.model_path, self.config.n_ctx, self.config.n_threads)
            self._reuse = (self.prompts.budget > 0 and exact_restore_supported(llm)
                           and llm.chat_format == "chat_template.default")
            self._llm = llm
        return self._llm

    def close(self) -> None:
        self._prefixes.clear()
        self.prompts.clear()
        if self._llm is not None:
            self._llm.close()
            self._llm = None


def load_llama(model_path: Path | str, n_ctx: int, n_threads: int) -> Any:
    """A ``llama_cpp.Llama`` on ``model_path`` (one load at a time in this process)."""
    try:
        from llama_cpp import Llama
    except ImportError:
        raise BackendError(
            "the local generator needs llama-cpp-python (pip install 'snapaudit[local]')"
        ) from None
    try:
        with _LOADING:
            return Llama(model_path=str(model_path), n_ctx=n_ctx, n_threads=n_threads,
                         n_threads_batch=n_threads, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise BackendError(f"cannot load {model_path}: {exc}") from None


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
