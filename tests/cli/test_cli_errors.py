"""Every bad-input case a new user met: exit 2, a message naming the file or option, and
never a Python traceback. Also: help everywhere, a bare ``snapaudit``, ``--limit`` smoke
runs, the default run directory, and the "already complete" re-run."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import click
import pytest

from snapaudit.cli import COMMANDS
from tests.fakes.rag_service import FakeRagService
from tests.helpers.cli import snapaudit
from tests.helpers.protocol import write_protocol, write_world

REPO = Path(__file__).resolve().parents[2]


def _answers(path: Path, rows: list[tuple[str, str, int, str]], prefix: bytes = b"") -> Path:
    text = "".join(json.dumps({"question_id": q, "state": s, "repeat": r, "answer": a}) + "\n"
                   for q, s, r, a in rows)
    path.write_bytes(prefix + text.encode("utf-8"))
    return path


GRID = [(q, s, r, f"{q}-{s}") for q in ("q1", "q2") for s in ("n0", "n1") for r in (1, 2)]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exact-only run (no judge) completed against the fake service."""
    root = tmp_path_factory.mktemp("finished")
    write_world(root)
    with FakeRagService() as svc:
        proto = write_protocol(root, svc)
        done = snapaudit("run", str(proto), "--run-dir", str(root / "run"), "--progress",
                         "silent", cwd=root)
        assert done.returncode == 0, done.stderr
        again = snapaudit("run", str(proto), "--run-dir", str(root / "run"), "--progress",
                          "silent", cwd=root)
    assert again.returncode == 0, again.stderr
    assert "run already complete" in again.stdout and "Verdict: " in again.stdout
    return root / "run"


def _cases(tmp: Path, run: Path) -> list[tuple[str, list[str], list[str]]]:
    """(name, argv, texts the message must contain)."""
    unfinished = tmp / "unfinished"
    unfinished.mkdir()
    (unfinished / "ledger.sqlite").write_bytes(b"")
    good = _answers(tmp / "answers.jsonl", GRID)
    empty = _answers(tmp / "empty.jsonl", [*GRID[:-1], ("q2", "n1", 2, "")])
    spaced = _answers(tmp / "spaced.jsonl",
                      [(q, "n 0" if s == "n0" else s, r, a) for q, s, r, a in GRID])
    write_world(tmp)
    with open(tmp / "questions.jsonl", "ab") as f:
        f.write(b'{"id": "q999", "question": "caf\xe9?"}\n')
    (tmp / "trunc.jsonl").write_text('{"id": "q1", "question": "what is', encoding="utf-8")
    with FakeRagService() as svc:
        proto = write_protocol(tmp, svc)
        text = proto.read_text(encoding="utf-8")
    (tmp / "bad-utf8.toml").write_text(text, encoding="utf-8")
    (tmp / "trunc.toml").write_text(text.replace('path = "questions.jsonl"',
                                                 'path = "trunc.jsonl"'), encoding="utf-8")
    (tmp / "string-repeats.toml").write_text(text.replace("repeats = 2", 'repeats = "2"'),
                                             encoding="utf-8")
    (tmp / "state-name.toml").write_text(
        text.replace('order = ["old", "new"]', 'order = ["n 0", "new"]'), encoding="utf-8")
    analyze = ["analyze", "--answers", str(good), "--old", "n0", "--new", "n1"]
    return [
        ("report on an unfinished run", ["report", str(unfinished)],
         [str(unfinished / "results.json"), "not finished"]),
        ("analyze --json into a missing folder",
         [*analyze, "--json", str(tmp / "nonexistent" / "dir" / "r.json")],
         ["--json", "does not exist"]),
        ("non-UTF-8 byte in a jsonl cohort",
         ["run", str(tmp / "bad-utf8.toml"), "--run-dir", str(tmp / "r1")],
         [f"{tmp / 'questions.jsonl'}:13:", "not valid UTF-8"]),
        ("JSON parse error is given whole",
         ["run", str(tmp / "trunc.toml"), "--run-dir", str(tmp / "r2")],
         [f"{tmp / 'trunc.jsonl'}:1:", "Unterminated string starting at: line 1 column"]),
        ("--draws below 100", [*analyze, "--draws", "5"], ["--draws", "must be >= 100"]),
        ("--permutations below 0, with --draws", [*analyze, "--draws", "5", "--permutations",
                                                  "-1"],
         ["--draws: must be >= 100, got 5; --permutations: must be >= 0, got -1"]),
        ("state 'n 0' is a state-name problem",
         ["analyze", "--answers", str(spaced), "--old", "n 0", "--new", "n1"],
         [f"{spaced}:1:", "not a valid state name"]),
        ("state 'n 0' in a protocol",
         ["run", str(tmp / "state-name.toml"), "--run-dir", str(tmp / "r3")],
         ["state-name.toml", "state name 'n 0'"]),
        ('repeats = "2" is refused',
         ["run", str(tmp / "string-repeats.toml"), "--run-dir", str(tmp / "r4")],
         ["string-repeats.toml", "'design.repeats': must be an integer, got str '2'"]),
        ("an empty answer is refused",
         ["analyze", "--answers", str(empty), "--old", "n0", "--new", "n1"],
         [f"{empty}:8:", "empty answer"]),
        ("judge-audit --set outside judge.*",
         ["judge-audit", str(run), "--judge", "rule", "--set", "design.seed=1"],
         ["--set", "judge.*"]),
    ]


@pytest.mark.slow
def test_every_bad_input_is_exit_2_with_a_named_message(finished_run: Path,
                                                        tmp_path: Path) -> None:
    for name, argv, texts in _cases(tmp_path, finished_run):
        done = snapaudit(*argv, cwd=tmp_path)
        message = done.stderr
        assert done.returncode == 2, (name, done.stdout, message)
        assert "Traceback" not in message + done.stdout, name
        assert "Input should be" not in message and "Value error," not in message, name
        for text in texts:
            assert text in message, (name, text, message)
    # analyze refused the output folder before printing any table
    bad_json = snapaudit("analyze", "--answers", str(tmp_path / "answers.jsonl"), "--old", "n0",
                         "--new", "n1", "--json", str(tmp_path / "nope" / "r.json"),
                         cwd=tmp_path)
    assert bad_json.stdout == ""


def test_plan_on_an_exact_only_run(finished_run: Path, tmp_path: Path) -> None:
    done = snapaudit("plan", str(finished_run), cwd=tmp_path)
    assert "Traceback" not in done.stderr + done.stdout
    assert done.returncode == 0, done.stderr
    assert "the pilot has no semantic values" in done.stdout
    exact = snapaudit("plan", str(finished_run), "--exact-only", cwd=tmp_path)
    assert exact.returncode == 0 and "semantic" not in exact.stdout.split("needed", 1)[1]


def test_a_bom_is_accepted(tmp_path: Path) -> None:
    bom = _answers(tmp_path / "bom.jsonl", GRID, prefix=b"\xef\xbb\xbf")
    done = snapaudit("analyze", "--answers", str(bom), "--old", "n0", "--new", "n1", "--draws",
                     "200", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Verdict: " in done.stdout and "SMALL SAMPLE: 2 questions" in done.stdout


def test_help_everywhere(tmp_path: Path) -> None:
    bare = snapaudit(cwd=tmp_path)
    assert bare.returncode == 0 and "Commands:" in bare.stdout
    for name in COMMANDS:
        done = snapaudit(name, "-h", cwd=tmp_path)
        assert done.returncode == 0 and "Usage:" in done.stdout, name
    for command in _commands():
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, (command.name, param.opts)


def _commands() -> list[click.Command]:
    out = []
    for module, _ in COMMANDS.values():
        command = importlib.import_module(f"snapaudit.cli.{module}").command
        out.append(command)
        if isinstance(command, click.Group):
            out += list(command.commands.values())
    return out


def test_limit_smoke_run_and_default_run_dir(tmp_path: Path) -> None:
    write_world(tmp_path)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc)
        done = snapaudit("run", str(proto), "--limit", "3", "--progress", "plain",
                         cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    smoke = tmp_path / "runs" / "test-audit.smoke-3"
    results = json.loads((smoke / "results.json").read_text(encoding="utf-8"))
    assert results["comparison"]["questions"] == 3
    assert "SMOKE RUN: first 3 questions" in done.stdout
    assert not (tmp_path / "runs" / "test-audit").exists()  # never mixed into the full run
    assert "/s" in done.stderr and ("ETA" in done.stderr or "elapsed" in done.stderr)
