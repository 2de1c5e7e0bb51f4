"""``snapaudit review`` on the command line: errors exit 2 with one clear line, the URL is
printed once with the token, Ctrl-C stops cleanly."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from snapaudit.run.record.ledger import Ledger
from tests.helpers.cli import exit_code
from tests.review.conftest import App, build_run, raw


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_run(tmp_path_factory.mktemp("world"))


@pytest.mark.parametrize(("args", "message"), [
    (["--annotator", "../x"], "error: --annotator '../x' may only use letters"),
    (["--annotator", "a b", "--label"], "error: --annotator 'a b' may only use letters"),
    (["--sample", "3"], "error: --sample applies to --label only"),
    (["--label", "--sample", "0"], "error: --sample 0: must be at least 1"),
    (["--export", "labelstudio"], "error: --export needs --out FILE"),
    (["--export", "argilla", "--out", "/nowhere/x.json"],
     "error: --out /nowhere/x.json: folder /nowhere does not exist"),
    (["--out", "x.json"], "error: --out applies to --export only"),
    (["--export", "labelstudio", "--out", "x.json", "--label"],
     "error: --label serves the page; --export / --import need no server"),
])
def test_bad_options_exit_2_with_one_clear_line(run: Path, args: list[str], message: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["review", str(run), "--no-open", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert "Traceback" not in err


def test_import_refuses_a_bad_name_and_a_second_source(run: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    file = tmp_path / "tasks.json"
    file.write_text("[]", encoding="utf-8")
    assert exit_code(["review", str(run), "--import", str(file), "--annotator", "-x"]) == 2
    assert capsys.readouterr().err.startswith("error: --annotator '-x' may only use")
    assert exit_code(["review", str(run), "--import", str(file), "--export", "argilla",
                      "--out", str(tmp_path / "o.json")]) == 2
    assert "give one" in capsys.readouterr().err


def test_an_unlocked_run_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    assert exit_code(["review", str(bare), "--no-open"]) == 2
    assert "not a snapaudit run directory" in capsys.readouterr().err
    Ledger(bare / "ledger.sqlite").close()
    assert exit_code(["review", str(bare), "--no-open", "--label"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the run's answer and semantic stages are not locked yet")


@pytest.mark.slow
def test_a_run_without_a_primary_judge_has_nothing_to_label(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = build_run(tmp_path / "world", judge='kind = "none"')
    assert exit_code(["review", str(run), "--no-open", "--label"]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no URL was printed
    assert err.startswith("error: the run has no labels of a primary judge"), err


def test_the_url_carries_the_token_and_ctrl_c_stops_cleanly(run: Path) -> None:
    app = App(run, "--annotator", "hana", "--port", "0")
    try:
        assert len(app.token.value) >= 40
        status, _, items = raw(app, "GET", "/api/items")
        assert status == 200 and items["annotator"] == "hana" and items["mode"] == "change"
        assert raw(app, "GET", "/api/items", token=False)[0] == 403
    finally:
        code, out, err = app.stop(signal.SIGINT)
    assert code == 0, err
    assert out.strip() == "stopped"  # the URL line was read before; the token is printed once
    assert err == ""


def _done(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Label Studio export once a person annotated every task (same when equal)."""
    return [{"id": i, "data": t["data"], "annotations": [{"result": [{
        "from_name": "label", "to_name": "answer_a", "type": "choices",
        "value": {"choices": ["same" if t["data"]["answer_a"] == t["data"]["answer_b"]
                              else "different"]}}]}]}
        for i, t in enumerate(tasks, start=1)]


@pytest.mark.slow
def test_export_and_import_go_through_the_cli(run: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tasks.json"
    assert exit_code(["review", str(run), "--export", "labelstudio", "--out", str(out),
                      "--sample", "3"]) == 0
    assert capsys.readouterr().out == f"wrote 18 tasks (labelstudio) to {out}\n"
    tasks = json.loads(out.read_text(encoding="utf-8"))
    done = tmp_path / "done.json"
    done.write_text(json.dumps(_done(tasks)[:-1] + _done(tasks)[-2:-1]), encoding="utf-8")
    assert exit_code(["review", str(run), "--import", str(done), "--annotator", "ls"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {done} task 18: question "), err
    assert err.rstrip().endswith("is given twice (first at task 17)"), err
    done.write_text(json.dumps(_done(tasks)), encoding="utf-8")
    assert exit_code(["review", str(run), "--import", str(done), "--annotator", "ls"]) == 0
    assert capsys.readouterr().out == (
        f"imported 3 questions from {done} as judge human:ls (locked)\n"
        f"updated {run / 'results.json'} and the report\n")
    human = json.loads((run / "results.json").read_text())["judges"]["human"]["judges"]
    assert human["human:ls"]["questions"] == 3  # no `snapaudit run` needed
    assert "human:ls" in (run / "report.md").read_text(encoding="utf-8")
    expected: dict[str, dict[str, str]] = {}
    for t in _done(tasks):
        expected.setdefault(t["data"]["question_id"], {})[t["data"]["pair"]] = \
            t["annotations"][0]["result"][0]["value"]["choices"][0]
    app = App(run, "--label", "--sample", "3", "--annotator", "ls")
    try:
        assert app.saved() == expected
        assert raw(app, "GET", "/api/progress")[2]["labels_locked"] is True
    finally:
        app.stop()
    assert exit_code(["review", str(run), "--export", "argilla", "--out",
                      str(tmp_path / "records.jsonl"), "--sample", "2"]) == 0
    assert capsys.readouterr().out.startswith("wrote 12 tasks (argilla) to ")
    assert len((tmp_path / "records.jsonl").read_text(encoding="utf-8").splitlines()) == 12
