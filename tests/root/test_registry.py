"""The one registry pattern: kinds imported lazily, unknown kinds and missing packages named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError
from snapaudit.judge.registry import JUDGES
from snapaudit.registry import Entry, Registry
from snapaudit.run.systems import SYSTEMS
from snapaudit.testbed.generate.batch_registry import BATCH_PROVIDERS
from snapaudit.testbed.generate.registry import GENERATORS
from snapaudit.testbed.retrieval.registry import RETRIEVERS

SRC = Path(__file__).resolve().parents[2] / "src"

LAZY = """
import sys
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.registry import GENERATORS
config = generator_config(backend="local", n_threads=2)
assert GENERATORS.entry(config.backend).extra == "local"
assert "snapaudit.testbed.generate.local" not in sys.modules
assert "llama_cpp" not in sys.modules
GENERATORS.factory(config.backend)
assert "snapaudit.testbed.generate.local" in sys.modules
print("lazy ok")
"""


def test_a_local_generator_config_imports_no_backend_until_built() -> None:
    out = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True,
                         env={"PYTHONPATH": str(SRC)}, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "lazy ok"


def test_an_unknown_kind_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown generator backend 'gemini' "
                                          r"\(known: 'openai', 'anthropic', 'local'\)"):
        GENERATORS.build("gemini")
    with pytest.raises(ConfigError, match=r"unknown retriever kind 'x' \(known: 'bm25', "
                                          r"'dense', 'http'\)"):
        RETRIEVERS.factory("x")


def test_a_missing_optional_package_names_the_extra() -> None:
    things: Registry[object] = Registry("thing", {
        "sdk": Entry("snapaudit_test_no_such_sdk:Client", extra="local"),
        "bare": "snapaudit_test_no_such_package:Client"})
    with pytest.raises(ConfigError, match=r"thing 'sdk' needs the package "
                                          r"'snapaudit_test_no_such_sdk'.*snapaudit\[local\]"):
        things.build("sdk")
    with pytest.raises(ConfigError, match="install the package 'snapaudit_test_no_such_package'"):
        things.build("bare")


def test_every_family_resolves_each_of_its_kinds() -> None:
    for registry in (GENERATORS, BATCH_PROVIDERS, JUDGES, RETRIEVERS, SYSTEMS):
        for kind in registry:
            if registry.entry(kind).target is None:  # e.g. judge kind "none": nothing built
                with pytest.raises(ConfigError, match="builds nothing"):
                    registry.factory(kind)
                continue
            assert callable(registry.factory(kind)), (registry.what, kind)
    assert {k for k in JUDGES if JUDGES.entry(k).target is None} == {"none", "labels"}
    assert set(SYSTEMS) == {"http", "python", "testbed"}
    assert "local" not in BATCH_PROVIDERS
