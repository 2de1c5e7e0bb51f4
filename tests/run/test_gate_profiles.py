"""Gate profiles, the not_evaluable verdict, [answers] and the preflight that refuses a gate
the run could never evaluate."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from snapaudit.cli.init import template_text
from snapaudit.errors import ProtocolError, TransportInvalid
from snapaudit.run.answers import max_answer_bytes, validate_answer
from snapaudit.run.gate_profile import check_evaluable, effective_gate
from snapaudit.run.record.protocol import parse_protocol
from snapaudit.stats.gate import GateConfig, evaluate


def _proto(**sections: Any) -> Any:
    data: dict[str, Any] = {
        "name": "g", "states": {"order": ["a", "b"], "old": "a", "new": "b"},
        "cohort": {"source": "jsonl", "path": "q.jsonl", "size": 4},
        "gold": {"path": "g.jsonl"},
        "systems": {s: {"url": f"http://127.0.0.1:9/{s}"} for s in ("a", "b")},
        **sections}
    return parse_protocol(data)


STATS = {"exact": {"d_hat": 0.4, "lcb95": -0.2}, "semantic": {"d_hat": 6.0, "lcb95": 1.5}}


def test_profiles_have_the_documented_rules() -> None:
    def rules(cfg: GateConfig) -> list[str]:
        return [r.describe() for r in cfg.active_rules()]

    assert rules(GateConfig()) == ["exact d_hat >= 3", "exact lcb95 > 0", "semantic lcb95 > 0"]
    assert rules(GateConfig(profile="long-form", min_d_pp=5)) == [
        "semantic d_hat >= 5", "semantic lcb95 > 0"]
    assert rules(GateConfig(profile="exact-only")) == ["exact d_hat >= 3", "exact lcb95 > 0"]
    # long answers: exact D ~ 0 says nothing; the long-form gate fires on the semantic kernel
    assert evaluate(GateConfig(profile="long-form"), STATS).verdict == "incompatible"
    assert evaluate(GateConfig(profile="study"), STATS).verdict == "excess_churn_not_shown"
    assert evaluate(GateConfig(profile="long-form", min_d_pp=6.5), STATS).passed is False


def test_a_rule_without_its_kernel_is_not_evaluable_never_not_shown() -> None:
    res = evaluate(GateConfig(profile="long-form"), {"exact": STATS["exact"]})
    assert (res.passed, res.verdict) == (False, "not_evaluable")
    out = res.to_json()
    assert out["verdict"] == "not_evaluable" and out["profile"] == "long-form"
    assert "semantic d_hat >= 3: semantic kernel not computed" in str(out["reason"])
    assert evaluate(GateConfig(profile="exact-only"), STATS).to_json()["reason"] is None


def test_preflight_refuses_a_gate_the_run_cannot_produce() -> None:
    with pytest.raises(ProtocolError, match=r"needs the semantic kernel.*exact-only"):
        check_evaluable(_proto())  # study profile, no judge
    with pytest.raises(ProtocolError, match=r'needs the semantic kernel.*kind = "llm"'):
        check_evaluable(_proto(answers={"kind": "long"}))  # long-form by default
    with pytest.raises(ProtocolError,
                       match="rule judge decides short answers and single sentences only"):
        check_evaluable(_proto(answers={"kind": "long"}, judge={"kind": "rule"}))
    check_evaluable(_proto(gate={"profile": "exact-only"}))
    check_evaluable(_proto(judge={"kind": "rule"}))
    assert effective_gate(_proto(answers={"kind": "long"})).profile == "long-form"
    assert effective_gate(_proto()).profile == "study"


def test_init_http_template_gives_an_evaluable_gate() -> None:
    data = tomllib.loads(template_text("http"))
    proto = parse_protocol(data)
    check_evaluable(proto)
    assert effective_gate(proto).profile == "exact-only"
    assert proto.answers.kind == "short" and max_answer_bytes(proto) == 65_536


def test_answer_size_cap_by_system_kind_and_the_reason_names_the_size() -> None:
    assert max_answer_bytes(_proto(gate={"profile": "exact-only"})) == 65_536
    assert max_answer_bytes(_proto(answers={"max_bytes": 1000})) == 1000
    validate_answer("é" * 256, 512)  # 512 bytes: accepted
    with pytest.raises(TransportInvalid) as info:
        validate_answer("é" * 257, 512)
    assert info.value.reason == "oversized_answer"
    assert "514 bytes > answers.max_bytes = 512" in str(info.value)
    with pytest.raises(TransportInvalid, match="empty_answer"):
        validate_answer("  \n", 512)


def test_states_are_reported_in_protocol_order() -> None:
    from snapaudit.stats.analysis import AnalysisConfig, analyze
    from snapaudit.tables import AnswerRow

    rows = [AnswerRow(f"q{i}", s, r, f"a{i}{s if i % 2 else ''}")
            for i in range(4) for s in ("old", "new", "mid") for r in (1, 2)]
    gold = {f"q{i}": (f"a{i}",) for i in range(4)}
    two = analyze([r for r in rows if r.state != "mid"], gold=gold,
                  config=AnalysisConfig(old="old", new="new", draws=100))
    assert two.comparison.states == ("old", "new")  # not alphabetical (new, old)
    assert list(two.to_json()["utility"])[:2] == ["old", "new"]  # type: ignore[call-overload]
    three = analyze(rows, config=AnalysisConfig(old="old", new="new", draws=100,
                                                states=("old", "mid", "new")))
    assert three.comparison.states == ("old", "mid", "new")


def test_the_gate_table_is_validated_and_built_into_the_analysis_gate() -> None:
    rule = {"kernel": "exact", "statistic": "lcb95", "op": ">", "threshold": 0}
    p = _proto(gate={"rules": [rule], "min_d_pp": 4})
    gate = effective_gate(p)
    assert isinstance(gate, GateConfig) and gate.min_d_pp == 4.0
    assert [r.describe() for r in gate.active_rules()] == ["exact lcb95 > 0"]
    assert p.model_dump(mode="json")["gate"] == {"profile": None, "min_d_pp": 4.0,
                                                 "rules": [{**rule, "threshold": 0.0}]}
    with pytest.raises(ProtocolError, match=r"'gate\.min_d_pp': must be >= 0\.0, got -1"):
        _proto(gate={"min_d_pp": -1})
    with pytest.raises(ProtocolError, match=r"'gate\.rules\.0\.op': must be one of '>=' or '>'"):
        _proto(gate={"rules": [{**rule, "op": "<"}]})
    with pytest.raises(ProtocolError, match=r"unknown key 'gate\.extra'"):
        _proto(gate={"extra": 1})


def test_preflight_refuses_a_trajectory_gate_rule_no_system_can_feed() -> None:
    rules = {"rules": [{"kernel": "queries", "statistic": "lcb95", "op": ">", "threshold": 0}]}
    with pytest.raises(ProtocolError, match=r"trajectory kernel\(s\) queries, but "
                                            r"\[systems.a\] sets no steps_path"):
        check_evaluable(_proto(judge={"kind": "none"}, gate=rules))
    mapped = {s: {"url": f"http://127.0.0.1:9/{s}", "steps_path": "trace"} for s in ("a", "b")}
    proto = _proto(judge={"kind": "none"}, gate=rules, systems=mapped)
    check_evaluable(proto)  # a service that maps its steps can feed the rule
    assert effective_gate(proto).rules[0].kernel == "queries"  # type: ignore[index]
    with pytest.raises(ProtocolError, match="sequential design"):
        check_evaluable(_proto(judge={"kind": "none"}, gate=rules, systems=mapped,
                               design={"looks": 2}))
