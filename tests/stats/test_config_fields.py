"""AnalysisConfig, GateConfig and GateRule: frozen dataclasses checked as the pydantic models
they were (same defaults, bounds and messages), and no pydantic on `snapaudit analyze`."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError, FieldErrors
from snapaudit.stats.analysis import AnalysisConfig
from snapaudit.stats.gate import GateConfig, GateRule

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_defaults_and_normalized_values() -> None:
    c = AnalysisConfig(old="a", new="b", ladder=["a", "b"])  # type: ignore[arg-type]
    assert c.ladder == ("a", "b") and c.draws == 50_000 and c.permutations == 10_000
    assert c.bootstrap == "exact" and c.benchmark == "nq" and c.gate == GateConfig()
    g = GateConfig(profile="long-form", min_d_pp=5)
    assert g.min_d_pp == 5.0 and isinstance(g.min_d_pp, float)
    assert [r.describe() for r in g.active_rules()] == ["semantic d_hat >= 5",
                                                         "semantic lcb95 > 0"]
    rule = GateRule(kernel="exact", statistic="lcb95", op=">", threshold=0)
    assert GateConfig(rules=[rule]).rules == (rule,)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.draws = 5  # type: ignore[misc]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"draws": 5}, "draws: must be >= 100, got 5"),
    ({"draws": 5, "permutations": -1},
     "draws: must be >= 100, got 5; permutations: must be >= 0, got -1"),
    ({"draws": "200"}, "draws: must be an integer, got str '200'"),
    ({"draws": True}, "draws: must be an integer, got bool True"),
    ({"benchmark": "squad"}, "benchmark: must be one of 'nq' or 'triviaqa', got 'squad'"),
    ({"bootstrap": "bca"}, "bootstrap: must be one of 'exact' or 'draws', got 'bca'"),
    ({"ladder": "a,b"}, "ladder: must be a list of strings, got str 'a,b'"),
    ({"new": "a"}, "old and new must be different states"),
    ({"ladder": ("a", "a", "b")}, "ladder must list at least 2 distinct states"),
    ({"ladder": ("a", "c")}, "ladder must contain the old and new states"),
    ({"gate": {"profile": "study"}}, "gate: must be a GateConfig, got dict"),
])
def test_analysis_config_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(FieldErrors) as err:
        AnalysisConfig(**{"old": "a", "new": "b", **kwargs})  # type: ignore[arg-type]
    assert str(err.value) == message
    assert isinstance(err.value, ValueError) and isinstance(err.value, ConfigError)


def test_gate_errors_and_their_option_names() -> None:
    with pytest.raises(FieldErrors) as err:
        GateConfig(profile="strict", min_d_pp=-1)  # type: ignore[arg-type]
    assert str(err.value) == ("profile: must be one of 'study', 'long-form' or 'exact-only', "
                              "got 'strict'; min_d_pp: must be >= 0.0, got -1")
    assert err.value.describe({"min_d_pp": "--min-d"}).endswith("--min-d: must be >= 0.0, got -1")
    with pytest.raises(FieldErrors, match="rules: has 0 item"):
        GateConfig(rules=())
    with pytest.raises(FieldErrors, match="op: must be one of '>=' or '>', got '<'"):
        GateRule(kernel="exact", statistic="d_hat", op="<", threshold=1.0)  # type: ignore[arg-type]


def test_analyze_imports_no_pydantic(tmp_path: Path) -> None:
    code = ("import sys, atexit\n"
            "atexit.register(lambda: print('PYDANTIC', 'pydantic' in sys.modules))\n"
            "from snapaudit.cli import main\nmain()\n")
    out = subprocess.run(
        [sys.executable, "-c", code, "analyze", "--answers", str(EXAMPLES / "answers.jsonl"),
         "--labels", str(EXAMPLES / "labels.jsonl"), "--gold", str(EXAMPLES / "gold.jsonl"),
         "--old", "n1", "--new", "n7", "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "PYDANTIC False" in out.stdout and (tmp_path / "r.json").exists()
