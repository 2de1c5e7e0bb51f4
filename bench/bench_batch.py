"""Local cost of batch mode (``[run] mode = "batch"``) against the synchronous runner, same run.

Both drive the same N answer cells through an OpenAI-compatible model served by loopback
fakes in this process (``tests/fakes``, no delay): ``sync`` is ``runner.run_cells`` at
concurrency 64 against the chat-completions fake; ``batch`` is ``run.batch.BatchDriver``
against the Batch API fake: every attempt committed with its batch before the upload, the
upload of the JSONL file, the create call, one poll, the output file, and every result
matched by custom id and written with the batch's end in one transaction. A real batch
waits minutes to hours at the provider; this measures only what snapaudit adds around it.

    python bench/bench_batch.py [--cells 20000] [--max-requests 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fakes.batch_server import FakeBatchServer  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer  # noqa: E402

from snapaudit.progress import SilentProgress  # noqa: E402
from snapaudit.run.execution.batch import BatchDriver  # noqa: E402
from snapaudit.run.execution.runner import BatchCall, CellResult, CellTask, RetryPolicy, run_cells  # noqa: E402
from snapaudit.run.record.ledger import Ledger  # noqa: E402
from snapaudit.systems.config import RunConfig  # noqa: E402
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult  # noqa: E402
from snapaudit.testbed.generate.config import generator_config  # noqa: E402
from snapaudit.testbed.generate.openai import OpenAIGenerator  # noqa: E402
from snapaudit.testbed.generate.openai_batch import OpenAIBatch  # noqa: E402
from snapaudit.testbed.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, parse_answer  # noqa: E402


def _request(i: int, seed: int) -> GenerationRequest:
    return GenerationRequest(SYSTEM_PROMPT, f"Question: what is item {i}?", seed,
                             ANSWER_SCHEMA, 64)


def _finish(result: GenerationResult, attempt: int, seed: int) -> CellResult:
    return CellResult({"answer": parse_answer(result.text)}, dict(result.usage))


def _tasks(n: int, gen: OpenAIGenerator | None, batch: OpenAIBatch | None) -> list[CellTask]:
    out = []
    for i in range(n):
        def call(attempt: int, seed: int, i: int = i) -> object:
            async def go() -> CellResult:
                assert gen is not None
                return _finish(await gen.generate(_request(i, seed)), attempt, seed)
            return go()
        calls = None if batch is None else BatchCall(
            batch, lambda a, s, i=i: _request(i, s), _finish)
        out.append(CellTask(f"q{i:06d}|s|1", {"i": i}, call, calls))  # type: ignore[arg-type]
    return out


async def _sync(n: int, db: Path) -> float:
    with FakeLLMServer() as server, Ledger(db) as ledger:
        gen = OpenAIGenerator(generator_config(backend="openai", model="m",
                                              base_url=server.openai_base_url))
        start = time.perf_counter()
        await run_cells(ledger, "answer", _tasks(n, gen, None), RetryPolicy(concurrency=64),
                        SilentProgress())
        took = time.perf_counter() - start
        await gen.aclose()
        return took


async def _batch(n: int, db: Path, max_requests: int) -> tuple[float, int]:
    with FakeBatchServer() as server, Ledger(db) as ledger:
        ledger.set_meta("protocol_sha256", "bench")
        cfg = generator_config(backend="openai", model="m", base_url=server.openai_base_url)
        provider = OpenAIBatch(cfg, max_requests)
        run = RunConfig(mode="batch", batch_poll_s=0.01)
        start = time.perf_counter()
        await BatchDriver(ledger, "answer", _tasks(n, None, provider), RetryPolicy(),
                          SilentProgress(), run).run()
        took = time.perf_counter() - start
        assert len(ledger.accepted_keys("answer")) == n
        return took, len(server.batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=20_000)
    parser.add_argument("--max-requests", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sync_s = asyncio.run(_sync(args.cells, Path(tmp) / "sync.sqlite"))
        batch_s, n_batches = asyncio.run(_batch(args.cells, Path(tmp) / "batch.sqlite",
                                                args.max_requests))
        sizes = {p: (Path(tmp) / f"{p}.sqlite").stat().st_size for p in ("sync", "batch")}
    n = args.cells
    print(f"cells {n}: sync (concurrency 64) {sync_s:.2f} s = {1e3 * sync_s / n:.3f} ms/cell; "
          f"batch ({n_batches} batch(es)) {batch_s:.2f} s = {1e3 * batch_s / n:.3f} ms/cell")
    print(f"batch / sync wall time: {batch_s / sync_s:.2f}")
    print(f"ledger bytes per cell: sync {sizes['sync'] / n:.0f}, batch {sizes['batch'] / n:.0f}")


if __name__ == "__main__":
    main()
