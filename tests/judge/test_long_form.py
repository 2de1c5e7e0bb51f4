"""Done-when of long-form audits: a loopback paragraph-answering service, a loopback LLM
judge, the long-form gate, packet splitting under a token budget."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.longform_service import FactJudge, LongFormService
from tests.helpers.cli import exit_code
from tests.helpers.ledger_view import query
from tests.helpers.protocol import http_systems, save_protocol, write_world

QUESTIONS = 20
PLANTED = frozenset(f"q{i:03d}" for i in (1, 4, 7, 12, 18))


def _protocol(tmp: Path, svc: LongFormService, judge_url: str,
              max_packet_tokens: int | None = 4000) -> Path:
    systems = http_systems(svc)
    budget = f"max_packet_tokens = {max_packet_tokens}" if max_packet_tokens else ""
    text = f"""
name = "long-form"
[states]
order = ["old", "new"]
old = "old"
new = "new"
[design]
repeats = 4
seed = 5
[cohort]
source = "jsonl"
path = "questions.jsonl"
size = {QUESTIONS}
[gold]
path = "gold.jsonl"
[system]
kind = "http"
{systems}
[answers]
kind = "long"
[judge]
kind = "llm"
name = "llm"
{budget}
[judge.generator]
backend = "openai"
model = "fake-judge"
base_url = "{judge_url}"
temperature = 0.0
[gate]
profile = "long-form"
min_d_pp = 3.0
[bootstrap]
draws = 2000
seed = 1
[run]
concurrency = 4
timeout_s = 10.0
max_attempts = 4
backoff_base_s = 0.0
backoff_max_s = 0.0
"""
    return save_protocol(tmp, text)


def _d_from_verdicts(judge: FactJudge, svc: LongFormService) -> float:
    """Semantic D (pp) recomputed by hand from the verdicts the judge returned."""
    same: dict[str, dict[tuple[tuple[str, int], tuple[str, int]], bool]] = {}
    for a, b, s in judge.verdicts:
        qa, sa, ra = svc.sent[a]
        qb, sb, rb = svc.sent[b]
        assert qa == qb
        key = tuple(sorted(((sa, ra), (sb, rb))))
        assert key not in same.setdefault(qa, {}), "a pair was judged twice"
        same[qa][key] = s  # type: ignore[index]
    total = 0.0
    for labels in same.values():
        assert len(labels) == 28  # 8 answers: every pair exactly once

        def mean(pairs: list[tuple[tuple[str, int], tuple[str, int]]],
                 labels: dict[tuple[tuple[str, int], tuple[str, int]], bool] = labels
                 ) -> float:
            return sum(labels[tuple(sorted(p))] for p in pairs) / len(pairs)  # type: ignore[index]

        old = [("old", r) for r in range(1, 5)]
        new = [("new", r) for r in range(1, 5)]
        within = (mean(list(combinations(old, 2))) + mean(list(combinations(new, 2)))) / 2
        cross = mean([(a, b) for a in old for b in new])
        total += within - cross
    return 100 * total / len(same)


@pytest.mark.parametrize(("planted", "code", "d_hat"), [(PLANTED, 4, 25.0),
                                                         (frozenset(), 0, 0.0)])
def test_long_form_gate_fires_on_planted_changes_only(
        tmp_path: Path, planted: frozenset[str], code: int, d_hat: float) -> None:
    write_world(tmp_path, n=QUESTIONS)
    judge = FactJudge()
    with LongFormService(planted=planted) as svc, FakeLLMServer(responder=judge) as llm:
        proto = _protocol(tmp_path, svc, llm.openai_base_url)
        got = exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"), "--progress",
                     "silent", "--fail-on", "incompatible"])
        sizes = [len(t.encode()) for t in svc.sent]
        judge_calls = len(llm.calls)
    assert got == code
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert min(sizes) >= 400 and max(sizes) <= 4000 and len(sizes) == QUESTIONS * 8
    sem = results["kernels"]["semantic"]
    assert sem["d_hat"] == pytest.approx(d_hat)
    assert sem["d_hat"] == pytest.approx(_d_from_verdicts(judge, svc))
    # paraphrases: no two answers are the same string, so the exact kernel sees no churn
    assert results["kernels"]["exact"]["within"] == pytest.approx(0.0)
    assert results["gate"]["profile"] == "long-form"
    assert results["gate"]["verdict"] == ("incompatible" if code == 4
                                          else "excess_churn_not_shown")
    # the judge's tokens as the fake reported them (12 + 5 a call); the HTTP system reports none
    assert results["usage"]["stages"]["judge:llm"] == {
        "attempts": judge_calls, "attempts_with_usage": judge_calls, "model": "fake-judge",
        "prompt_tokens": 12 * judge_calls, "completion_tokens": 5 * judge_calls,
        "batched_prompt_tokens": 0, "batched_completion_tokens": 0, "cost_usd": None}
    assert results["usage"]["stages"]["answer"]["prompt_tokens"] == 0


def test_packets_split_under_the_budget_and_a_malformed_verdict_retries_one_packet(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=QUESTIONS)
    judge = FactJudge()
    with LongFormService(planted=PLANTED) as svc, FakeLLMServer(responder=judge) as llm:
        llm.inject("not_json")
        proto = _protocol(tmp_path, svc, llm.openai_base_url, max_packet_tokens=2500)
        assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"),
                      "--progress", "silent"]) == 0
        judge_calls = len(llm.calls)
    db = tmp_path / "run" / "ledger.sqlite"
    cells = query(db, "SELECT cell_key, payload FROM cells WHERE stage='judge:llm'")
    assert len(cells) == len(judge.packets) == judge_calls - 1 > QUESTIONS
    assert max(judge.packets) < 28
    per_q: dict[str, int] = {}
    for _, payload in cells:
        body = json.loads(payload)
        per_q[body["question_id"]] = per_q.get(body["question_id"], 0) + len(body["labels"])
    assert per_q == {f"q{i:03d}": 28 for i in range(QUESTIONS)}
    failed = query(db, "SELECT cell_key FROM attempts WHERE stage='judge:llm' "
                       "AND outcome='transport_invalid'")
    assert len(failed) == 1  # only the packet whose verdict was malformed was asked again
    attempts = query(db, "SELECT cell_key, COUNT(*) FROM attempts WHERE stage='judge:llm' "
                         "GROUP BY cell_key HAVING COUNT(*) > 1")
    assert attempts == [(failed[0][0], 2)]
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["kernels"]["semantic"]["d_hat"] == pytest.approx(25.0)
    assert results["kernels"]["semantic"]["d_hat"] == pytest.approx(_d_from_verdicts(judge, svc))


def test_judge_replicas_share_the_packets_and_each_attempt_names_its_replica(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=QUESTIONS)
    judge = FactJudge()
    with LongFormService(planted=PLANTED) as svc, FakeLLMServer(responder=judge) as one, \
            FakeLLMServer(responder=judge) as two:
        proto = _protocol(tmp_path, svc, one.openai_base_url)
        proto.write_text(proto.read_text(encoding="utf-8").replace(
            "[run]\n", f'[run]\nreplicas = [["{one.openai_base_url}", '
            f'"{two.openai_base_url}"]]\n'), encoding="utf-8")
        assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"),
                      "--progress", "silent"]) == 0
        calls = (len(one.calls), len(two.calls))
    metas = [json.loads(m) for (m,) in query(
        tmp_path / "run" / "ledger.sqlite",
        "SELECT meta FROM attempts WHERE stage='judge:llm' AND outcome='accepted'")]
    served = [m["replica"] for m in metas]
    assert calls[0] > 0 and calls[1] > 0 and sum(calls) == len(metas)
    assert (served.count(one.openai_base_url.rstrip("/")),
            served.count(two.openai_base_url.rstrip("/"))) == calls
    assert all(m["model"] for m in metas)
