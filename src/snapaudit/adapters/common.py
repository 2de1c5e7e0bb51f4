"""What the framework adapters share: answers, document ids, seeds, model locks, targets.

* :func:`answer_text`: the answer of a framework's return value: a ``str``, a chat message
  (``AIMessage.content``), a LlamaIndex ``Response`` (``.response``), a completion
  (``.text``), a chat response (``.message.content``) or a mapping with ``"answer"``.
* :func:`doc_id`: a stable id of one retrieved item: LangChain ``Document.id``, LlamaIndex
  ``NodeWithScore.node.node_id`` (or a node's ``node_id``), or the metadata key ``id_key``
  of either. A missing id (LangChain's ``Document.id`` defaults to ``None``) is a
  :class:`DocIdError` naming the type it got and the fix; an id is never made up.
* The per-call seed: a target sets it (:func:`seed_scope`) for the duration of one call;
  the seeded LLM wrappers read it (:func:`current_seed`).
* llama.cpp: one ``llama_cpp.Llama`` called from two threads at once aborts the process, and
  its prompt-prefix cache makes a call depend on the call before it. :func:`model_lock` is the
  one lock per model instance, :func:`reset_llama` drops the cached prefix before a call, so
  the same prompt and seed give the same answer whatever ran before.
* :func:`make_target`: a ``fn(call, **kwargs)`` (or ``async def``) target that builds the
  pipeline once per distinct ``kwargs`` (the protocol's per-state kwargs) and calls it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from types import ModuleType
from typing import Any

from snapaudit.errors import ConfigError
from snapaudit.systems.python import PythonCall

_SEED: ContextVar[int | None] = ContextVar("snapaudit_adapter_seed", default=None)


class DocIdError(ConfigError):
    """A retrieved item without a usable stable id (the message names its type and the fix)."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` of an optional framework; a ConfigError naming the extra if absent."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"{module} is not installed ({exc}): pip install "
                          f"'snapaudit[{extra}]'") from None


def _type_name(obj: object) -> str:
    cls = type(obj)
    return f"{cls.__module__.split('.')[0]}.{cls.__qualname__}"


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: strings and {"type": "text", "text": ...}
        parts = [b if isinstance(b, str) else b.get("text", "") for b in content
                 if isinstance(b, str) or (isinstance(b, Mapping) and b.get("type") == "text")]
        return "".join(str(p) for p in parts)
    return None


def answer_text(value: Any) -> str:
    """The answer text of ``value`` (see the module doc); TypeError naming what it got."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if "answer" in value:
            return answer_text(value["answer"])
    elif hasattr(value, "response") and hasattr(value, "source_nodes"):  # LlamaIndex Response
        if isinstance(value.response, str):
            return value.response
        raise TypeError(f"{_type_name(value)}.response is {value.response!r}: a streaming or "
                        "empty response has no answer text (build the engine with "
                        "streaming=False)")
    else:
        for attr in ("content", "text"):  # a chat message; a completion
            text = _content_text(getattr(value, attr, None))
            if text is not None:
                return text
        message = getattr(value, "message", None)  # a chat response
        if message is not None and (text := _content_text(getattr(message, "content", None)))\
                is not None:
            return text
    raise TypeError(f"cannot take an answer from {_type_name(value)}: return a str, a chat "
                    "message, a LlamaIndex Response or a mapping with 'answer'")


def _checked(value: Any, what: str, fix: str) -> str:
    if value is None or isinstance(value, bool) or not isinstance(value, str | int):
        raise DocIdError(f"{what} is {value!r}: {fix}")
    text = str(value)
    if not text.strip():
        raise DocIdError(f"{what} is {value!r} (empty): {fix}")
    return text


def doc_id(item: Any, id_key: str | None = None) -> str:
    """The stable id of one retrieved item (see the module doc)."""
    if hasattr(item, "node") and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        return doc_id(item.node, id_key)
    kind = _type_name(item)
    if id_key is not None:
        metadata = getattr(item, "metadata", None)
        if not isinstance(metadata, Mapping):
            raise DocIdError(f"{kind} has no metadata to read id_key={id_key!r} from")
        return _checked(metadata.get(id_key), f"{kind}.metadata[{id_key!r}]",
                        f"put a stable id under {id_key!r} in every document's metadata")
    if hasattr(item, "page_content"):  # LangChain Document
        return _checked(getattr(item, "id", None), "LangChain Document.id",
                        "set Document(id=...) or pass id_key='...' naming a metadata key "
                        "that holds a stable id")
    if hasattr(item, "node_id"):  # a LlamaIndex node
        return _checked(item.node_id, f"{kind}.node_id",
                        "set TextNode(id_=...) / Document(doc_id=...) or pass id_key='...'")
    if isinstance(item, str | int) and not isinstance(item, bool):
        return _checked(item, "the document id", "return stable ids")
    raise DocIdError(f"cannot take a document id from {kind}: expected a LangChain Document, "
                     "a LlamaIndex node or NodeWithScore, or a str id")


def doc_ids(items: Iterable[Any], id_key: str | None = None) -> list[str]:
    """:func:`doc_id` of each item, in order."""
    return [doc_id(item, id_key) for item in items]


def doc_text(item: Any) -> str | None:
    """The text of one retrieved item (LangChain ``Document.page_content``, a LlamaIndex
    node's ``get_content()``), None for a bare id: hashed into the evidence, so a document
    whose text changed under the same id is reported as changed."""
    if hasattr(item, "node") and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        return doc_text(item.node)
    if isinstance(getattr(item, "page_content", None), str):  # LangChain Document
        return str(item.page_content)
    content = getattr(item, "get_content", None)  # a LlamaIndex node
    text = content() if callable(content) else None
    return text if isinstance(text, str) else None


def current_seed() -> int | None:
    """The seed of the call in progress (None outside an adapter target)."""
    return _SEED.get()


@contextlib.contextmanager
def seed_scope(seed: int) -> Iterator[None]:
    """Make ``seed`` the current seed while the block runs (this thread/task only)."""
    token = _SEED.set(seed)
    try:
        yield
    finally:
        _SEED.reset(token)


_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def is_llama(model: object) -> bool:
    """Whether ``model`` is a ``llama_cpp.Llama`` (checked by type, llama_cpp not imported)."""
    cls = type(model)
    return cls.__name__ == "Llama" and cls.__module__.startswith("llama_cpp")


def model_lock(model: object) -> threading.Lock:
    """The one lock of the model instance ``model`` (the same object, the same lock)."""
    with _LOCKS_GUARD:
        lock = _LOCKS.get(model)
        if lock is None:
            lock = _LOCKS[model] = threading.Lock()
        return lock


def reset_llama(model: Any) -> None:
    """Drop a llama.cpp model's cached prompt prefix: the next call evaluates its whole prompt
    (the same prompt and seed then give the same answer whatever ran before)."""
    if is_llama(model):
        model.reset()


def _key(kwargs: Mapping[str, Any]) -> str:
    return json.dumps(kwargs, sort_keys=True, default=repr)


class Builds:
    """``build(**kwargs)`` once per distinct kwargs, thread-safe (a model loads once)."""

    def __init__(self, build: Callable[..., Any]):
        self._build = build
        self._built: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get(self, kwargs: Mapping[str, Any]) -> Any:
        key = _key(kwargs)
        with self._lock:
            if key not in self._built:
                self._built[key] = self._build(**kwargs)
            return self._built[key]


def make_target(build: Callable[..., Any], call_sync: Callable[[Any, PythonCall], Any],
                call_async: Callable[[Any, PythonCall], Awaitable[Any]], *,
                asynchronous: bool, name: str) -> Callable[..., Any]:
    """A Python-system target: ``fn(call, **kwargs)`` (``async def`` when ``asynchronous``)
    calling ``call_sync`` / ``call_async`` on the pipeline ``build(**kwargs)`` under the
    call's seed."""
    builds = Builds(build)

    if asynchronous:
        async def atarget(call: PythonCall, **kwargs: Any) -> Any:
            pipeline = builds.get(kwargs)
            with seed_scope(call.seed):
                return await call_async(pipeline, call)

        atarget.__qualname__ = atarget.__name__ = f"{name}_async_target"
        return atarget

    def target(call: PythonCall, **kwargs: Any) -> Any:
        pipeline = builds.get(kwargs)
        with seed_scope(call.seed):
            return call_sync(pipeline, call)

    target.__qualname__ = target.__name__ = f"{name}_target"
    return target


def result(answer: Any, items: Iterable[Any] | None, id_key: str | None) -> dict[str, Any]:
    """The target's return value: ``{"answer", "doc_ids"?, "doc_texts"?}`` (the texts when
    every item has one)."""
    out: dict[str, Any] = {"answer": answer_text(answer)}
    if items is not None:
        listed = list(items)
        out["doc_ids"] = doc_ids(listed, id_key)
        texts = [doc_text(item) for item in listed]
        if all(isinstance(t, str) for t in texts):
            out["doc_texts"] = texts
    return out
