"""Write the demo world to disk: corpus, questions, gold, plants, and its protocol."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapaudit.demo.world import N_SHARDS, World
from snapaudit.hashing import canonical_json


@dataclass(frozen=True)
class WorldFiles:
    """Where :func:`write_world` put each part of the world."""

    root: Path
    corpus: Path
    questions: Path
    gold: Path
    plants: Path
    protocol: Path

    @property
    def agent_protocol(self) -> Path:
        """The protocol of ``snapaudit demo --agent`` (:func:`agent_protocol`)."""
        return self.root / "protocol.agent.toml"


def jsonl_bytes(rows: list[dict[str, Any]]) -> bytes:
    """The exact bytes :func:`write_world` writes for a JSONL table."""
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
                   for row in rows).encode("utf-8")


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_bytes(jsonl_bytes(rows))


def _protocol(title: str, name: str, states: list[str], system: str, *, root: str,
              repeats: int, seed: int, size: int, concurrency: int) -> str:
    """A demo protocol: ``system`` (its [system] and what follows) between the world's
    states, design, cohort and gold and the rule judge, bootstrap and run of every demo."""
    return f"""# {title}
name = "{name}"

[states]
order = {json.dumps(states)}
old = "n1"
new = "n7"

[design]
repeats = {repeats}
seed = {seed}

[cohort]
source = "jsonl"
path = "{root}/questions.jsonl"
size = {size}
seed = {seed}

[gold]
path = "{root}/gold.jsonl"
format = "jsonl"

{system}
[judge]
kind = "rule"
name = "rule"

[bootstrap]
draws = 2000
seed = {seed}

[run]
concurrency = {concurrency}
"""


def demo_protocol(files_root: Path, *, repeats: int = 2, seed: int = 7,
                  n_questions: int | None = None, top_k: int = 4, threads: int = 1) -> str:
    """The demo protocol TOML: testbed states n0, n1, n3, n7 over the world's 7 shards,
    old n1 / new n7, the embedded local generator and the rule judge.

    ``top_k`` defaults to 4, not the study's 8: the embedded model prefills only tens of
    tokens per second on a small CPU, and every document costs ~20 tokens per call. One
    thread per model: the generator runs one model per core it may use (``replicas``), and
    ``[run] concurrency = 8`` queues a question's 8 calls at once, so a repeat waits on the
    replica holding its prompt's state (docs/generators.md)."""
    root = files_root.as_posix()
    system = f"""[system]
kind = "testbed"

[testbed]
corpus = "{root}/corpus"
top_k = {top_k}
states = {{ n0 = 0, n1 = 1, n3 = 3, n7 = 7 }}

[testbed.retriever]
kind = "bm25"

[generator]
backend = "local"
temperature = 0.1
max_tokens = 144
n_threads = {threads}
"""
    return _protocol("The snapaudit demo: an invented world with planted changes "
                     "(docs/demo.md).", "snapaudit-demo", ["n0", "n1", "n3", "n7"], system,
                     root=root, repeats=repeats, seed=seed,
                     size=n_questions if n_questions is not None else 10_000, concurrency=8)


def agent_protocol(files_root: Path, *, repeats: int = 2, seed: int = 7,
                   n_questions: int | None = None) -> str:
    """The protocol of ``snapaudit demo --agent``: the two-step search agent of
    :mod:`snapaudit.demo.agent` as a Python target in states n1 and n7 of the same world
    (its corpus bound into the spec), the rule judge, the demo's bootstrap."""
    root = files_root.as_posix()
    system = '[system]\nkind = "python"\n' + "".join(f"""
[systems.{state}]
target = "snapaudit.demo.agent:answer"
setup = "snapaudit.demo.agent:setup"
kwargs = {{ corpus = "{root}/corpus", shards = {shards} }}
bind_files = ["corpus"]
""" for state, shards in (("n1", 1), ("n7", 7)))
    return _protocol("The snapaudit agent demo: a two-step search agent (docs/agents.md).",
                     "snapaudit-demo-agent", ["n1", "n7"], system, root=root,
                     repeats=repeats, seed=seed,
                     size=n_questions if n_questions is not None else 10_000, concurrency=1)


def write_world(world: World, root: str | Path, *, repeats: int = 2,
                protocol_text: str | None = None) -> WorldFiles:
    """Write ``world`` under ``root`` (created if needed); byte-identical for equal worlds."""
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    files = WorldFiles(root, root / "corpus.jsonl", root / "questions.jsonl",
                       root / "gold.jsonl", root / "plants.json", root / "protocol.toml")
    _jsonl(files.corpus, world.docs)
    _jsonl(files.questions, world.questions)
    _jsonl(files.gold, world.gold)
    plants = {"version": 1, "seed": world.seed, "n_shards": N_SHARDS,
              "doc_shards": world.doc_shards, "questions": world.plants}
    files.plants.write_text(canonical_json(plants) + "\n", encoding="utf-8")
    text = protocol_text or demo_protocol(root, repeats=repeats, seed=world.seed,
                                          n_questions=len(world.questions))
    files.protocol.write_text(text, encoding="utf-8")
    files.agent_protocol.write_text(agent_protocol(root, repeats=repeats, seed=world.seed,
                                                   n_questions=len(world.questions)),
                                    encoding="utf-8")
    return files


def read_plants(path: str | Path) -> dict[str, dict[str, Any]]:
    """Question id -> plant record (kind, expected behaviour, planted documents)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    questions: dict[str, dict[str, Any]] = data["questions"]
    return questions
