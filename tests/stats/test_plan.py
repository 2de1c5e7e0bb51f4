"""``plan``: sample sizes from hand-computed pilot variances, and the CLI on a run dir."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from snapaudit import tables
from snapaudit.cli.plan import command
from snapaudit.errors import ConfigError
from snapaudit.run.after.pilot import pilot_from_run
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.plan import pilot_from_values, plan
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

# z_0.95 + z_0.8 = 1.6448536 + 0.8416212 = 2.4864749; squared 6.1825572. z_0.8^2 = 0.7083263.


def test_plan_from_hand_computed_variance() -> None:
    # D_i = 0, 0.2: mean 0.1 (10 pp), sd = sqrt(2 * 0.1^2 / 1) = 0.14142 -> variance 200 pp^2
    pilot = pilot_from_values({"exact": np.array([0.0, 0.2]),
                               "semantic": np.array([0.0, 0.2])}, repeats=2)
    assert pilot.sd_pp["exact"] ** 2 == pytest.approx(200.0)
    assert pilot.d_hat_pp["exact"] == pytest.approx(10.0)
    rows = {r.target_d_pp: r for r in plan(pilot, [3, 6, 10]).rows}
    # D = 6: lcb rules 6.1825572 * 200 / 36 = 34.35 -> 35; d_hat >= 3: .7083263 * 200 / 9 = 15.7
    need6 = {x.rule: x.questions for x in rows[6].rules}
    assert need6 == {"exact d_hat >= 3": 16, "exact lcb95 > 0": 35, "semantic lcb95 > 0": 35}
    assert rows[6].questions == 35
    # D = 10: 6.1825572 * 2 = 12.4 -> 13
    assert rows[10].questions == 13
    # D = 3 is not above the point threshold: no n reaches 80%
    assert rows[3].questions is None
    assert {x.rule: x.questions for x in rows[3].rules}["exact lcb95 > 0"] == 138  # 137.4


def test_pilot_without_semantic_values_cannot_plan_the_semantic_rule() -> None:
    pilot = pilot_from_values({"exact": np.array([0.0, 0.2])}, repeats=2)
    row = plan(pilot, [10]).rows[0]
    assert row.questions is None
    assert next(x.note for x in row.rules if x.rule.startswith("semantic")) is not None


def test_power_must_be_above_one_half() -> None:
    pilot = pilot_from_values({"exact": np.array([0.0, 0.2])}, repeats=2)
    with pytest.raises(ConfigError):
        plan(pilot, [6], power=0.4)


def _write_run(run: Path, with_results: bool) -> None:
    # q0 stable ("x" everywhere): D = 0; q1 flips "a" -> "b": D = 1.
    # D_i = (0, 1): sd = 0.70711 -> variance 5000 pp^2
    answers = {("q0", "n1"): "x", ("q0", "n2"): "x", ("q1", "n1"): "a", ("q1", "n2"): "b"}
    rows = [AnswerRow(q, s, j, text) for (q, s), text in answers.items() for j in (1, 2)]
    refs = [AnswerRef(s, j) for s in ("n1", "n2") for j in (1, 2)]
    labels = [PairLabel(q, a, b, answers[(q, a.state)] == answers[(q, b.state)])
              for q in ("q0", "q1") for i, a in enumerate(refs) for b in refs[i + 1:]]
    (run / "tables").mkdir(parents=True)
    tables.write_answers(run / "tables" / "answers.jsonl", rows)
    tables.write_labels(run / "tables" / "labels.jsonl", labels)
    if with_results:
        # a real results document (read through snapaudit.read_results): old n1, new n2
        config = AnalysisConfig(old="n1", new="n2", draws=100, permutations=0)
        doc = analyze(rows, config=config, labels=labels).to_json()
        assert doc["kernels"]["semantic"]["judge"] == "default"  # type: ignore[index]
        (run / "results.json").write_text(json.dumps(doc), encoding="utf-8")


def test_pilot_from_run_dir(tmp_path: Path) -> None:
    _write_run(tmp_path / "run", with_results=True)
    pilot = pilot_from_run(tmp_path / "run" / "results.json")
    assert pilot.questions == 2 and pilot.repeats == 2
    assert pilot.sd_pp["exact"] ** 2 == pytest.approx(5000.0)
    assert pilot.sd_pp["semantic"] ** 2 == pytest.approx(5000.0)
    assert pilot.d_hat_pp == {"exact": 50.0, "semantic": 50.0}


def test_cli_prints_the_plan(tmp_path: Path) -> None:
    _write_run(tmp_path / "run", with_results=True)
    out = CliRunner().invoke(command, [str(tmp_path / "run"), "--target-d", "10",
                                       "--json", str(tmp_path / "plan.json")])
    assert out.exit_code == 0, out.output
    # lcb rules: 6.1825572 * 5000 / 100 = 309.1 -> 310; d_hat >= 3: .7083263 * 5000 / 49 = 72.3
    assert "310" in out.output and "73" in out.output
    doc = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert doc["rows"][0]["questions"] == 310


def test_cli_needs_states_without_results(tmp_path: Path) -> None:
    _write_run(tmp_path / "run", with_results=False)
    with pytest.raises(ConfigError):
        pilot_from_run(tmp_path / "run")
    pilot = pilot_from_run(tmp_path / "run", old="n1", new="n2")
    assert pilot.d_hat_pp["exact"] == 50.0
