"""A K = 3 corpus-path audit of the testbed, end to end against the fake OpenAI server:
every path's states are answered, each path prefix's evidence is exactly what an index built
on that prefix's shards alone returns, and results.json carries the paths section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
from snapaudit.testbed.corpus.store import DocStore
from snapaudit.testbed.paths import path_orders
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
from tests.fakes.llm_server import FakeLLMServer
from tests.helpers.cli import exit_code
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world
from tests.testbed.conftest import generated_docs, write_jsonl
from tests.testbed.test_testbed_run import responder

STATES = ("n0", "n1", "n3", "p1.n1", "p1.n3", "p2.n1", "p2.n3")


def _corpus(tmp: Path, rows: list[dict[str, object]], shards: int, name: str) -> Path:
    src = write_jsonl(tmp / f"{name}.jsonl", rows)
    build_corpus([CorpusInput(src, "generic")], tmp / name, shards=shards, seed=4)
    return tmp / name


@pytest.mark.slow
def test_three_path_testbed_audit_is_exact_per_path(tmp_path: Path) -> None:
    write_testbed_world(tmp_path)  # questions and gold
    docs = generated_docs(90, seed=3)
    corpus = _corpus(tmp_path, docs, 5, "corpus5")
    with FakeLLMServer(responder=responder) as srv:
        generator = f'backend = "openai"\nmodel = "fake-model"\nbase_url = "{srv.openai_base_url}"'
        proto = write_testbed_protocol(tmp_path, corpus, generator, top_k=3)
        with open(proto, "a", encoding="utf-8") as f:
            f.write("\n[testbed.paths]\ncount = 3\nseed = 9\n")
        outcome = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    results = outcome.results
    assert tuple(results["comparison"]["states"]) == STATES
    assert results["ladder"]["states"] == ["n0", "n1", "n3"]  # path 0's ladder
    paths = results["paths"]
    orders = path_orders(5, 3, 9)
    assert paths["count"] == 3 and paths["orders"] == [list(o) for o in orders]
    assert orders[1][:3] != (0, 1, 2) and orders[2][:3] != orders[1][:3]  # other shards
    assert paths["ladders"] == [["n0", "n1", "n3"], ["n0", "p1.n1", "p1.n3"],
                                ["n0", "p2.n1", "p2.n3"]]
    ends = paths["kernels"]["exact"]["endpoints"]
    assert [(p["old"], p["new"]) for p in ends["per_path"]] == [
        ("n1", "n3"), ("p1.n1", "p1.n3"), ("p2.n1", "p2.n3")]
    assert ends["d_mean"] == pytest.approx(sum(p["d_hat"] for p in ends["per_path"]) / 3)
    assert ends["ci95"][0] <= ends["d_mean"] <= ends["ci95"][1]
    assert [s["step"] for s in paths["kernels"]["exact"]["steps"]] == ["n0->n1", "n1->n3"]

    # every path prefix against an index built on that prefix's documents alone
    answers = [json.loads(line) for line in
               (tmp_path / "run" / "tables" / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == 6 * len(STATES) * 2
    store = DocStore(corpus)
    questions = {a["question_id"]: a["question"] for a in answers}
    checked = 0
    for state, (path, shards) in {"n1": (0, 1), "n3": (0, 3), "p1.n1": (1, 1),
                                  "p1.n3": (1, 3), "p2.n1": (2, 1), "p2.n3": (2, 3)}.items():
        subset = orders[path][:shards]
        ids = {d.doc_id for j in subset for d in store.iter_shard(j)}
        alone = Bm25Retriever(_corpus(tmp_path, [d for d in docs if d["id"] in ids], 1,
                                      f"alone-{state}"))
        for qid, question in questions.items():
            want = [h.doc_id for h in alone.search(question, 1, 3)]
            got = {tuple(a["doc_ids"]) for a in answers
                   if a["question_id"] == qid and a["state"] == state}
            assert got == {tuple(want)}, (state, qid)
            checked += 1
    assert checked == 6 * 6
    assert all(not a["doc_ids"] for a in answers if a["state"] == "n0")

    # the report names every path's states; plan sizes K from the run's own components
    from snapaudit.report.build import write_report

    md = write_report(tmp_path / "run").markdown.read_text(encoding="utf-8")
    assert "Corpus paths: exact D per path and step (pp)" in md and "p2.n3" in md
    plan_json = tmp_path / "plan.json"
    assert exit_code(["plan", str(tmp_path / "run"), "--paths", "3,10", "--target-d", "20",
                      "--exact-only", "--json", str(plan_json)]) == 0
    sized = json.loads(plan_json.read_text())["paths"]
    assert sized["components"] == ends["components"]
    assert [r["paths"] for r in sized["rows"]] == [3, 10]
    # the artifact of a 3-path run verifies (the analysis of path 0 is recomputed)
    assert exit_code(["export", str(tmp_path / "run"), "--out", str(tmp_path / "art")]) == 0
    assert exit_code(["verify", str(tmp_path / "art")]) == 0


def test_dry_run_counts_the_calls_of_every_path(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_testbed_world(tmp_path)
    proto = write_testbed_protocol(tmp_path, corpus, 'backend = "openai"\nmodel = "m"\n'
                                   'base_url = "http://127.0.0.1:9/v1"')
    assert exit_code(["run", str(proto), "--dry-run"]) == 0
    one = capsys.readouterr().out
    with open(proto, "a", encoding="utf-8") as f:
        f.write("\n[testbed.paths]\ncount = 3\n")
    assert exit_code(["run", str(proto), "--dry-run"]) == 0
    three = capsys.readouterr().out
    # 6 questions x 2 repeats: 3 states on one path, 1 + 3 x 2 = 7 states on three
    calls = {t: {line.split()[0]: int(line.split()[1].replace(",", ""))
                 for line in out.splitlines()[1:3]} for t, out in (("one", one), ("three", three))}
    assert calls == {"one": {"retrieval": 2 * 6 * 3, "answers": 6 * 3 * 2},
                     "three": {"retrieval": 2 * 6 * 7, "answers": 6 * 7 * 2}}
    assert ("corpus paths: 3 (testbed.paths), 7 states = 1 shared (n0) + 3 x 2" in three
            and "corpus paths" not in one)
