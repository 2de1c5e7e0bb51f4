"""``snapaudit analyze --margin --looks --fail-on not-compatible``: the three verdicts' exit
codes and one line with exit 2 for every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import exit_code

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BASE = ["analyze", "--answers", str(EXAMPLES / "answers.jsonl"), "--old", "n1", "--new", "n7",
        "--gate-profile", "exact-only", "--permutations", "0", "--draws", "500"]


@pytest.mark.parametrize(("margin", "code", "key"), [
    ("30", 0, "compatible"),   # exact ucb95 of the example (9.23) is below 30 pp
    ("5", 4, "incompatible"),  # excess churn established (lcb95 3.33), not below 5 pp
])
def test_not_compatible_passes_only_on_compatible(margin: str, code: int, key: str,
                                                  tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert exit_code([*BASE, "--margin", margin, "--fail-on", "not-compatible", "--json",
                      str(out)]) == code
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["verdict"]["key"] == key and doc["gate"]["margin_pp"] == float(margin)
    assert "Compatibility within" in capsys.readouterr().out


def test_undecided_exits_7(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 30 simulated questions with a little churn: lcb95 < 0 and ucb95 above a 2 pp margin
    import numpy as np

    from snapaudit.stats.simulate import cohort_tables, simulate_cohort, standard_mixture
    from snapaudit.tables import write_answers

    rows, _ = cohort_tables(simulate_cohort(standard_mixture(2.0), 30, 2,
                                            np.random.default_rng(4)))
    small = tmp_path / "small.jsonl"
    write_answers(small, rows)
    argv = ["analyze", "--answers", str(small), "--old", "old", "--new", "new",
            "--gate-profile", "exact-only", "--permutations", "0", "--margin", "2",
            "--fail-on", "not-compatible", "--json", str(tmp_path / "r.json")]
    assert exit_code(argv) == 7
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"]["key"] == "undecided"
    assert doc["kernels"]["exact"]["lcb95"] <= 0 < 2 <= doc["kernels"]["exact"]["ucb95"]
    assert "UNDECIDED" in capsys.readouterr().out


@pytest.mark.parametrize(("extra", "message"), [
    (["--margin", "0"], "--margin: must be > 0.0, got 0"),
    (["--margin", "100"], "--margin: must be < 100.0"),
    (["--looks", "0"], "--looks: must be >= 1, got 0"),
    (["--looks", "30"], "first block of 8 question(s)"),
    (["--fail-on", "not-compatible"], "--fail-on not-compatible needs a margin"),
    (["--looks", "2", "--planned-questions", "1000"], "look 1 of 2 needs the first 500"),
])
def test_bad_input_is_one_line_and_exit_2(extra: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code([*BASE, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_looks_stop_early_and_say_what_they_saved(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code([*BASE, "--margin", "30", "--looks", "4"]) == 0
    out = capsys.readouterr().out
    # the example compatible within 30 pp at its first look: 60 of its 240 questions
    assert ("Sequential design: stopped at look 1 of 4 (compatible): 60 of 240 questions, "
            "1,440 of 1,920 answer calls not made") in out
