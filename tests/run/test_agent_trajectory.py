"""An agent audited end to end: the planted agent world (tests/fakes/agent_world.py) through a
real run of a Python target and of an HTTP service, and through ``snapaudit analyze`` on its
answers table. The steps are stored in the ledger cells, bound by the answer lock, written to
``tables/answers.jsonl``, exported and verified; every route gives the hand-computed numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import snapaudit
from snapaudit.artifact.export import export_artifact
from snapaudit.artifact.verify import verify_artifact
from snapaudit.errors import VerificationError
from snapaudit.hashing import sha256_file
from snapaudit.tables import write_answers
from tests.fakes.agent_world import CHANGED, DIVERGENCE, EXPECTED, AgentService, agent_rows
from tests.helpers.cli import exit_code
from tests.helpers.ledger_view import query
from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

KERNELS = ("tools", "queries", "documents")


def _check(results: dict[str, Any]) -> None:
    traj = results["trajectory"]
    for name in KERNELS:
        within, cross, d_hat = EXPECTED[name]
        got = traj["kernels"][name]
        assert (got["within"], got["cross"], got["d_hat"]) == pytest.approx(
            (within, cross, d_hat)), name
    assert results["kernels"]["exact"]["d_hat"] == pytest.approx(EXPECTED["exact"][2])
    assert traj["changed_pairs"] == CHANGED
    assert traj["first_divergence"] == DIVERGENCE


def _python_run(tmp: Path) -> Path:
    write_world(tmp, n=6)
    proto = save_protocol(tmp, python_protocol_text(
        'target = "tests.fakes.agent_world:agent"'))
    snapaudit.audit(proto, tmp / "run")
    return tmp / "run"


@pytest.fixture(scope="module")
def python_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _python_run(tmp_path_factory.mktemp("agent"))


def test_python_target_steps_give_the_planted_numbers(python_run: Path) -> None:
    _check(json.loads((python_run / "results.json").read_text()))
    cells = query(python_run / "ledger.sqlite",
                  "SELECT payload FROM cells WHERE stage='answer' AND cell_key='q005|new|2'")
    assert json.loads(cells[0][0])["steps"] == [
        {"tool": "search", "input": "item 5", "doc_ids": ["d5c"], "output": "1 hits"},
        {"tool": "search", "input": "d5c details", "doc_ids": ["d5d"], "output": "1 hits"}]
    rows = [json.loads(x) for x in
            (python_run / "tables" / "answers.jsonl").read_text().splitlines()]
    assert len(rows) == 24 and all("steps" in r for r in rows)


def _rehash(root: Path) -> None:
    """A careful forger's manifest: every file's hash updated after an edit."""
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = {f: sha256_file(root / f) for f in manifest["files"]}
    (root / "manifest.json").write_text(json.dumps(manifest))


def test_steps_are_exported_and_verified(python_run: Path, tmp_path: Path) -> None:
    art = export_artifact(python_run, tmp_path / "art")
    report = verify_artifact(art)
    assert not report.failures
    claims = {c["claim"] for c in json.loads((art / "claims.json").read_text())}
    assert {"trajectory.kernels.queries.d_hat", "trajectory.changed_pairs.same_queries",
            "trajectory.first_divergence.cross.at_step.2"} <= claims
    # an edited step in the table (manifest forged) differs from the ledger
    forged = tmp_path / "forged"
    shutil.copytree(art, forged)
    path = forged / "tables" / "answers.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["steps"][0]["input"] = "another query"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _rehash(forged)
    with pytest.raises(VerificationError) as err:
        verify_artifact(forged)
    row = rows[0]
    assert (f"tables/answers.jsonl: row {row['question_id']}/{row['state']}/{row['repeat']} "
            "differs from the answer ledger") in str(err.value)


def test_an_edited_step_in_the_ledger_breaks_the_answer_lock(python_run: Path,
                                                             tmp_path: Path) -> None:
    art = export_artifact(python_run, tmp_path / "art")
    path = art / "ledger" / "answer.cells.jsonl"
    lines = path.read_text().splitlines()
    cell = json.loads(lines[0])
    cell["payload"]["steps"][0]["doc_ids"] = ["forged"]
    lines[0] = json.dumps(cell)
    path.write_text("\n".join(lines) + "\n")
    _rehash(art)
    with pytest.raises(VerificationError) as err:
        verify_artifact(art)
    # the lock binds what was accepted as published; how it was reached is its history
    assert "locks: answer lock: ledger content 'public_accepted_sha256' changed" in str(err.value)
    assert "attempt history 'public_cells_sha256' changed" in str(err.value)


def test_the_artifact_publishes_step_texts_hashed(python_run: Path, tmp_path: Path) -> None:
    from snapaudit.hashing import sha256_text

    art = export_artifact(python_run, tmp_path / "art")
    texts = "".join(p.read_text() for p in art.rglob("*") if p.is_file())
    # the queries (which may repeat the question) and the tool outputs are hashed...
    assert "item two" not in texts and "d5c details" not in texts and "1 hits" not in texts
    rows = [json.loads(x) for x in (art / "tables" / "answers.jsonl").read_text().splitlines()]
    q5 = next(r for r in rows if (r["question_id"], r["state"], r["repeat"]) == ("q005", "old", 2))
    # ...under the normalization: "Item 5!" and "item 5" publish the same hash
    assert q5["steps"][0] == {"tool": "search", "input": "sha256:" + sha256_text("item 5"),
                              "doc_ids": ["d5a"], "output": "sha256:" + sha256_text("1 hits")}
    locks = json.loads((art / "locks.json").read_text())
    answer = next(rec for rec, _ in locks if rec["stage"] == "answer")
    assert {"accepted_sha256", "public_accepted_sha256"} <= set(answer["content"])
    assert {"cells_sha256", "public_cells_sha256", "public_attempts_sha256"} <= set(
        answer["history"])
    report = verify_artifact(art)
    assert any("steps are published hashed" in note for note in report.notes)


def test_http_service_steps_mapped_by_paths(tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    with AgentService(broken=frozenset({"q003"})) as svc:
        systems = "\n".join(
            f'[systems.{s}]\nurl = "{svc.url(s)}"\n'
            'body_template = { question_id = "{question_id}", repeat = "{repeat}" }\n'
            'steps_path = "trace.calls"\nstep_tool = "name"\nstep_input = "args.q"\n'
            'step_doc_ids = "hits"\nstep_output = ""\n' for s in ("old", "new"))
        text = python_protocol_text("").replace('kind = "python"', 'kind = "http"')
        text = text.split("[systems.old]")[0] + systems + "[gate]" + text.split("[gate]")[1]
        proto = save_protocol(tmp_path, text)
        snapaudit.audit(proto, tmp_path / "run")
    _check(json.loads((tmp_path / "run" / "results.json").read_text()))
    # the malformed first reply was one transport-invalid attempt, retried
    failed = query(tmp_path / "run" / "ledger.sqlite",
                   "SELECT cell_key, reason, error FROM attempts WHERE outcome != 'accepted'")
    assert [(k[:4], reason) for k, reason, _ in failed] == [("q003", "schema")]
    assert "steps[0].tool must be a nonempty string, got nothing" in failed[0][2]


def test_analyze_refuses_bad_steps_in_one_line(tmp_path: Path) -> None:
    from tests.helpers.cli import snapaudit as cli

    rows = [{"question_id": "q1", "state": s, "repeat": r, "answer": "x",
             "steps": [{"tool": "search", "input": "q", "doc_ids": "d1"}]}
            for s in ("old", "new") for r in (1, 2)]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = cli("analyze", "--answers", "a.jsonl", "--old", "old", "--new", "new",
               cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: a.jsonl:1: steps[0].doc_ids must be a list of strings"]


def test_analyze_an_answers_table_with_steps(tmp_path: Path) -> None:
    write_answers(tmp_path / "answers.jsonl", agent_rows())
    code = exit_code(["analyze", "--answers", str(tmp_path / "answers.jsonl"), "--old", "old",
                      "--new", "new", "--gate-profile", "exact-only", "--draws", "200",
                      "--permutations", "0", "--json", str(tmp_path / "results.json")])
    assert code in (0, 1)
    _check(json.loads((tmp_path / "results.json").read_text()))


def test_an_http_system_without_steps_keeps_its_spec() -> None:
    from snapaudit.systems.config import HttpSystemConfig

    plain = HttpSystemConfig(url="http://127.0.0.1:9/a").model_dump(mode="json")
    assert sorted(plain) == ["answer_path", "auth", "body_template", "doc_ids_path",
                             "headers", "method", "url"]
    mapped = HttpSystemConfig(url="http://127.0.0.1:9/a", steps_path="trace",
                              step_input="args.q").model_dump(mode="json")
    assert {k: mapped[k] for k in set(mapped) - set(plain)} == {"steps_path": "trace",
                                                                "step_input": "args.q"}


def test_a_worker_process_target_returns_steps(tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    proto = save_protocol(tmp_path, python_protocol_text(
        'target = "tests.fakes.agent_world:agent"\nisolation = "process"\n'
        "max_concurrency = 2"))
    snapaudit.audit(proto, tmp_path / "run")
    _check(json.loads((tmp_path / "run" / "results.json").read_text()))


def test_report_and_summary_show_the_trajectory(python_run: Path, tmp_path: Path) -> None:
    from snapaudit.report.build import write_report
    from snapaudit.report.summary import results_summary
    from snapaudit.results import read_results

    paths = write_report(python_run, tmp_path / "report")
    md = Path(paths.markdown).read_text()
    assert "## Agent trajectories" in md
    table = md.split("## Agent trajectories")[1]
    assert [line.split(" | ")[0] for line in table.splitlines()
            if line.startswith(("| tools", "| queries", "| documents"))] == [
        "| tools", "| queries", "| documents"]
    assert "| queries | ` 66.67 ` | ` 50.00 ` | ` 16.67 ` |" in table
    assert "| same queries (index side) | 4 |" in table
    assert "| old × new | 24 | 12 | 6 | 6 |" in table
    q001 = md.split("### q001")[1].split("###")[0]
    assert "changed with the same queries (index side)" in q001
    assert "- steps new ×2: 1. search “item 1” → d1n (+d1n -d1)" in q001
    assert "changed with different queries (agent side)" in md.split("### q002")[1]
    html = Path(paths.html).read_text()
    assert 'value="same_queries"' in html and 'value="different_queries"' in html
    summary = results_summary(read_results(python_run / "results.json"))
    assert ("documents Within agreement 91.67%  Cross agreement 45.83%  D +45.83 pp"
            in summary)
    assert ("Changed answer pairs 12: same queries 4 (index side), different queries 8 "
            "(agent side)") in summary


def test_no_steps_no_agent_section(tmp_path: Path) -> None:
    from snapaudit.report.summary import render_text

    plain = [type(r)(r.question_id, r.state, r.repeat, r.answer) for r in agent_rows()]
    text = render_text(snapaudit.analyze(plain, config=snapaudit.AnalysisConfig(
        old="old", new="new", draws=200, permutations=0)))
    assert "trajectory" not in text.lower() and "Changed answer pairs" not in text


@pytest.mark.slow
def test_an_agent_killed_several_times_gives_the_uninterrupted_trajectories(
        tmp_path: Path) -> None:
    from tests.helpers.cli import killed_and_clean

    write_world(tmp_path, n=6)

    def protocol(name: str, delay: float) -> Path:
        text = python_protocol_text('target = "tests.fakes.agent_world:sampled_agent"\n'
                                    f"kwargs = {{ delay_s = {delay} }}", run={"concurrency": 1})
        return save_protocol(tmp_path, text).rename(tmp_path / name)

    killed, clean = killed_and_clean(protocol, tmp_path)
    assert killed == clean and all("steps" in p for p in clean.values())
    run_dir = tmp_path / "killed"
    assert json.loads((run_dir / "results.json").read_text())["trajectory"] == json.loads(
        (tmp_path / "clean" / "results.json").read_text())["trajectory"]


def test_a_run_gated_on_a_trajectory_kernel(tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    rules = "".join(f'[[gate.rules]]\nkernel = "{k}"\nstatistic = "d_hat"\nop = ">="\n'
                    f"threshold = {t}\n" for k, t in (("exact", 3), ("queries", 10)))
    text = python_protocol_text('target = "tests.fakes.agent_world:agent"').replace(
        '[gate]\nprofile = "exact-only"\n', rules)
    result = snapaudit.audit(save_protocol(tmp_path, text), tmp_path / "run")
    assert [(r.rule, r.value, r.passed) for r in result.gate.rules] == [
        ("exact d_hat >= 3", pytest.approx(50.0), True),
        ("queries d_hat >= 10", pytest.approx(100 / 6), True)]
    assert result.gate.verdict == "incompatible"


def test_hostile_step_text_is_escaped_in_the_report(tmp_path: Path) -> None:
    from dataclasses import replace

    from markdown_it import MarkdownIt

    from snapaudit.report.build import write_report
    from snapaudit.results import RunResults, write_results
    from snapaudit.tables.records import Step

    evil = "<script>document.title='pwned'</script>"
    rows = [replace(r, steps=(Step("<b>search</b>", evil, ("<img src=x onerror=1>",)),))
            if r.state == "new" else r for r in agent_rows()]
    (tmp_path / "tables").mkdir()
    write_answers(tmp_path / "tables" / "answers.jsonl", rows)
    write_results(tmp_path / "results.json", RunResults(snapaudit.analyze(
        rows, config=snapaudit.AnalysisConfig(old="old", new="new", draws=200,
                                              permutations=0))))
    paths = write_report(tmp_path)
    html, md = Path(paths.html).read_text(), Path(paths.markdown).read_text()
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    assert "steps new ×2: 1." in md
    for text in (html, rendered):
        assert "<script>document.title" not in text and "<img src=x" not in text
        assert "<b>search" not in text and "&lt;script&gt;document.title" in text


def test_steps_beside_document_hashes_exported_and_verified(tmp_path: Path) -> None:
    from snapaudit.hashing import sha256_text
    from snapaudit.tables import read_answers

    write_world(tmp_path, n=6)
    proto = save_protocol(tmp_path, python_protocol_text(
        'target = "tests.fakes.agent_world:agent_with_texts"'))
    snapaudit.audit(proto, tmp_path / "run")
    _check(json.loads((tmp_path / "run" / "results.json").read_text()))
    row = next(r for r in read_answers(tmp_path / "run" / "tables" / "answers.jsonl")
               if (r.question_id, r.state, r.repeat) == ("q005", "new", 2))
    assert row.doc_ids == ("d5d",) and row.doc_hashes == (sha256_text("d5d in new"),)
    assert row.steps is not None and row.steps[-1].input == "d5c details"
    art = export_artifact(tmp_path / "run", tmp_path / "art")
    published = [json.loads(x) for x in (art / "tables" / "answers.jsonl").read_text()
                 .splitlines()]
    assert all(len(r["doc_hashes"]) == len(r["doc_ids"]) for r in published)
    assert all(r["steps"][0]["input"].startswith("sha256:") for r in published)
    assert verify_artifact(art).checked > 0
