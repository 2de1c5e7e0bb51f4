"""analyze() end to end on hand-made tables, and the command on the shipped example."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _analysis_helpers import labels_from_groups, rows
from click.testing import CliRunner

from snapaudit.analysis import SCHEMA_VERSION, AnalysisConfig, analyze
from snapaudit.cli.analyze import command
from snapaudit.errors import ConfigError, InputError
from snapaudit.summary import render_text
from snapaudit.tables import read_answers, read_gold, read_labels

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples"

TABLE = {
    "q1": {"A": ["x", "x"], "B": ["x", "y"]},
    "q2": {"A": ["x", "y"], "B": ["z", "z"]},
    "q3": {"A": ["p", "p"], "B": ["q", "q"]},
}
FACTS = {"q1": {"A1": "x", "A2": "x", "B1": "x", "B2": "y"},
         "q2": {"A1": "x", "A2": "x", "B1": "z", "B2": "z"},   # judge: x ~ y here
         "q3": {"A1": "p", "A2": "p", "B1": "q", "B2": "q"}}


def _labels() -> list:  # type: ignore[type-arg]
    return [lab for q, g in FACTS.items() for lab in labels_from_groups(q, g)]


def test_analyze_hand_values_and_json_keys() -> None:
    config = AnalysisConfig(old="A", new="B", draws=1000, seed=1)
    res = analyze(rows(TABLE), config=config, labels=_labels(),
                  gold={"q1": ("x",), "q2": ("z",), "q3": ("r",)})
    doc = res.to_json()
    assert doc["schema_version"] == SCHEMA_VERSION
    assert set(doc) == {"schema_version", "comparison", "kernels", "gate", "utility", "flips",
                        "transitions", "overlap", "ladder", "judges"}
    ex, sem = doc["kernels"]["exact"], doc["kernels"]["semantic"]  # type: ignore[index]
    assert (ex["within"], ex["cross"], ex["d_hat"]) == pytest.approx((200 / 3, 50 / 3, 50.0))
    # semantic: q1 w=.5 c=.5 D=0; q2 w=1 c=0 D=1; q3 w=1 c=0 D=1
    assert (sem["within"], sem["cross"], sem["d_hat"]) == pytest.approx((250 / 3, 50 / 3,
                                                                         200 / 3))
    assert set(ex) == {"within", "cross", "d_hat", "lcb95", "ci95", "p_nonpositive"}
    assert doc["comparison"] == {"old": "A", "new": "B", "questions": 3, "repeats": 2,
                                 "states": ["A", "B"], "benchmark": "nq", "draws": 1000,
                                 "seed": 1}
    assert doc["flips"]["question_ids"] == ["q2", "q3"]  # type: ignore[index]
    # EM: A 2 of 6 (q1 both), B 3 of 6 (q1 once, q2 twice) -> +100/6 pp
    assert doc["utility"]["em_delta"] == pytest.approx(100 / 6)  # type: ignore[index]
    assert doc["overlap"] is None and doc["ladder"] is None and doc["judges"] is None
    assert json.dumps(doc, allow_nan=False)
    assert "Excess answer churn" in render_text(res)


def test_without_labels_the_gate_says_so() -> None:
    res = analyze(rows(TABLE), config=AnalysisConfig(old="A", new="B", draws=500))
    assert "semantic" not in res.kernels
    assert not res.gate.passed
    assert res.gate.rules[2].note and "no pair labels" in res.gate.rules[2].note
    assert res.flips.kernel == "exact"


def test_same_inputs_same_bytes() -> None:
    config = AnalysisConfig(old="A", new="B", draws=2000, seed=5)
    a = json.dumps(analyze(rows(TABLE), config=config, labels=_labels()).to_json())
    b = json.dumps(analyze(rows(TABLE)[::-1], config=config, labels=_labels()[::-1]).to_json())
    assert a == b


def test_config_and_input_errors() -> None:
    with pytest.raises(ValueError, match="different"):
        AnalysisConfig(old="A", new="A")
    with pytest.raises(ValueError, match="ladder must contain"):
        AnalysisConfig(old="A", new="B", ladder=("A", "C"))
    with pytest.raises(InputError, match="unknown state"):
        analyze(rows(TABLE), config=AnalysisConfig(old="A", new="C"))
    with pytest.raises(ConfigError, match="primary judge"):
        analyze(rows(TABLE), config=AnalysisConfig(old="A", new="B", primary_judge="zz"),
                labels=_labels())
    partial = [lab for lab in _labels() if not (lab.question_id == "q3" and lab.a.state == "B")]
    with pytest.raises(InputError, match="missing pair label"):
        analyze(rows(TABLE), config=AnalysisConfig(old="A", new="B"), labels=partial)


def test_example_via_python() -> None:
    answers = read_answers(EXAMPLE / "answers.jsonl")
    labels = read_labels(EXAMPLE / "labels.jsonl", answers)
    gold = read_gold(EXAMPLE / "gold.jsonl")
    res = analyze(answers, config=AnalysisConfig(old="n1", new="n7",
                                                 ladder=("n0", "n1", "n3", "n7"), draws=2000),
                  labels=labels, gold=gold)
    assert res.comparison.questions >= 200 and res.comparison.repeats == 2
    assert res.overlap is not None and res.ladder is not None and res.judges is not None
    assert res.ladder.endpoints.flips == res.flips.count


def test_cli_on_the_shipped_example(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    args = ["--answers", str(EXAMPLE / "answers.jsonl"), "--labels",
            str(EXAMPLE / "labels.jsonl"), "--gold", str(EXAMPLE / "gold.jsonl"),
            "--old", "n1", "--new", "n7", "--ladder", "n0,n1,n3,n7", "--draws", "5000",
            "--json", str(out)]
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 0, result.output
    assert "Release gate" in result.output and "Trajectory decomposition" in result.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["comparison"]["questions"] == 240
    assert set(doc["kernels"]) == {"exact", "semantic"}
    assert doc["ladder"]["states"] == ["n0", "n1", "n3", "n7"]
    again = CliRunner().invoke(command, [*args[:-1], str(tmp_path / "again.json")])
    assert again.exit_code == 0
    assert (tmp_path / "again.json").read_bytes() == out.read_bytes()


def test_cli_bad_option(tmp_path: Path) -> None:
    result = CliRunner().invoke(command, ["--answers", str(EXAMPLE / "answers.jsonl"),
                                          "--old", "n1", "--new", "n1"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError)
