"""A testbed world answered through the fake batch APIs, and the synchronous reference run."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.fakes.batch_server import FakeBatchServer
from tests.fakes.judge_server import _parse_user
from tests.fakes.llm_server import FakeLLMServer, LLMCall
from tests.helpers.ledger_view import query
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world

REPO = Path(__file__).resolve().parents[3]
CELLS = 6 * 3 * 2  # questions x states x repeats of tests.testbed.generate.helpers' world
BATCH = ["run.mode=batch", "run.batch_poll_s=0.02"]


def responder(call: LLMCall) -> str:
    """An answer that depends on the prompt only (so a retried cell gives the same answer);
    a judge packet gets "same" exactly for equal answers."""
    user = "".join(m["content"] for m in call.body["messages"] if m["role"] == "user")
    if "Pairs to decide:" in user:
        answers, pairs = _parse_user(user)
        return json.dumps({"pairs": [{"a": a, "b": b, "same": answers[a] == answers[b]}
                                     for a, b in pairs]})
    digest = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    return json.dumps({"answer": f"ans-{digest % 3}"})


def base_url(server: FakeBatchServer | FakeLLMServer, backend: str) -> str:
    return server.openai_base_url if backend == "openai" else server.anthropic_base_url


def protocol(tmp: Path, server: FakeBatchServer | FakeLLMServer, backend: str,
             judge: str | None = None) -> Path:
    """The testbed world's protocol; ``judge``: an LLM judge on this backend."""
    corpus = tmp / "corpus"
    if not corpus.exists():
        write_testbed_world(tmp)
    path = write_testbed_protocol(tmp, corpus, f'backend = "{backend}"\nmodel = "fake-model"\n'
                          f'base_url = "{base_url(server, backend)}"')
    if judge is not None:
        text = path.read_text("utf-8").replace(
            '[judge]\nkind = "none"\n[gate]\nprofile = "exact-only"\n',
            f'[judge]\nkind = "llm"\nname = "j"\n[judge.generator]\nbackend = "{judge}"\n'
            f'model = "judge-model"\nbase_url = "{base_url(server, judge)}"\n')
        assert 'kind = "llm"' in text
        path.write_text(text, "utf-8")
    return path


def claims(results: dict[str, Any]) -> dict[str, Any]:
    """results.json without its metered ``usage`` (retries make more attempts)."""
    assert "kernels" in results
    return {k: v for k, v in results.items() if k != "usage"}


def sync_results(tmp: Path, backend: str, judge: str | None = None) -> dict[str, Any]:
    """results.json of a synchronous run on the same fake answers."""
    with FakeLLMServer(responder=responder) as server:
        proto = protocol(tmp, server, backend, judge)
        return run_protocol_file(proto, tmp / "sync", [], SilentProgress()).results


def run_batch(tmp: Path, server: FakeBatchServer, backend: str, *extra: str,
              judge: str | None = None) -> dict[str, Any]:
    proto = protocol(tmp, server, backend, judge)
    return run_protocol_file(proto, tmp / "run", [*BATCH, *extra], SilentProgress()).results


def cli(tmp: Path, server: FakeBatchServer, backend: str) -> subprocess.Popen[bytes]:
    """``snapaudit run`` in batch mode in a subprocess (to be SIGKILLed)."""
    proto = protocol(tmp, server, backend)
    sets = [a for s in BATCH for a in ("--set", s)]
    return subprocess.Popen(
        [sys.executable, "-c", "from snapaudit.cli import main; main()", "run", str(proto),
         "--run-dir", str(tmp / "run"), "--progress", "silent", *sets],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")})


def batches(tmp: Path) -> list[tuple[Any, ...]]:
    """(state, provider batch id, n_requests) of every local batch, in order."""
    return query(tmp / "run" / "ledger.sqlite",
                 "SELECT state, provider_batch_id, n_requests FROM batches ORDER BY id")


def reasons(tmp: Path) -> dict[str, int]:
    rows = query(tmp / "run" / "ledger.sqlite", "SELECT reason, COUNT(*) FROM attempts WHERE "
                 "outcome='transport_invalid' GROUP BY reason")
    return {str(r): int(n) for r, n in rows}
