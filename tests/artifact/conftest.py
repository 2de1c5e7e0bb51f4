"""A real locked run of the engine against a loopback fake RAG service serving the
simulated demo world (no model): what export and verify are tested on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.world_service import engine_run


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield engine_run(tmp_path_factory.mktemp("engine"))


def results_of(run_dir: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((run_dir / "results.json").read_text())
    return data
