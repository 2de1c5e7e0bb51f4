"""Protocol section for the built-in testbed (``[testbed]``): corpus, retriever, rendering.

Owned by the corpus/retrieval stage.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from snapaudit._kinds import KindModel, flat_family
from snapaudit._model import Frozen


class Bm25RetrieverConfig(KindModel):
    kind: Literal["bm25"] = "bm25"
    k1: float = 0.9
    b: float = 0.4


class DenseRetrieverConfig(KindModel):
    kind: Literal["dense"] = "dense"
    model: str | None = None


class HttpRetrieverConfig(KindModel):
    """A search API."""

    kind: Literal["http"] = "http"
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


# one model per kind, written in the flat shape of the single model they replaced
# (snapaudit._kinds), so protocols and their hashes are unchanged
flat_family("kind", {"bm25": Bm25RetrieverConfig, "dense": DenseRetrieverConfig,
                     "http": HttpRetrieverConfig},
            ["kind", "k1", "b", "model", "url", "method", "query_param", "k_param",
             "results_path", "id_path", "url_path", "text_path", "prefix_param", "timeout_s"])


def _kind(value: Any) -> Any:
    if isinstance(value, dict):
        return value.get("kind", "bm25")
    return getattr(value, "kind", None)


RetrieverConfig = Annotated[Annotated[Bm25RetrieverConfig, Tag("bm25")]
                            | Annotated[DenseRetrieverConfig, Tag("dense")]
                            | Annotated[HttpRetrieverConfig, Tag("http")],
                            Discriminator(_kind)]


class RenderConfig(Frozen):
    max_chars: int = Field(default=1200, ge=1)
    include_url: bool = True


class TestbedConfig(Frozen):
    """The single-turn retriever-generator. ``states`` maps state -> number of shards (0 = none)."""

    __test__ = False  # not a pytest test class, despite its name

    corpus: str = ""
    states: dict[str, int] = Field(default_factory=dict)
    top_k: int = Field(default=8, ge=1)
    retriever: RetrieverConfig = Bm25RetrieverConfig()
    render: RenderConfig = RenderConfig()
    prompt: Literal["default"] = "default"
