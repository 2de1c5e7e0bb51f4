"""ruff and mypy are part of the test suite: a lint or type error fails CI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} not installed (pip install -e '.[dev]')")
    return found


def test_ruff_clean() -> None:
    proc = subprocess.run(
        [_tool("ruff"), "check", "src", "tests", "bench", "scripts"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_clean() -> None:
    proc = subprocess.run(
        [_tool("mypy")], cwd=REPO, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
