"""An engine run over the simulated demo world, answered by a loopback HTTP service.

The artifact tests and ``bench/bench_e2e.py`` both need a finished run without a model: the
demo world's simulated answers (``snapaudit.demo.simulate``) are served per (question, state,
repeat), so the real engine, judge, locks and analysis run over them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from snapaudit.demo.files import write_world
from snapaudit.demo.simulate import simulate_answers
from snapaudit.demo.world import World, build_world
from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_audit
from snapaudit.run.record.protocol import load_protocol
from tests.fakes.loopback import LoopbackServer

STATES = ("n0", "n1", "n3", "n7")
Served = dict[tuple[str, str, int], tuple[str, list[str] | None]]


class WorldService(LoopbackServer):
    """Serves ``POST /<state>`` with the simulated answer of (question_id, state, repeat)."""

    def __init__(self, answers: Served):
        super().__init__()
        self.answers = answers

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{state}", self._handle)

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        answer, docs = self.answers[(body["qid"], request.match_info["state"],
                                     int(body["repeat"]))]
        return web.json_response({"answer": answer, "doc_ids": docs})


@dataclass(frozen=True)
class RunSettings:
    name: str = "simulated-world"
    draws: int = 200
    concurrency: int = 4
    run_extra: str = ""  # appended to the protocol after [run] (e.g. [run.pricing."m"])


def protocol_text(world_dir: Path, port: int, n: int, settings: RunSettings) -> str:
    systems = "".join(
        f'\n[systems.{s}]\nurl = "http://127.0.0.1:{port}/{s}"\n'
        'body_template = { question = "{question}", qid = "{question_id}", '
        'repeat = "{repeat}" }\n' for s in STATES)
    return f"""name = "{settings.name}"
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
draws = {settings.draws}
seed = 1
[run]
concurrency = {settings.concurrency}
max_attempts = 2
{settings.run_extra}{systems}"""


def served_answers(world: World) -> Served:
    return {(r.question_id, r.state, r.repeat):
            (r.answer, list(r.doc_ids) if r.doc_ids is not None else None)
            for r in simulate_answers(world, seed=2)}


def engine_run(root: Path, n: int = 10, settings: RunSettings | None = None) -> Path:
    """A finished engine run of ``n`` simulated questions under ``root``; its run dir.
    The world files (questions, gold, plants) are under ``root / "world"``."""
    settings = settings or RunSettings()
    world = build_world(n, seed=5)
    files = write_world(world, root / "world")
    with WorldService(served_answers(world)) as service:
        path = root / "protocol.toml"
        path.write_text(protocol_text(files.root, service.port, n, settings), encoding="utf-8")
        run_dir = root / "run"
        run_audit(load_protocol(path), run_dir, base_dir=root, progress=SilentProgress())
    return run_dir
