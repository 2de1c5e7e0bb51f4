"""Preflight before any write; no system built once answers are locked (issue #12.4-5)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from snapaudit.errors import BackendError, ConfigError
from snapaudit.judge.spec import parse_judge_spec
from snapaudit.progress import SilentProgress
from snapaudit.run.after.judge_audit_run import judge_audit
from snapaudit.run.engine import run_protocol_file
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_protocol as write_http_protocol
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world
from tests.helpers.protocol import write_world as write_http_world

KEY_ENV = "SNAPAUDIT_TEST_PREFLIGHT_KEY"


def _testbed(tmp: Path, srv: FakeLLMServer) -> Path:
    corpus = write_testbed_world(tmp)
    generator = (f'backend = "openai"\nmodel = "fake-model"\nbase_url = "{srv.openai_base_url}"\n'
                 f'api_key_env = "{KEY_ENV}"\ntimeout_s = 1.0')
    proto = write_testbed_protocol(tmp, corpus, generator, states="n0 = 0, n1 = 1", size=3)
    proto.write_text(proto.read_text().replace(
        'old = "n1"\nnew = "n3"', 'old = "n0"\nnew = "n1"').replace(
        '[judge]\nkind = "none"', '[judge]\nkind = "rule"\nname = "rule"'))
    return proto


def test_missing_generator_key_is_found_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with FakeLLMServer() as srv:
        proto = _testbed(tmp_path, srv)
        with pytest.raises(BackendError, match=f"{KEY_ENV} \\(generator.api_key_env\\)"):
            run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        assert not srv.calls
    assert not (tmp_path / "run").exists()


def test_missing_gold_is_found_before_anything_is_written(tmp_path: Path) -> None:
    write_http_world(tmp_path)
    (tmp_path / "gold.jsonl").unlink()
    with FakeRagService() as svc:
        proto = write_http_protocol(tmp_path, svc)
        with pytest.raises(ConfigError, match=r"gold.path: .*gold.jsonl does not exist"):
            run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        assert sum(svc.hits.values()) == 0  # not a single answer was asked for
    assert not (tmp_path / "run").exists()


# the fake LLM server's own server-side keep-alive sockets are sometimes collected late
# (seen with plain asyncio.run too); they are not the run's
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_locked_run_needs_no_generator_key(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-preflight-test")
    with FakeLLMServer(api_key="sk-preflight-test") as srv:
        proto = _testbed(tmp_path, srv)
        first = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    monkeypatch.delenv(KEY_ENV)  # the service and its key are gone
    again = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    assert again.results == first.results
    outcome = judge_audit(tmp_path / "run", parse_judge_spec("second=rule"), 3,
                          SilentProgress())
    assert outcome.results_path is not None
    results = json.loads(outcome.results_path.read_text())
    assert "second" in json.dumps(results.get("judges", {}))
    gc.collect()  # the fake server's sockets, while their warnings are ignored
