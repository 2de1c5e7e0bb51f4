"""Protocol section for the built-in testbed (``[testbed]``): corpus, retriever, rendering.

Owned by the corpus/retrieval stage.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from snapaudit._model import Frozen


class RetrieverConfig(Frozen):
    kind: Literal["bm25", "dense", "http"] = "bm25"
    k1: float = 0.9
    b: float = 0.4
    # dense
    model: str | None = None
    # http search API
    url: str | None = None
    method: Literal["GET", "POST"] = "POST"
    query_param: str = "query"
    k_param: str = "k"
    results_path: str = "results"
    id_path: str = "id"
    url_path: str = "url"
    text_path: str = "text"
    # optional: send the state's shard count under this parameter name (None: not sent)
    prefix_param: str | None = None
    timeout_s: float = Field(default=30.0, gt=0)


class RenderConfig(Frozen):
    max_chars: int = Field(default=1200, ge=1)
    include_url: bool = True


class TestbedConfig(Frozen):
    """The single-turn retriever-generator. ``states`` maps state -> number of shards (0 = none)."""

    __test__ = False  # not a pytest test class, despite its name

    corpus: str = ""
    states: dict[str, int] = Field(default_factory=dict)
    top_k: int = Field(default=8, ge=1)
    retriever: RetrieverConfig = RetrieverConfig()
    render: RenderConfig = RenderConfig()
    prompt: Literal["default"] = "default"
