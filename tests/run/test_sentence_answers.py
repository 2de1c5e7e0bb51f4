"""Sentence answers, offline: a pipeline that answers "The headquarters is in Austin." gets
the contains-gold match beside EM, a warning and a summary that point to the offline rule
judge, and a document whose text changed under the same id is reported as changed.

The world (tests/fakes/sentence_pipeline.py): 6 questions x 2 repeats, every answer of a
question worded differently, two headquarters moved in the new index. Hand-computed:
exact kernel within = cross = D = 0; EM 1 of 12 cells in each state (8.33 %); contains-gold
12/12 old (100 %), 8/12 new (66.67 %): -33.33 pp; the rule judge calls every same-city pair
the same and every moved pair different, so semantic D = 2 questions x 1 / 6 = 33.33 pp, each
moved question contributing 16.67 pp; median words: old 6.5, new 6, both 24 answers 6.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.sentence_pipeline import write_world
from tests.helpers.cli import exit_code
from tests.helpers.protocol import python_protocol_text, save_protocol

TARGET = 'target = "tests.fakes.sentence_pipeline:answer"\nkwargs = {{ index = "{}" }}'


def _protocol(tmp: Path) -> Path:
    write_world(tmp)
    return save_protocol(tmp, python_protocol_text(TARGET.format("v1"), TARGET.format("v2"),
                                                   run={"concurrency": 1}))


def test_sentence_answers_are_steered_to_the_offline_judge(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, child = tmp_path / "run", tmp_path / "run-rule"
    assert exit_code(["run", str(_protocol(tmp_path)), "--run-dir", str(run),
                      "--progress", "silent"]) == 0
    out = capsys.readouterr().out
    doc = json.loads((run / "results.json").read_text())
    exact = doc["kernels"]["exact"]
    assert (exact["within"], exact["cross"], exact["d_hat"]) == (0.0, 0.0, 0.0)
    util = doc["utility"]
    assert util["old"]["em"] == util["new"]["em"] == pytest.approx(100 / 12)
    assert (util["old"]["contains"], util["new"]["contains"]) == (100.0, pytest.approx(800 / 12))
    assert util["contains_delta"] == pytest.approx(-400 / 12)
    assert doc["comparison"]["answer_words"] == 6.0
    assert (doc["overlap"]["identical"], doc["overlap"]["changed"]) == (6, 2)
    assert doc["overlap"]["changed_docs"] == pytest.approx(1 / 3)
    [warning] = doc["warnings"]
    assert warning["code"] == "sentence_answers"
    assert "median words: new 6, old 6.5" in warning["message"]
    assert "snapaudit rejudge RUN_DIR --judge rule --gate long-form" in warning["message"]
    fix = f"snapaudit rejudge {run} --judge rule --gate long-form --out {run}-rule"
    assert "No kernel here reads these answers: answers are sentences (median 6 words)" in out
    assert fix in out
    assert "EM change +0.00 pp; the answer contains a gold answer 100.00% -> 66.67% " \
           "(-33.33 pp)" in out
    assert "No question's answers moved more across old -> new than within a state (exact " \
           "kernel)." in out

    # the advice, as printed: no system call, the rule judge, the semantic gate
    assert exit_code([*fix.split()[1:], "--progress", "silent"]) == 0
    out = capsys.readouterr().out
    doc = json.loads((child / "results.json").read_text())
    assert doc["kernels"]["semantic"]["d_hat"] == pytest.approx(200 / 6)
    assert doc["gate"]["profile"] == "long-form" and "warnings" not in doc
    assert "Read the semantic kernel: answers are sentences (median 6 words): the exact " \
           "kernel counts every rewording as a change." in out
    assert ("  q000  +16.67  Where is the headquarters of company Acme?\n"
            '    old old: "The headquarters is in Austin." | "The headquarters of company '
            'Acme is in Austin."\n'
            '    new new: "Company Acme is located in Seattle." | "The headquarters is '
            'located in Seattle."\n  q001  +16.67') in out

    assert exit_code(["report", str(child)]) == 0
    out = capsys.readouterr().out
    assert "Largest contributions to D (semantic kernel, pp): 2 of the 2 question(s)" in out
    assert "  q001  +16.67  Where is the headquarters of company Birch?" in out
    report = (child / "report.md").read_text()
    assert "- evidence old→new: entered ` - `; left ` - `; text changed (same id): hq-0" \
        in report
    assert "text changed (same id): hq-1" in report
    assert "text changed (same id): hq-2" not in report
    assert "The answer contains a gold answer (a run of whole words): 100.00 % → 66.67 % " \
           "(change -33.33 pp)." in report
    assert "text changed under the same id: 2 questions)" in report
    # the sentences name the gold city: [C], not [M] (only the bare city is an exact match)
    assert "- old old: The headquarters is in Austin. [C] / The headquarters of company Acme " \
           "is in Austin. [C]" in report
    assert "- new new: Company Acme is located in Seattle. [N] / " in report
