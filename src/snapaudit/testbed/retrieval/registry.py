"""Build the retriever a testbed config names; backends are imported lazily."""

from __future__ import annotations

from snapaudit.errors import ConfigError
from snapaudit.testbed.retrieval.base import Retriever
from snapaudit.testbed.retrieval.config import TestbedConfig


def build_retriever(testbed: TestbedConfig) -> Retriever:
    cfg = testbed.retriever
    if cfg.kind == "bm25":
        from snapaudit.testbed.retrieval.bm25 import Bm25Retriever

        _need_corpus(testbed)
        return Bm25Retriever(testbed.corpus, k1=cfg.k1, b=cfg.b)
    if cfg.kind == "dense":
        from snapaudit.testbed.retrieval.dense import DenseRetriever

        _need_corpus(testbed)
        return DenseRetriever(testbed.corpus, model=cfg.model)
    if cfg.kind == "http":
        from snapaudit.testbed.retrieval.http import HttpRetriever

        return HttpRetriever(cfg)
    raise ConfigError(f"unknown retriever kind {cfg.kind!r}")


def _need_corpus(testbed: TestbedConfig) -> None:
    if not testbed.corpus:
        raise ConfigError("testbed.corpus must name a corpus directory "
                          "(built with `snapaudit corpus build`)")
