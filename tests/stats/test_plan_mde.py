"""``plan``: minimum detectable effect and the design effect of clustered pilots."""

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
from snapaudit.stats.plan import mde, pilot_from_values, plan
from snapaudit.tables import AnswerRow

# z_0.95 + z_0.8 = 2.4864749; z_0.8 = 0.8416212


def test_mde_hand_values() -> None:
    # D_i = 0, 0.2: sd 14.142 pp; at n = 50 the standard error is 14.142 / sqrt(50) = 2 pp
    pilot = pilot_from_values({"exact": np.array([0.0, 0.2]),
                               "semantic": np.array([0.0, 0.2])}, repeats=2)
    row = mde(pilot, [50])[0]
    rules = dict(row.rules)
    assert rules["exact lcb95 > 0"] == pytest.approx(2.4864749 * 2, abs=1e-6)
    assert rules["exact d_hat >= 3"] == pytest.approx(3 + 0.8416212 * 2, abs=1e-6)
    assert row.mde_pp == pytest.approx(4.9729498, abs=1e-6)
    # the inverse of plan(): at the planned n the MDE is at most the target
    n = plan(pilot, [6.0]).rows[0].questions
    assert n is not None and mde(pilot, [n])[0].mde_pp <= 6.0  # type: ignore[operator]
    assert mde(pilot, [n - 1])[0].mde_pp > 6.0  # type: ignore[operator]
    with pytest.raises(ConfigError):
        mde(pilot, [0])


def test_mde_without_semantic_values_is_none() -> None:
    pilot = pilot_from_values({"exact": np.array([0.0, 0.2])}, repeats=2)
    assert mde(pilot, [100])[0].mde_pp is None


def test_design_effect_multiplies_the_sample_size() -> None:
    # D_i = 0, 0, .2, .2 in clusters {0, 0}, {1, 1}: ICC 1, m_bar 2, deff 2;
    # sd^2 = 4 * 0.01 / 3 -> 133.33 pp^2; D = 6 lcb rule: 6.1825572 * 133.33 / 36 = 22.9 -> 23,
    # times deff 2: 45.8 -> 46
    values = {"exact": np.array([0.0, 0.0, 0.2, 0.2]), "semantic": np.array([0.0, 0.0, 0.2, 0.2])}
    plain = pilot_from_values(values, repeats=2)
    clustered = pilot_from_values(values, repeats=2, groups=np.array([0, 0, 1, 1]))
    assert clustered.design_effect == {"exact": 2.0, "semantic": 2.0}
    assert clustered.clusters == 2 and clustered.mean_cluster_size == 2.0
    need = {x.rule: x.questions for x in plan(plain, [6.0]).rows[0].rules}
    need_c = {x.rule: x.questions for x in plan(clustered, [6.0]).rows[0].rules}
    assert need["exact lcb95 > 0"] == 23 and need_c["exact lcb95 > 0"] == 46
    lcb = "exact lcb95 > 0"   # threshold 0: the MDE scales with sqrt(deff)
    assert dict(mde(clustered, [100])[0].rules)[lcb] == pytest.approx(
        dict(mde(plain, [100])[0].rules)[lcb] * np.sqrt(2))  # type: ignore[operator]


def _write_clustered_run(run: Path) -> None:
    # q0, q1 stable (D 0) in cluster c0; q2, q3 flip (D 1) in cluster c1: ICC 1, deff 2
    rows = []
    for q, cluster, old, new in (("q0", "c0", "x", "x"), ("q1", "c0", "y", "y"),
                                 ("q2", "c1", "a", "b"), ("q3", "c1", "c", "d")):
        rows += [AnswerRow(q, s, j, t, cluster=cluster) for s, t in (("n1", old), ("n2", new))
                 for j in (1, 2)]
    (run / "tables").mkdir(parents=True)
    tables.write_answers(run / "tables" / "answers.jsonl", rows)


def test_cli_mde_and_design_effect(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write_clustered_run(run)
    pilot = pilot_from_run(run, old="n1", new="n2")
    assert pilot.design_effect == {"exact": 2.0}
    out = CliRunner().invoke(command, [str(run), "--old", "n1", "--new", "n2", "--questions",
                                       "100,400", "--json", str(tmp_path / "p.json")])
    assert out.exit_code == 0, out.output
    assert "design effect exact 2.00" in out.output and "minimum detectable D" in out.output
    doc = json.loads((tmp_path / "p.json").read_text())
    assert [r["questions"] for r in doc["mde"]] == [100, 400]
    assert doc["pilot"]["design_effect"] == {"exact": 2.0}
    bad = CliRunner().invoke(command, [str(run), "--old", "n1", "--new", "n2", "--repeats", "4"])
    assert isinstance(bad.exception, ConfigError) and "r = 2" in str(bad.exception)
