"""Judge kinds registered once: each entry carries what its kind can do."""

from __future__ import annotations

import pytest

from snapaudit.errors import ConfigError
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.registry import build_judge, judge_kind, judge_model, kinds_that
from snapaudit.testbed.generate.config import generator_config


def test_capabilities_live_on_the_entries() -> None:
    assert kinds_that("labels") == ("labels", "llm", "rule")  # "none": the exact kernel only
    assert kinds_that("packets") == ("llm", "rule")
    assert kinds_that("from_file") == ("labels",)
    assert kinds_that("generator") == kinds_that("batch") == kinds_that("packet_budget") \
        == ("llm",)
    assert kinds_that("short_only") == ("rule",)
    assert judge_kind("llm").description == "a blind LLM judge"
    with pytest.raises(ConfigError, match="unknown judge kind 'human'"):
        judge_kind("human")


def test_a_kind_without_packets_builds_no_judge() -> None:
    with pytest.raises(ConfigError, match=r"judge.kind = 'labels' has no judge to build "
                                          r"\(use 'llm' or 'rule'\)"):
        build_judge(JudgeConfig(kind="labels", labels_path="labels.jsonl"))


def test_the_billed_model_is_the_generators_of_a_kind_that_calls_one() -> None:
    gen = generator_config(backend="openai", model="m", base_url="http://127.0.0.1:9/v1")
    assert judge_model(JudgeConfig(kind="llm", generator=gen)) == "m"
    assert judge_model(JudgeConfig(kind="rule")) is None
    assert build_judge(JudgeConfig(kind="llm", name="j", generator=gen)).model == "m"
    assert build_judge(JudgeConfig(kind="rule")).model is None
