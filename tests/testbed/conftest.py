"""Helpers: small generated corpora written as generic JSONL and built into shards."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from snapaudit.testbed.corpus.build import CorpusInput, build_corpus

WORDS = (
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega", "river", "stone", "cloud", "maple", "harbor", "lantern",
)


def write_jsonl(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def generated_docs(n: int, seed: int = 7) -> list[dict[str, object]]:
    """``n`` documents over a small vocabulary with topic drift (seeded)."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        bias = WORDS[(i * 3) % len(WORDS): (i * 3) % len(WORDS) + 5]
        length = rng.randint(3, 40)
        toks = [rng.choice(bias) if rng.random() < 0.4 else rng.choice(WORDS)
                for _ in range(length)]
        docs.append({"id": f"d{i:04d}", "url": f"https://example.org/{i}", "text": " ".join(toks)})
    return docs


@pytest.fixture()
def make_corpus(tmp_path: Path):  # type: ignore[no-untyped-def]
    counter = iter(range(1000))

    def make(rows: Sequence[dict[str, object]], shards: int = 4, seed: int = 0) -> Path:
        n = next(counter)
        (tmp_path / f"in-{n}").mkdir()
        src = write_jsonl(tmp_path / f"in-{n}" / "input.jsonl", rows)
        out = tmp_path / f"corpus-{n}"
        build_corpus([CorpusInput(src, "generic")], out, shards=shards, seed=seed,
                     segment_docs=16)
        return out

    return make
