"""The CLI: init, run, status, and bad inputs (exit 2, nothing written to a ledger)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from snapaudit.cli import main
from snapaudit.run.record.protocol import load_protocol
from tests.fakes.rag_service import FakeRagService
from tests.helpers.cli import exit_code
from tests.helpers.protocol import write_labels, write_protocol, write_world


@pytest.mark.parametrize("kind", ["http", "testbed", "python"])
def test_init_writes_a_template_that_validates(tmp_path: Path, kind: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"{kind}.toml"
    main(["init", "--kind", kind, "--out", str(out)])
    protocol = load_protocol(out)
    assert protocol.system.kind == kind
    assert exit_code(["init", "--kind", kind, "--out", str(out)]) == 2  # never overwrites
    assert "exists" in capsys.readouterr().err


def test_init_python_then_run_works_out_of_the_box(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "audit.toml"
    main(["init", "--kind", "python", "--out", str(out)])
    assert {p.name for p in tmp_path.iterdir()} == {"audit.toml", "my_pipeline.py",
                                                    "questions.jsonl", "gold.jsonl"}
    assert exit_code(["run", str(out), "--run-dir", str(tmp_path / "run"),
                      "--progress", "silent"]) == 0
    assert "results.json" in capsys.readouterr().out
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["kernels"]["exact"]["d_hat"] == 0.0


def test_init_python_beside_existing_samples_names_them_and_can_keep_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = '{"id": "m1", "question": "What is my own question?"}\n'
    (tmp_path / "questions.jsonl").write_text(mine, "utf-8")
    out = tmp_path / "audit.toml"
    assert exit_code(["init", "--kind", "python", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"questions.jsonl already exists in {tmp_path.resolve()}" in err
    assert "--keep-existing" in err and "nothing was written" in err
    assert "choose another --out" not in err  # the clash is not --out
    assert [p.name for p in tmp_path.iterdir()] == ["questions.jsonl"]
    assert exit_code(["init", "--kind", "python", "--out", str(out), "--keep-existing"]) == 0
    assert "kept " in capsys.readouterr().err
    assert (tmp_path / "questions.jsonl").read_text("utf-8") == mine
    assert {p.name for p in tmp_path.iterdir()} == {"audit.toml", "my_pipeline.py",
                                                    "questions.jsonl", "gold.jsonl"}
    assert "snapaudit.adapters" in out.read_text("utf-8")  # the way to a framework pipeline
    assert "langchain_target" in (tmp_path / "my_pipeline.py").read_text("utf-8")


def test_run_then_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc)
        main(["run", str(proto), "--run-dir", str(tmp_path / "run"), "--progress", "plain"])
    out = capsys.readouterr()
    assert "results.json" in out.out
    assert "[answer] 32/32" in out.err
    main(["status", str(tmp_path / "run")])
    text = capsys.readouterr().out
    assert "answer           accepted 32/32" in text
    assert "3. gold" in text
    main(["status", str(tmp_path / "run"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [lk["stage"] for lk in data["locks"]] == ["answer", "semantic", "gold"]


def test_fail_on_incompatible_exit_code(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path, n=40)
    write_labels(tmp_path / "labels.jsonl", 40)
    with FakeRagService() as svc:
        # the study gate needs the semantic kernel: without a judge it could never be
        # evaluated, so preflight refuses the run and writes nothing
        study = write_protocol(tmp_path, svc, size=40, extra='[gate]\nprofile = "study"\n')
        code = exit_code(["run", str(study), "--run-dir", str(tmp_path / "s"),
                      "--progress", "silent", "--fail-on", "incompatible"])
        assert code == 2
        assert "needs the semantic kernel" in capsys.readouterr().err
        assert not (tmp_path / "s" / "results.json").exists()
        assert not (tmp_path / "s" / "ledger.sqlite").exists()
        exact_only = write_protocol(tmp_path, svc, size=40)
        code = exit_code(["run", str(exact_only), "--run-dir", str(tmp_path / "a"),
                      "--progress", "silent", "--fail-on", "incompatible"])
        gate = json.loads((tmp_path / "a" / "results.json").read_text())["gate"]
        assert (gate["profile"], gate["verdict"], len(gate["rules"])) == (
            "exact-only", "incompatible", 2)
        assert code == 4
        labelled = write_protocol(tmp_path, svc, size=40,
                                  judge='kind = "labels"\nlabels_path = "labels.jsonl"')
        code = exit_code(["run", str(labelled), "--run-dir", str(tmp_path / "b"),
                      "--progress", "silent", "--fail-on", "incompatible"])
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results["gate"]["passed"] is True
    assert results["gate"]["profile"] == "study"
    assert results["kernels"]["semantic"]["d_hat"] == results["kernels"]["exact"]["d_hat"]
    assert code == 4
    labels = (tmp_path / "b" / "tables" / "labels.jsonl").read_text().splitlines()
    assert len(labels) == 40 * 6
    # the same answers without labels: analyze cannot evaluate the study gate -> exit 5
    code = exit_code(["analyze", "--answers", str(tmp_path / "b" / "tables" / "answers.jsonl"),
                  "--old", "old", "--new", "new", "--draws", "200", "--json",
                  str(tmp_path / "r.json"), "--fail-on", "incompatible"])
    gate = json.loads((tmp_path / "r.json").read_text())["gate"]
    assert gate["verdict"] == "not_evaluable" and gate["passed"] is False
    assert "semantic lcb95 > 0: semantic kernel not computed" in gate["reason"]
    assert code == 5


def test_incomplete_labels_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path, n=8)
    write_labels(tmp_path / "labels.jsonl", 7)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc, size=8,
                               judge='kind = "labels"\nlabels_path = "labels.jsonl"')
        assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "r"),
                      "--progress", "silent"]) == 2
    assert "labels do not cover 6 pair(s)" in capsys.readouterr().err


def _bad(tmp_path: Path, argv_extra: list[str], proto: Path) -> tuple[int, str]:
    return exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"), "--progress",
                  "silent", *argv_extra]), ""


def test_unknown_key_is_named_exit_2_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc, extra="[design2]\nx = 1\n")
        code, _ = _bad(tmp_path, [], proto)
    assert code == 2
    assert "unknown key 'design2'" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_bad_override_value_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc)
        code, _ = _bad(tmp_path, ["--set", "design.repeats=1"], proto)
    assert code == 2
    assert "'design.repeats'" in capsys.readouterr().err


def test_unreachable_endpoint_exit_2_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    svc = FakeRagService()
    svc.port = port  # never started: nothing listens there
    proto = write_protocol(tmp_path, svc)
    code, _ = _bad(tmp_path, [], proto)
    assert code == 2
    assert "unreachable" in capsys.readouterr().err
    assert not (tmp_path / "run" / "ledger.sqlite").exists()


def test_cohort_larger_than_source_exit_2_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path, n=5)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc, size=6)
        code, _ = _bad(tmp_path, [], proto)
    assert code == 2
    assert "cohort size 6 is larger than the 5 eligible questions" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_judge_audit_reaches_results_and_status(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path, n=12)
    write_labels(tmp_path / "labels.jsonl", 12)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc, size=12,
                               judge='kind = "labels"\nname = "primary"\n'
                                     'labels_path = "labels.jsonl"')
        main(["run", str(proto), "--run-dir", str(tmp_path / "run"), "--progress", "silent"])
    before = json.loads((tmp_path / "run" / "results.json").read_text())
    assert before["judges"] is None
    main(["judge-audit", str(tmp_path / "run"), "--judge", "second=rule", "--sample", "6",
          "--progress", "silent"])
    assert "judges section" in capsys.readouterr().out
    after = json.loads((tmp_path / "run" / "results.json").read_text())
    # the primary judge's numbers are unchanged; the audit judge appears beside it
    assert after["kernels"] == before["kernels"]
    assert after["judges"]["judges"] == ["primary", "second"]
    assert after["judges"]["pairs"] == 6 * 6
    labels = (tmp_path / "run" / "tables" / "labels.jsonl").read_text().splitlines()
    assert sum('"judge": "second"' in x for x in labels) == 6 * 6
    main(["status", str(tmp_path / "run")])
    assert "judge:second" in capsys.readouterr().out
