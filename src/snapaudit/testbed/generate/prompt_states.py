"""Saved llama.cpp states of one local model: the system prefix and whole prompts.

A state is llama.cpp's own context state (``llama_state_get_data``: the KV cache of the
evaluated tokens), the logits of the last token (which that state does not hold in the
llama.cpp of llama-cpp-python 0.3.36) and the tokens it holds. Restoring both puts the
context back bit for bit, so sampling from a restored whole-prompt state draws exactly what
sampling right after that prompt's prefill draws: a repeat of a prompt costs only its
decode. :class:`PromptStates` keeps whole-prompt states in least-recently-used order within
a byte budget (``[generator] prompt_cache_mb``).

Why not evaluate the last prompt token again after restoring the state without it (what
llama-cpp-python's ``load_state`` leads its ``generate`` to do)? The logits of a token
evaluated alone differ from those of the same token evaluated inside the prompt's batch
(measured: 3 of 7 prompts, by up to 0.6), so the repeat would not draw what a fresh prefill
draws. Llama-cpp-python's ``save_state``/``load_state`` also copy its score matrix (25 MB
for the 130-token system prefix, unused without ``logits_all``); :func:`save` and
:func:`restore` keep only what sampling reads, and mark the logits live, which holds for
llama-cpp-python versions that track ``_requires_eval`` (:func:`exact_restore_supported`).
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, eq=False)
class SavedState:
    """llama.cpp's context state after evaluating exactly ``tokens`` from an empty context."""

    tokens: tuple[int, ...]
    data: Any  # a ctypes byte array: llama_state_get_data
    used: int  # the bytes of ``data`` the state takes
    logits: Any  # ctypes floats: the last token's logits (None: there were none)
    seed: int  # llama-cpp-python's seed when saved (it draws a call's seed from it when the
    # call sends none: seed_per_call = false)

    @property
    def n_bytes(self) -> int:
        """The memory it holds."""
        return ctypes.sizeof(self.data) + (0 if self.logits is None
                                           else ctypes.sizeof(self.logits))


def exact_restore_supported(llm: Any) -> bool:
    """Whether this llama-cpp-python samples a restored whole prompt without evaluating its
    last token again (it tracks whether the current logits are live: ``_requires_eval``)."""
    return hasattr(llm, "_requires_eval")


def state_size(llm: Any) -> int:
    """The bytes of llama.cpp's state of ``llm`` now (what :func:`save` keeps, less the
    last token's logits)."""
    import llama_cpp

    return int(llama_cpp.llama_state_get_size(llm.ctx))


def save(llm: Any, tokens: Sequence[int], size: int | None = None) -> SavedState:
    """The state of ``llm``, which has evaluated exactly ``tokens`` (``size``: its
    :func:`state_size`, when known)."""
    import llama_cpp

    size = state_size(llm) if size is None else size
    data = (ctypes.c_uint8 * size)()
    n_bytes = int(llama_cpp.llama_state_get_data(llm.ctx, data, size))
    if n_bytes > size:
        raise RuntimeError("llama_state_get_data wrote past its buffer")
    logits = None
    row = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    if row:
        n_vocab = llm.n_vocab()
        logits = (ctypes.c_float * n_vocab)()
        ctypes.memmove(logits, row, n_vocab * ctypes.sizeof(ctypes.c_float))
    return SavedState(tuple(tokens), data, n_bytes, logits, int(llm._seed))


def restore(llm: Any, state: SavedState) -> bool:
    """Put ``llm`` in ``state``: its context, its token record and, where the state has them,
    the last token's logits, marked live (llama-cpp-python then samples without evaluating
    anything). False when the context offered no logits row to restore them into (sample
    only after evaluating more tokens then)."""
    import llama_cpp

    if int(llama_cpp.llama_state_set_data(llm.ctx, state.data, state.used)) != state.used:
        raise RuntimeError("llama_state_set_data did not read the whole saved state")
    n = len(state.tokens)
    llm.input_ids[:n] = state.tokens
    llm.n_tokens = n
    llm.set_seed(state.seed)
    if state.logits is None:
        return False
    row = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    if not row:
        return False
    ctypes.memmove(row, state.logits, ctypes.sizeof(state.logits))
    llm._requires_eval = False  # the logits of the last token are in place
    return True


class PromptStates:
    """Whole-prompt states by key, least recently used first out, within ``budget`` bytes."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._states: OrderedDict[Hashable, SavedState] = OrderedDict()
        self.bytes = 0

    def __contains__(self, key: Hashable) -> bool:
        return key in self._states

    def __len__(self) -> int:
        return len(self._states)

    def get(self, key: Hashable) -> SavedState | None:
        state = self._states.get(key)
        if state is not None:
            self._states.move_to_end(key)
        return state

    def fits(self, n_bytes: int) -> bool:
        return 0 < n_bytes <= self.budget

    def put(self, key: Hashable, state: SavedState) -> None:
        """Keep ``state`` (evicting the least recently used) when it fits the budget at all."""
        if not self.fits(state.n_bytes):
            return
        old = self._states.pop(key, None)
        if old is not None:
            self.bytes -= old.n_bytes
        while self._states and self.bytes + state.n_bytes > self.budget:
            _, evicted = self._states.popitem(last=False)
            self.bytes -= evicted.n_bytes
        self._states[key] = state
        self.bytes += state.n_bytes

    def clear(self) -> None:
        self._states.clear()
        self.bytes = 0
