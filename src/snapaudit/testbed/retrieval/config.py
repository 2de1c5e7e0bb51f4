"""Protocol section for the built-in testbed (``[testbed]``): corpus, retriever, rendering.

Owned by the corpus/retrieval stage.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
    model_validator,
)

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


class PathsConfig(Frozen):
    """``[testbed.paths]``: ``count`` shard orders (path 0 the protocol's order 0, 1, ...;
    the others seeded permutations, :mod:`snapaudit.testbed.paths`)."""

    count: int = Field(default=1, ge=1, le=64)
    seed: int = 0


class TestbedConfig(Frozen):
    """The single-turn retriever-generator. ``states`` maps state -> number of shards (0 = none)."""

    __test__ = False  # not a pytest test class, despite its name

    corpus: str = ""
    states: dict[str, int] = Field(default_factory=dict)
    top_k: int = Field(default=8, ge=1)
    retriever: RetrieverConfig = Bm25RetrieverConfig()
    render: RenderConfig = RenderConfig()
    prompt: Literal["default"] = "default"
    # random corpus paths; None (or count 1): the one path of the protocol's shard order
    paths: PathsConfig | None = None

    @property
    def path_count(self) -> int:
        return self.paths.count if self.paths is not None else 1

    @model_validator(mode="after")
    def _check_paths(self) -> TestbedConfig:
        if self.path_count > 1 and self.retriever.kind == "http":
            raise ValueError("testbed.paths.count > 1 needs an in-process retriever "
                             "(retriever.kind = 'bm25' or 'dense'): a search service is "
                             "asked for a shard count, not a set of shards")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """One path (no section, or count 1) is left out, so protocols keep their hashes."""
        data: dict[str, Any] = handler(self)
        if self.path_count == 1:
            data.pop("paths", None)
        return data
