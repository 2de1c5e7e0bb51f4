"""The terminal summaries name what changed: the questions with the largest contributions to
D, with their old -> new answers, and Within/Cross labelled as agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.report.summary import render_text, results_summary
from snapaudit.report.top_changes import change_lines, shorten, top_changes
from snapaudit.results import RunResults
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.analysis_read import analysis_from_json
from snapaudit.tables import AnswerRow, write_answers
from tests.helpers.cli import exit_code

# exact kernel, states A -> B, 2 repeats (hand-computed D_i = w_i - c_i):
#   q1 Paris, Paris -> Lyon, Lyon:   w 1,              c 0            D_1 = 1
#   q2 Rome, Rome -> Milan, Turin:   w (1 + 0)/2 = .5, c 0            D_2 = .5
#   q3 Oslo everywhere:              w 1,              c 1            D_3 = 0
#   q4 Oslo, Bergen -> Oslo, Bergen: w 0,              c 2/4 = .5     D_4 = -.5
# n = 4: contributions 100 D_i / 4 = +25, +12.5, 0, -12.5 (D = 25 pp); listed: q1, q2
TABLE = {"q1": (("Paris", "Paris"), ("Lyon", "Lyon")),
         "q2": (("Rome", "Rome"), ("Milan", "Turin")),
         "q3": (("Oslo", "Oslo"), ("Oslo", "Oslo")),
         "q4": (("Oslo", "Bergen"), ("Oslo", "Bergen"))}
EXPECTED = ["Largest contributions to D (exact kernel, pp): 2 of the 2 question(s) whose "
            "answers moved more across A -> B than within a state:",
            "  q1  +25.00  question q1",
            '    old A: "Paris" x2',
            '    new B: "Lyon" x2',
            "  q2  +12.50  question q2",
            '    old A: "Rome" x2',
            '    new B: "Milan" | "Turin"']


def _rows() -> list[AnswerRow]:
    return [AnswerRow(q, state, r + 1, text, question=f"question {q}")
            for q, sides in TABLE.items() for state, texts in zip("AB", sides, strict=True)
            for r, text in enumerate(texts)]


def _config() -> AnalysisConfig:
    return AnalysisConfig(old="A", new="B", draws=200, permutations=0)


def test_two_changed_questions_are_named_with_their_answers() -> None:
    result = analyze(_rows(), config=_config())
    assert result.kernels["exact"].d_hat == 25.0
    assert change_lines(result, _rows()) == EXPECTED
    # read back from results.json (no per-question arrays): recomputed, the same lines
    again = analysis_from_json(result.to_json())
    assert again.per_question == {} and change_lines(again, _rows()) == EXPECTED
    kernel, changes, moved = top_changes(again, _rows(), limit=1)
    assert (kernel, [c.question_id for c in changes], moved) == ("exact", ["q1"], 2)
    assert change_lines(result, _rows(), limit=1)[0].startswith(
        "Largest contributions to D (exact kernel, pp): 1 of the 2 question(s)")
    text = render_text(result, _rows())
    assert "\n".join(EXPECTED) in text
    summary = results_summary(RunResults(result), change_lines(result, _rows()))
    assert summary.endswith("\n".join(EXPECTED) + "\n")


def test_agreement_is_labelled_as_agreement() -> None:
    result = analyze(_rows(), config=_config())
    # exact: within = mean w_i = (1 + .5 + 1 + 0)/4 = 62.5 %, cross = (0 + 0 + 1 + .5)/4
    summary = results_summary(RunResults(result))
    assert "exact     Within agreement 62.50%  Cross agreement 37.50%  D +25.00 pp" in summary
    assert "D = Within - Cross: how much more the answers disagree across the two states " \
           "than within one, in pp" in summary
    table = render_text(result).splitlines()
    assert table[1].split() == ["kernel", "Within", "agreement", "Cross", "agreement", "D",
                                "LCB95", "UCB95", "CI95", "P(D<=0)"]
    assert table[3].split()[:4] == ["exact", "62.50", "37.50", "25.00"]


def test_nothing_moved_says_so_and_answers_are_shortened() -> None:
    rows = [AnswerRow("q1", s, r, "same") for s in "AB" for r in (1, 2)]
    rows += [AnswerRow("q2", s, r, "x") for s in "AB" for r in (1, 2)]
    assert change_lines(analyze(rows, config=_config()), rows) == [
        "No question's answers moved more across A -> B than within a state (exact kernel)."]
    long = "The answer\n is\x1b[31m " + "very " * 20 + "long."
    short = shorten(long)
    assert len(short) == 60 and short.endswith("...") and "\n" not in short
    assert short.startswith("The answer is?[31m very very")


def test_analyze_prints_the_changes(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    write_answers(tmp_path / "answers.jsonl", _rows())
    assert exit_code(["analyze", "--answers", str(tmp_path / "answers.jsonl"), "--old", "A",
                      "--new", "B", "--permutations", "0", "--json",
                      str(tmp_path / "r.json")]) == 0
    assert "\n".join(EXPECTED) in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["kernels"]["exact"]["d_hat"] == 25.0


def test_sentence_answers_say_which_kernel_to_read() -> None:
    """Median 6 words (> 5): the exact kernel counts rewordings; with labels read the
    semantic kernel (and the study gate's exact rules are named), without them no kernel."""
    words = "is the one in the"
    rows = [AnswerRow("q1", s, r, f"{s}{r} {words}") for s in "AB" for r in (1, 2)]
    rows += [AnswerRow("q2", s, r, f"x{r} {words}") for s in "AB" for r in (1, 2)]
    bare = analyze(rows, config=_config())
    assert bare.comparison.answer_words == 6.0
    assert "No kernel here reads these answers: answers are sentences (median 6 words): the " \
           "exact kernel counts every rewording as a change, and no judge labelled them. " \
           "Judge them offline (no API key): snapaudit rejudge 'my runs/a' --judge rule " \
           "--gate long-form --out 'my runs/a-rule' (no system call)." \
           in results_summary(RunResults(bare), run_dir="my runs/a")
    assert "pair labels from a judge (--labels;" in render_text(bare)
    from snapaudit.tables import AnswerRef, PairLabel

    refs = [AnswerRef(s, r) for s in "AB" for r in (1, 2)]
    labels = [PairLabel(q, a, b, True) for q in ("q1", "q2") for i, a in enumerate(refs)
              for b in refs[i + 1:]]
    judged = analyze(rows, config=_config(), labels=labels)
    assert "Read the semantic kernel: answers are sentences (median 6 words): the exact " \
           "kernel counts every rewording as a change; the gate's exact rules count them " \
           'too: gate these answers on the semantic kernel alone ([gate] profile = ' \
           '"long-form").' in results_summary(RunResults(judged))
    short = analyze(_rows(), config=_config())
    assert "kernel to read" not in results_summary(RunResults(short)).lower()
    assert "Read the" not in render_text(short) and "No kernel here" not in render_text(short)
