"""``plan --looks K --margin M``: the tilted pilot, the simulated designs, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from snapaudit import tables
from snapaudit.cli.plan import command
from snapaudit.errors import ConfigError
from snapaudit.stats.gate import GateConfig
from snapaudit.stats.plan import pilot_from_values
from snapaudit.stats.plan_sequential import render_sequential, sequential_plan, tilt
from snapaudit.stats.simulate import (
    NOISY,
    STABLE,
    Mixture,
    QuestionType,
    cohort_values,
    simulate_cohort,
)
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel
from tests.helpers.cli import snapaudit


def test_tilting_one_column_by_hand() -> None:
    # p proportional to (e^0, e^theta) with mean 0.25: p = (0.75, 0.25)
    p = tilt(np.array([[0.0], [1.0]]), np.array([0.5, 0.5]), np.array([0.25]))
    assert p is not None
    assert p == pytest.approx([0.75, 0.25], abs=1e-9)


def test_tilting_two_independent_columns_keeps_them_independent() -> None:
    # the four rows of two fair coins tilted to means (0.3, 0.6): the product of the tilted
    # coins, p(x1, x2) = P(x1) P(x2) with P(x1 = 1) = 0.3 and P(x2 = 1) = 0.6
    rows = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    p = tilt(rows, np.full(4, 0.25), np.array([0.3, 0.6]))
    assert p is not None
    assert p == pytest.approx([0.7 * 0.4, 0.3 * 0.6, 0.3 * 0.4, 0.7 * 0.6], abs=1e-9)


def test_tilting_to_the_pilots_own_mean_changes_nothing() -> None:
    shares = np.array([0.2, 0.5, 0.3])
    rows = np.array([[-0.5], [0.0], [1.0]])
    p = tilt(rows, shares, np.array([shares @ rows[:, 0]]))
    assert p == pytest.approx(shares, abs=1e-9)


def test_a_target_the_optimizer_stops_short_of_by_2e_9_is_reached() -> None:
    # a study-like pilot (five distinct rows) tilted to 10 pp in both kernels: scipy's
    # trust-exact stops with the mean 2.3e-9 from the target ("a bad approximation"), which
    # is reached for any purpose of the plan
    rows = np.array([[-0.5, -0.5], [-0.5, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    shares = np.array([0.035, 0.0175, 0.9125, 0.0075, 0.0275])
    p = tilt(rows, shares, np.array([0.1, 0.1]))
    assert p is not None
    assert p @ rows == pytest.approx([0.1, 0.1], abs=1e-7)


def test_a_mean_outside_the_rows_cannot_be_reached() -> None:
    rows = np.array([[0.0], [0.5]])
    assert tilt(rows, np.array([0.5, 0.5]), np.array([0.75])) is None
    assert tilt(np.array([[0.0]]), np.array([1.0]), np.array([0.1])) is None
    # both columns equal on every row: (0.2, 0.3) is off their diagonal
    assert tilt(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([0.5, 0.5]),
                np.array([0.2, 0.3])) is None


def _certain_pilot() -> tuple[dict[str, np.ndarray], int]:
    # D_i in {-0.5, 0, 0.5}, a third each: mean 0, sd 0.40825. Look 1 of 8 over 80 sees 10
    # of them; its upper bound resamples them with the pseudo-question at D_i = 1: a mean of
    # 11 draws reaches 99 pp only when all 11 are the pseudo-question (ten of it and a 0.5
    # make 10.5 / 11 = 95 pp), chance (1/11)^11 = 3.5e-12 < p_1 = 3e-8, so the upper bound
    # is under a 99 pp margin and look 1 says COMPATIBLE, unless its lower bound is above 0
    # (INCOMPATIBLE is checked first), which needs P(resampled mean <= 0) < p_1 = 3e-8: at
    # most one of the 10 D_i at or below 0 (chance 21 / 3^10 = 3.6e-4 per audit)
    d = np.array([-0.5, 0.0, 0.5])
    return {"exact": d, "semantic": d}, 2


def test_a_certain_decision_by_hand() -> None:
    values, repeats = _certain_pilot()
    pilot = pilot_from_values(values, repeats, states=2)
    result = sequential_plan(pilot, GateConfig(margin_pp=99.0), looks=8, planned=80,
                             simulations=20)
    zero, at_m, at_2m, observed = result.rows
    assert zero.sd_pp == pytest.approx({"exact": 40.824829, "semantic": 40.824829})
    assert zero.d_pp == pytest.approx({"exact": 0.0, "semantic": 0.0}, abs=1e-9)
    assert zero.sequential is not None and zero.fixed is not None
    assert (zero.sequential.compatible, zero.sequential.incompatible) == (1.0, 0.0)
    assert (zero.sequential.mean_questions, zero.sequential.p90_questions) == (10.0, 10)
    assert zero.sequential.saved == 1 - 10 / 80
    # one look at 80 questions (nominal 0.05): INCOMPATIBLE in about 5% (checked first),
    # else COMPATIBLE (every upper bound is at most 50)
    assert zero.fixed.compatible + zero.fixed.incompatible == 1.0
    assert zero.fixed.incompatible <= 0.15
    assert (zero.fixed.mean_questions, zero.fixed.p90_questions, zero.fixed.saved) == (
        80.0, 80, 0.0)
    assert at_m.sequential is None and at_2m.note is not None  # D = 99, 198 pp: above 50
    # the pilot as observed: its own D (0 here) and SD, drawn with other random numbers
    assert observed.target_d_pp is None and observed.sd_pp == zero.sd_pp
    assert observed.d_pp == {"exact": 0.0, "semantic": 0.0}
    assert observed.sequential is not None and observed.sequential.compatible == 1.0
    assert result.calls_per_question == 4
    text = render_sequential(result)
    assert "8 look(s) over 80 questions (first block 10)" in text
    # mean 10 questions x 4 calls = 40, 87.5% of the calls saved; the fixed design's 80 x 4
    seq_line = text.split("sequential", 2)[2].splitlines()[0]
    assert seq_line.split()[-3:] == ["40", "40", "87.5%"]
    assert "320       320    0.0%" in text
    assert text.splitlines()[-1].endswith("as observed, not tilted (D = 0.0 / 0.0 pp)")


def _study_like_pilot(n: int = 400) -> dict[str, np.ndarray]:
    noise = QuestionType("noise", {"fact 0": 0.5, "fact 1": 0.5},
                         {"fact 0": 0.5, "fact 1": 0.5})
    mixture = Mixture((STABLE, noise, NOISY), (0.75, 0.2, 0.05))
    v = cohort_values(simulate_cohort(mixture, n, 2, np.random.default_rng(5)))
    return {"exact": v[:, 0], "semantic": v[:, 1]}


def test_the_design_decides_as_its_errors_promise() -> None:
    pilot = pilot_from_values(_study_like_pilot(), 2, states=4)
    gate = GateConfig(margin_pp=5.0)
    result = sequential_plan(pilot, gate, looks=4, planned=200, simulations=40, seed=3)
    zero, at_m, at_2m, _ = (r.sequential for r in result.rows)
    assert zero is not None and at_m is not None and at_2m is not None
    assert zero.compatible >= 0.8 and zero.incompatible == 0.0
    assert at_m.compatible <= 0.2  # the compatible claim's null: <= 5% + Monte Carlo error
    assert at_2m.incompatible >= 0.8
    assert zero.mean_questions < 200 and at_2m.mean_questions < 200
    assert result.rows[0].fixed is not None and result.rows[0].fixed.mean_questions == 200
    again = sequential_plan(pilot, gate, looks=4, planned=200, simulations=40, seed=3)
    assert again.to_json() == result.to_json()  # seeded: the same numbers
    other = sequential_plan(pilot, gate, looks=4, planned=200, simulations=40, seed=4)
    assert other.to_json() != result.to_json()


def test_the_plan_refuses_what_it_cannot_simulate() -> None:
    values, repeats = _certain_pilot()
    exact_only = pilot_from_values({"exact": values["exact"]}, repeats)
    with pytest.raises(ConfigError, match="--exact-only"):
        sequential_plan(exact_only, GateConfig(margin_pp=5.0), 4, 80)
    pilot = pilot_from_values(values, repeats)
    with pytest.raises(ConfigError, match="first block of 9"):
        sequential_plan(pilot, GateConfig(margin_pp=5.0), 9, 81)
    with pytest.raises(ConfigError, match="margin"):
        sequential_plan(pilot, GateConfig(), 4, 80)


def _write_pilot(run: Path) -> None:
    # q1: old (x, y), new (x, y): D = -0.5; q2 stable: 0; q3: old (x, x), new (y, z): 0.5
    answers = {"q1": (("x", "y"), ("x", "y")), "q2": (("s", "s"), ("s", "s")),
               "q3": (("x", "x"), ("y", "z"))}
    rows = [AnswerRow(q, state, j + 1, texts[i][j]) for q, texts in answers.items()
            for i, state in enumerate(("n1", "n2")) for j in range(2)]
    text = {(r.question_id, r.state, r.repeat): r.answer for r in rows}
    refs = [AnswerRef(s, j) for s in ("n1", "n2") for j in (1, 2)]
    labels = [PairLabel(q, a, b, text[(q, a.state, a.repeat)] == text[(q, b.state, b.repeat)])
              for q in answers for i, a in enumerate(refs) for b in refs[i + 1:]]
    (run / "tables").mkdir(parents=True)
    tables.write_answers(run / "tables" / "answers.jsonl", rows)
    tables.write_labels(run / "tables" / "labels.jsonl", labels)


def test_cli_prints_the_sequential_plan(tmp_path: Path) -> None:
    _write_pilot(tmp_path / "run")
    args = [str(tmp_path / "run"), "--old", "n1", "--new", "n2", "--looks", "8", "--margin",
            "99", "--questions", "80", "--simulations", "20", "--progress", "silent"]
    out = CliRunner().invoke(command, [*args, "--json", str(tmp_path / "plan.json")])
    assert out.exit_code == 0, out.output
    assert "sequential design: 8 look(s) over 80 questions" in out.output
    doc = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    zero = doc["sequential"][0]["rows"][0]
    assert zero["sequential"] == {"incompatible": 0.0, "compatible": 1.0,
                                  "mean_questions": 10.0, "p90_questions": 10,
                                  "calls_saved": 0.875}
    rows = doc["sequential"][0]["rows"]
    assert [r["target_d"] for r in rows] == [0.0, 99.0, 198.0, None]  # None: the pilot
    assert doc["sequential"][0]["calls_per_question"] == 4  # 2 states x 2 repeats
    again = CliRunner().invoke(command, args)
    assert again.output == out.output  # seeded: the same bytes


@pytest.mark.parametrize(("extra", "message"), [
    (["--looks", "0", "--margin", "5"], "--looks must be at least 1, got 0"),
    (["--looks", "4", "--margin", "0"], "--margin must be above 0 and below 100 pp, got 0"),
    (["--looks", "4", "--margin", "100"], "got 100"),
    (["--looks", "4"], "--looks K and --margin PP go together"),
    (["--looks", "4", "--margin", "5", "--simulations", "5"], "--simulations must be"),
    (["--looks", "8", "--margin", "5", "--questions", "79"], "first block of 9"),
    (["--looks", "2", "--margin", "5"], "the pilot's question count"),
])
def test_cli_refuses_bad_sequential_options(tmp_path: Path, extra: list[str],
                                            message: str) -> None:
    _write_pilot(tmp_path / "run")
    out = CliRunner().invoke(command, [str(tmp_path / "run"), "--old", "n1", "--new", "n2",
                                       *extra])
    assert isinstance(out.exception, ConfigError), out.output
    assert message in str(out.exception)


def test_bad_looks_exit_2_with_one_line(tmp_path: Path) -> None:
    _write_pilot(tmp_path / "run")
    done = snapaudit("plan", str(tmp_path / "run"), "--old", "n1", "--new", "n2", "--looks",
                     "8", "--margin", "5", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert "first block of 0" in done.stderr and "--questions N" in done.stderr
