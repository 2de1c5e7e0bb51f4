"""analyze() end to end on hand-made tables, and the command on the shipped example."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from snapaudit.cli.analyze import command
from snapaudit.errors import ConfigError, InputError
from snapaudit.report.summary import render_text
from snapaudit.stats.analysis import SCHEMA_VERSION, AnalysisConfig, analyze
from snapaudit.tables import read_answers, read_gold, read_labels
from tests.stats._analysis_helpers import labels_from_groups, rows

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
                        "transitions", "overlap", "ladder", "judges", "flip_rates",
                        "distribution_test", "multiplicity", "sample", "verdict"}
    ex, sem = doc["kernels"]["exact"], doc["kernels"]["semantic"]  # type: ignore[index]
    assert (ex["within"], ex["cross"], ex["d_hat"]) == pytest.approx((200 / 3, 50 / 3, 50.0))
    # semantic: q1 w=.5 c=.5 D=0; q2 w=1 c=0 D=1; q3 w=1 c=0 D=1
    assert (sem["within"], sem["cross"], sem["d_hat"]) == pytest.approx((250 / 3, 50 / 3,
                                                                         200 / 3))
    assert set(ex) == {"within", "cross", "d_hat", "lcb95", "ucb95", "ci95", "p_nonpositive",
                       "method"}
    assert ex["lcb95"] <= ex["d_hat"] <= ex["ucb95"] <= ex["ci95"][1]
    assert doc["comparison"] == {"old": "A", "new": "B", "questions": 3, "repeats": 2,
                                 "states": ["A", "B"], "benchmark": "nq", "draws": 1000,
                                 "seed": 1, "resampled": {"unit": "question", "clusters": None},
                                 "bootstrap": "exact", "answer_words": 1.0}
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
    assert "Verdict: INCOMPATIBLE: every gate rule holds" in result.output
    assert "PASSED" not in result.output
    assert "SMALL SAMPLE: 240 questions; 80% power at D = 3 pp needs about" in result.output
    assert "Trajectory decomposition" in result.output
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


def test_shipped_example_is_what_the_script_makes(tmp_path: Path) -> None:
    import runpy

    module = runpy.run_path(str(REPO / "scripts" / "make_example.py"))
    module["make"](tmp_path)
    for name in ("answers.jsonl", "labels.jsonl", "gold.jsonl"):
        assert (tmp_path / name).read_bytes() == (EXAMPLE / name).read_bytes(), name


def test_crlf_line_ends_are_read(tmp_path: Path) -> None:
    raw = (EXAMPLE / "answers.jsonl").read_bytes().replace(b"\n", b"\r\n")
    (tmp_path / "a.jsonl").write_bytes(raw)
    assert read_answers(tmp_path / "a.jsonl") == read_answers(EXAMPLE / "answers.jsonl")


# Patterns (answers A1 A2 B1 B2 ; facts) -> exact (w, c) ; semantic (w, c), and their counts.
# Solved by hand so that the 400-question table has the reference study's NQ anchors:
# exact   sum w = 75 + 26 = 101 (25.25%),   sum c = 75 + 1/4 = 75.25 (18.8125%)
# semantic sum w = 75+191+62+1.5+26+1 = 356.5 (89.125%), sum c = 75+191+21+1.5+26+1 = 315.5
ANCHOR_PATTERNS = [
    (75, "xxxx", "ffff"),    # exact 1, 1      semantic 1, 1
    (191, "xyzu", "ffff"),   # exact 0, 0      semantic 1, 1
    (62, "xyzu", "ffgg"),    # exact 0, 0      semantic 1, 0   (strict flips)
    (42, "xyzu", "fgfg"),    # exact 0, 0      semantic 0, 1/2
    (3, "xyzu", "fffg"),     # exact 0, 0      semantic 1/2, 1/2
    (26, "xxyy", "ffff"),    # exact 1, 0      semantic 1, 1
    (1, "xyxz", "ffff"),     # exact 0, 1/4    semantic 1, 1
]


def test_table_with_the_reference_anchors() -> None:
    table: dict[str, dict[str, list[str]]] = {}
    labels = []
    i = 0
    for count, strings, facts in ANCHOR_PATTERNS:
        for _ in range(count):
            q = f"q{i:03d}"
            table[q] = {"L": [strings[0] + q, strings[1] + q],
                        "H": [strings[2] + q, strings[3] + q]}
            labels += labels_from_groups(q, dict(zip(["L1", "L2", "H1", "H2"], facts,
                                                     strict=True)))
            i += 1
    res = analyze(rows(table), config=AnalysisConfig(old="L", new="H", draws=2000),
                  labels=labels)
    ex, sem = res.kernels["exact"], res.kernels["semantic"]
    assert (sem.within, sem.cross, sem.d_hat) == pytest.approx((89.125, 78.875, 10.25))
    # the study prints 18.813 and 6.438 (rounded half up)
    assert (ex.within, ex.cross, ex.d_hat) == pytest.approx((25.25, 18.8125, 6.4375))
    assert res.flips.count == 62
    assert res.flips.contribution_pp == pytest.approx(15.5)
    assert res.flips.rest_pp == pytest.approx(10.25 - 15.5)
    assert res.gate.passed


def test_two_judges_full_and_partial() -> None:
    second = []
    for lab in _labels():
        flip = lab.question_id == "q1" and (lab.a.state, lab.b.state) == ("B", "B")
        second.append(type(lab)(lab.question_id, lab.a, lab.b, lab.same != flip, "second"))
    config = AnalysisConfig(old="A", new="B", draws=1000)
    res = analyze(rows(TABLE), config=config, labels=[*_labels(), *second])
    assert res.judges is not None
    assert res.judges.pairs == 18 and res.judges.questions == 3
    assert res.judges.agreement == pytest.approx(100 * 17 / 18)
    assert res.judges.partitions_identical == pytest.approx(200 / 3)
    # second judge: q1 B1~B2 same -> w = 1, c = .5, D = .5; q2, q3 as before (1, 1)
    assert res.judges.d_hat == {"default": pytest.approx(200 / 3), "second": pytest.approx(250 / 3)}
    partial = [lab for lab in second if lab.question_id != "q3"]
    res = analyze(rows(TABLE), config=config, labels=[*_labels(), *partial])
    assert res.judges is not None and res.judges.d_hat["second"] is None
    assert res.judges.d_hat["second@common"] == pytest.approx(100 * (0.5 + 1) / 2)
    assert res.judges.d_hat["default@common"] == pytest.approx(100 * (0 + 1) / 2)
