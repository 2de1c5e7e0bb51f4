"""A real locked run of the engine against a loopback fake RAG service serving the
simulated demo world (no model): what export and verify are tested on."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from snapaudit.demo.files import write_world
from snapaudit.demo.simulate import simulate_answers
from snapaudit.demo.world import build_world
from snapaudit.engine import run_audit
from snapaudit.progress import SilentProgress
from snapaudit.protocol import load_protocol

STATES = ("n0", "n1", "n3", "n7")


class FakeService:
    """Serves ``POST /<state>`` with the simulated answer of (question_id, state, repeat)."""

    def __init__(self, answers: dict[tuple[str, str, int], tuple[str, list[str] | None]]):
        self.answers = answers
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        answer, docs = self.answers[(body["qid"], request.match_info["state"],
                                     int(body["repeat"]))]
        return web.json_response({"answer": answer, "doc_ids": docs})

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_post("/{state}", self._handle)
        self._runner = web.AppRunner(app)
        self.loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self.loop.run_forever()

    def __enter__(self) -> FakeService:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


def _protocol(world_dir: Path, port: int, n: int) -> str:
    systems = "".join(
        f'\n[systems.{s}]\nurl = "http://127.0.0.1:{port}/{s}"\n'
        'body_template = { question = "{question}", qid = "{question_id}", '
        'repeat = "{repeat}" }\n' for s in STATES)
    return f"""name = "artifact-test"
[states]
order = ["n0", "n1", "n3", "n7"]
old = "n1"
new = "n7"
[design]
repeats = 2
[cohort]
source = "jsonl"
path = "{world_dir.as_posix()}/questions.jsonl"
size = {n}
[gold]
path = "{world_dir.as_posix()}/gold.jsonl"
format = "jsonl"
[system]
kind = "http"
[judge]
kind = "rule"
name = "rule"
[bootstrap]
draws = 200
seed = 1
[run]
concurrency = 4
max_attempts = 2
{systems}"""


def engine_run(root: Path, n: int = 10) -> Path:
    world = build_world(n, seed=5)
    files = write_world(world, root / "world")
    served = {(r.question_id, r.state, r.repeat): (r.answer, list(r.doc_ids)
                                                   if r.doc_ids is not None else None)
              for r in simulate_answers(world, seed=2)}
    with FakeService(served) as service:
        path = root / "protocol.toml"
        path.write_text(_protocol(files.root, service.port, n), encoding="utf-8")
        run_dir = root / "run"
        run_audit(load_protocol(path), run_dir, base_dir=root, progress=SilentProgress())
    return run_dir


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield engine_run(tmp_path_factory.mktemp("engine"))


def results_of(run_dir: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((run_dir / "results.json").read_text())
    return data
