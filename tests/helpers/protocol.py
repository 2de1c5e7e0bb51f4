"""The one protocol builder of the tests: small audit worlds and protocol TOML.

An HTTP system over the loopback RAG fake (``write_world``, ``protocol_text``,
``write_protocol``), a Python system over the same world (``python_protocol_text``), the
testbed system over a small built corpus (``write_testbed_world``,
``write_testbed_protocol``), and the pieces other builders share (``http_systems``,
``save_protocol``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any, Protocol

from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
from tests.fakes.rag_service import FakeRagService, planted_answer


class _HttpStates(Protocol):
    @property
    def states(self) -> Sequence[str]: ...

    def url(self, state: str) -> str: ...


def http_systems(svc: _HttpStates) -> str:
    """The ``[systems.<state>]`` tables of an HTTP system: one loopback URL per state."""
    return "\n".join(
        f'[systems.{s}]\nurl = "{svc.url(s)}"\n'
        'body_template = { question = "{question}", question_id = "{question_id}", '
        'repeat = "{repeat}" }\n'
        for s in svc.states)


def save_protocol(tmp: Path, text: str) -> Path:
    """``text`` written as ``tmp/protocol.toml``."""
    path = tmp / "protocol.toml"
    path.write_text(text, encoding="utf-8")
    return path


def write_world(tmp: Path, n: int = 12) -> None:
    """``questions.jsonl`` (generic JSONL, ids q000..), ``gold.jsonl`` (interchange)."""
    with open(tmp / "questions.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i:03d}", "question": f"what is item {i}?"}) + "\n")
    with open(tmp / "gold.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"question_id": f"q{i:03d}", "answers": [f"answer q{i:03d}"]})
                    + "\n")


def protocol_head(name: str, order: Sequence[str], old: str, new: str, size: int) -> str:
    """What every test protocol here shares: name, [states], [design], [cohort], [gold]."""
    return f"""
name = "{name}"
[states]
order = {json.dumps(list(order))}
old = "{old}"
new = "{new}"
[design]
repeats = 2
seed = 7
[cohort]
source = "jsonl"
path = "questions.jsonl"
size = {size}
seed = 3
[gold]
path = "gold.jsonl"
format = "jsonl"
benchmark = "nq"
"""


def protocol_text(svc: FakeRagService, *, size: int = 8, run: dict[str, Any] | None = None,
                  judge: str = 'kind = "none"', extra: str = "") -> str:
    knobs = {"concurrency": 4, "timeout_s": 0.5, "max_attempts": 6, "backoff_base_s": 0.0,
             "backoff_max_s": 0.0, **(run or {})}
    systems = http_systems(svc)
    knob_lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in knobs.items())
    if '"none"' in judge and "[gate]" not in extra:  # no judge: only the exact kernel
        extra = '[gate]\nprofile = "exact-only"\n' + extra
    head = protocol_head("test-audit", svc.states, svc.states[0], svc.states[-1], size)
    return head + f"""[system]
kind = "http"
{systems}
[judge]
{judge}
[bootstrap]
draws = 1000
seed = 11
{extra}
[run]
{knob_lines}
"""


def write_protocol(tmp: Path, svc: FakeRagService, **kw: Any) -> Path:
    return save_protocol(tmp, protocol_text(svc, **kw))


def python_protocol_text(old: str, new: str | None = None, *, max_attempts: int = 4,
                         run: dict[str, Any] | None = None) -> str:
    """A ``[system] kind = "python"`` protocol over ``write_world(tmp, n=6)``: states old and
    new, ``old``/``new`` the bodies of their ``[systems.<state>]`` tables (``new`` defaults
    to ``old``), the exact kernel only, no backoff."""
    knobs = {"max_attempts": max_attempts, "backoff_base_s": 0.0, "backoff_max_s": 0.0,
             **(run or {})}
    knob_lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in knobs.items())
    return f"""
name = "py"
[states]
order = ["old", "new"]
old = "old"
new = "new"
[cohort]
source = "jsonl"
path = "questions.jsonl"
size = 6
[gold]
path = "gold.jsonl"
[system]
kind = "python"
[systems.old]
{old}
[systems.new]
{new if new is not None else old}
[gate]
profile = "exact-only"
[bootstrap]
draws = 200
[run]
{knob_lines}
"""


# ---- the testbed protocol ([system] kind = "testbed" over a small built corpus) ----

# an LLM judge whose server is never reached (dry runs make no call)
LLM_JUDGE = '''kind = "llm"
name = "j"
[judge.generator]
backend = "openai"
model = "judge-model"
base_url = "http://127.0.0.1:9/v1"'''
TOPICS = ["river", "stone", "cloud", "maple", "harbor", "lantern"]


def write_testbed_world(tmp: Path) -> Path:
    docs = [{"id": f"d{i:02d}", "url": f"https://example.org/{i}",
             "text": f"{TOPICS[i % 6]} facts number {i} about the {TOPICS[(i * 5) % 6]}"}
            for i in range(24)]
    (tmp / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    corpus = tmp / "corpus"
    build_corpus([CorpusInput(tmp / "docs.jsonl", "generic")], corpus, shards=3, seed=0)
    with open(tmp / "questions.jsonl", "w", encoding="utf-8") as f, \
            open(tmp / "gold.jsonl", "w", encoding="utf-8") as g:
        for i, topic in enumerate(TOPICS):
            f.write(json.dumps({"id": f"q{i}", "question": f"what about the {topic}?"}) + "\n")
            g.write(json.dumps({"question_id": f"q{i}", "answers": [f"ans-{i % 3}-0"]}) + "\n")
    return corpus


def write_testbed_protocol(tmp: Path, corpus: Path, generator: str, *, top_k: int = 2,
                   states: str = "n0 = 0, n1 = 1, n3 = 3", size: int = 6,
                   run_timeout_s: float = 2.0) -> Path:
    """A testbed protocol over ``corpus``; ``generator`` is the body of [generator]."""
    order = [s.split("=")[0].strip() for s in states.split(",")]
    text = protocol_head("testbed", order, "n1", "n3", size) + f"""[system]
kind = "testbed"
[testbed]
corpus = "{corpus}"
states = {{ {states} }}
top_k = {top_k}
[generator]
{generator}
[judge]
kind = "none"
[gate]
profile = "exact-only"
[bootstrap]
draws = 200
seed = 11
[run]
concurrency = 4
timeout_s = {run_timeout_s}
max_attempts = 8
backoff_base_s = 0.0
backoff_max_s = 0.0
"""
    return save_protocol(tmp, text)


def write_labels(path: Path, n: int, states: tuple[str, ...] = ("old", "new")) -> None:
    """Pair labels that call two answers the same exactly when the planted texts match."""
    refs = [(s, r) for s in states for r in (1, 2)]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            qid = f"q{i:03d}"
            for a, b in combinations(refs, 2):
                same = planted_answer(qid, *a) == planted_answer(qid, *b)
                f.write(json.dumps({"question_id": qid, "a": {"state": a[0], "repeat": a[1]},
                                    "b": {"state": b[0], "repeat": b[1]}, "same": same}) + "\n")


def init_python_template(tmp: Path, pipeline: str) -> Path:
    """``snapaudit init --kind python --out tmp/audit.toml`` (the template and its sample
    data, as a newcomer starts) with ``my_pipeline.py`` replaced by ``pipeline``."""
    from tests.helpers.cli import exit_code

    assert exit_code(["init", "--kind", "python", "--out", str(tmp / "audit.toml")]) == 0
    (tmp / "my_pipeline.py").write_text(pipeline, "utf-8")
    return tmp / "audit.toml"
