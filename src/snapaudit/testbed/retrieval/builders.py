"""One builder per retriever kind, ``(testbed) -> Retriever``; each imports its backend only
when called (the kinds are registered in :mod:`snapaudit.testbed.retrieval.registry`)."""

from __future__ import annotations

from snapaudit.errors import ConfigError
from snapaudit.testbed.retrieval.base import Retriever
from snapaudit.testbed.retrieval.config import (
    Bm25RetrieverConfig,
    DenseRetrieverConfig,
    HttpRetrieverConfig,
    TestbedConfig,
)


def bm25(testbed: TestbedConfig) -> Retriever:
    from snapaudit.testbed.retrieval.bm25 import Bm25Retriever

    cfg = testbed.retriever
    assert isinstance(cfg, Bm25RetrieverConfig)
    return Bm25Retriever(_corpus(testbed), k1=cfg.k1, b=cfg.b)


def dense(testbed: TestbedConfig) -> Retriever:
    from snapaudit.testbed.retrieval.dense import DenseRetriever

    cfg = testbed.retriever
    assert isinstance(cfg, DenseRetrieverConfig)
    return DenseRetriever(_corpus(testbed), model=cfg.model)


def http(testbed: TestbedConfig) -> Retriever:
    from snapaudit.testbed.retrieval.http import HttpRetriever

    cfg = testbed.retriever
    assert isinstance(cfg, HttpRetrieverConfig)
    return HttpRetriever(cfg)


def _corpus(testbed: TestbedConfig) -> str:
    if not testbed.corpus:
        raise ConfigError("testbed.corpus must name a corpus directory "
                          "(built with `snapaudit corpus build`)")
    return testbed.corpus
