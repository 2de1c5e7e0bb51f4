"""Build small audit worlds for engine tests: questions, gold, protocol TOML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.rag_service import FakeRagService


def write_world(tmp: Path, n: int = 12) -> None:
    """``questions.jsonl`` (generic JSONL, ids q000..), ``gold.jsonl`` (interchange)."""
    with open(tmp / "questions.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i:03d}", "question": f"what is item {i}?"}) + "\n")
    with open(tmp / "gold.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"question_id": f"q{i:03d}", "answers": [f"answer q{i:03d}"]})
                    + "\n")


def protocol_text(svc: FakeRagService, *, size: int = 8, run: dict[str, Any] | None = None,
                  judge: str = 'kind = "none"', extra: str = "") -> str:
    knobs = {"concurrency": 4, "timeout_s": 0.5, "max_attempts": 6, "backoff_base_s": 0.0,
             "backoff_max_s": 0.0, **(run or {})}
    systems = "\n".join(
        f'[systems.{s}]\nurl = "{svc.url(s)}"\n'
        'body_template = { question = "{question}", question_id = "{question_id}", '
        'repeat = "{repeat}" }\n'
        for s in svc.states)
    knob_lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in knobs.items())
    if '"none"' in judge and "[gate]" not in extra:  # no judge: only the exact kernel
        extra = '[gate]\nprofile = "exact-only"\n' + extra
    return f"""
name = "test-audit"
[states]
order = {json.dumps(list(svc.states))}
old = "{svc.states[0]}"
new = "{svc.states[-1]}"
[design]
repeats = 2
seed = 7
[cohort]
source = "jsonl"
path = "questions.jsonl"
size = {size}
seed = 3
[gold]
path = "gold.jsonl"
format = "jsonl"
benchmark = "nq"
[system]
kind = "http"
{systems}
[judge]
{judge}
[bootstrap]
draws = 1000
seed = 11
{extra}
[run]
{knob_lines}
"""


def write_protocol(tmp: Path, svc: FakeRagService, **kw: Any) -> Path:
    path = tmp / "protocol.toml"
    path.write_text(protocol_text(svc, **kw), encoding="utf-8")
    return path
