"""``snapaudit demo``: build the world, index it, run the locked audit, write the report."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snapaudit import atomic
from snapaudit.demo.files import WorldFiles, jsonl_bytes, write_world
from snapaudit.demo.world import N_SHARDS, build_world
from snapaudit.errors import ConfigError
from snapaudit.progress import Progress
from snapaudit.results import RunResults


@dataclass(frozen=True)
class DemoConfig:
    out: Path
    questions: int = 16
    seed: int = 7
    repeats: int = 2
    overrides: Sequence[str] = field(default_factory=tuple)
    # answer through llama-cpp-python's OpenAI-compatible server on this loopback port
    # (the openai backend, response_format "auto") instead of the embedded model
    llama_server_port: int | None = None
    # random corpus paths ([testbed.paths] count): 1 is the default demo; K > 1 runs the same
    # world on K shard orders in its own run directory (run-paths-K)
    paths: int = 1
    # sequential looks ([design] looks = K): the run stops at the first decisive look, in
    # its own run directory (run-looks-K)
    looks: int = 1
    # the two-step search agent of snapaudit.demo.agent (states n1 and n7), in run-agent
    agent: bool = False


@dataclass(frozen=True)
class DemoOutcome:
    run_dir: Path
    record: RunResults  # results.json, typed
    report_html: Path
    report_md: Path
    plant_score: dict[str, Any] | None

    @property
    def results(self) -> dict[str, Any]:
        """The results document (``record.to_json()``)."""
        return self.record.to_json()


def prepare_world(config: DemoConfig, progress: Progress) -> WorldFiles:
    """Write the world under ``out/world`` and build its 7-shard corpus (once)."""
    from snapaudit.testbed.corpus.build import CorpusInput, build_corpus

    world_dir = config.out / "world"
    world = build_world(config.questions, config.seed)
    if (world_dir / "corpus").exists() and (world_dir / "questions.jsonl").exists():
        if (world_dir / "corpus.jsonl").read_bytes() != jsonl_bytes(world.docs):
            raise ConfigError(f"{config.out} holds a demo of another --questions/--seed; "
                              "choose a new --out")
        return write_world(world, world_dir, repeats=config.repeats)
    files = write_world(world, world_dir, repeats=config.repeats)
    progress.info(f"demo world: {len(world.docs)} documents in {N_SHARDS} shards, "
                  f"{len(world.questions)} questions")
    shutil.rmtree(world_dir / "corpus", ignore_errors=True)
    build_corpus([CorpusInput(files.corpus)], world_dir / "corpus", shards=N_SHARDS,
                 seed=config.seed, progress=progress)
    return files


def run_settings(config: DemoConfig) -> tuple[Path, list[str]]:
    """The run directory and ``--set`` overrides of a demo (``paths``: its own directory)."""
    looks = [f"design.looks={config.looks}"] if config.looks > 1 else []
    name = "run" + (f"-looks-{config.looks}" if config.looks > 1 else "")
    if config.paths == 1:
        return config.out / name, [*looks, *config.overrides]
    return (config.out / f"{name.replace('run', 'run-paths', 1)}-{config.paths}"
            if config.looks == 1 else config.out / f"{name}-paths-{config.paths}",
            [f"testbed.paths.count={config.paths}", f"testbed.paths.seed={config.seed}",
             *looks, *config.overrides])


def run_demo(config: DemoConfig, progress: Progress) -> DemoOutcome:
    """Run the whole demo; re-running the same command resumes the locked run."""
    from snapaudit.report.build import plant_score, write_report
    from snapaudit.report.load import load_run
    from snapaudit.run.engine import run_protocol_file

    if config.questions < 5:
        raise ConfigError("--questions must be at least 5 (one per kind of plant)")
    config.out.mkdir(parents=True, exist_ok=True)
    files = prepare_world(config, progress)
    run_dir, overrides = run_settings(config)
    if config.agent:
        if config.llama_server_port is not None or config.paths > 1:
            raise ConfigError("--agent runs the embedded model on one corpus path; leave out "
                              "--llama-server and --paths")
        run_dir = run_dir.with_name(run_dir.name.replace("run", "run-agent", 1))
        outcome = run_protocol_file(files.agent_protocol, run_dir, overrides, progress)
    elif config.llama_server_port is not None:
        from snapaudit.testbed.generate.llama_server import LlamaServer

        run_dir = run_dir.with_name(run_dir.name.replace("run", "run-llama-server", 1))
        # the openai backend has no n_threads (a field of the local one)
        served_protocol = files.protocol.with_name("protocol.llama-server.toml")
        atomic.write_text(served_protocol, re.sub(r"(?m)^n_threads = .*\n", "",
                                                  files.protocol.read_text(encoding="utf-8")))
        with LlamaServer(port=config.llama_server_port) as server:
            progress.info(f"llama_cpp.server on {server.base_url}")
            served = ["generator.backend=openai", "generator.model=smollm2",
                      f'generator.base_url="{server.base_url}"',
                      'generator.response_format="auto"', "generator.temperature=0.0",
                      "generator.timeout_s=300.0"]
            outcome = run_protocol_file(served_protocol, run_dir,
                                        [*served, *overrides], progress)
    else:
        outcome = run_protocol_file(files.protocol, run_dir, overrides, progress)
    shutil.copyfile(files.plants, run_dir / "plants.json")
    paths = write_report(run_dir)
    return DemoOutcome(run_dir, outcome.record, paths.html, paths.markdown,
                       plant_score(load_run(run_dir)))
