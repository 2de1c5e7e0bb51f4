"""Judge kinds are registered once (``snapaudit.judge.registry``): no other module compares a
kind to a kind name or lists kind names; each asks the kind's registry entry what it can do.

The walk reads every module of ``src/snapaudit`` with ``ast``: a comparison (``==``, ``!=``,
``in``, ``not in``) between something named ``kind`` (``x.kind``, ``x.get("kind")``, ``kind``)
and a judge kind name, or a tuple, list, set or dict literal naming two judge kinds, is a
finding. The registry itself and the config model's ``Literal`` (checked against the registry
below) are the two places that name them.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.registry import JUDGES

SRC = Path(__file__).resolve().parents[2] / "src" / "snapaudit"
NAMES = frozenset(JUDGES.kinds())
OWNERS = {"judge/registry.py", "judge/config.py"}


def _names(node: ast.AST) -> set[str]:
    """The judge kind names a constant or a literal collection names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES:
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {n for elt in node.elts for n in _names(elt)}
    return set()


def _is_kind(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    if isinstance(node, ast.Name):
        return node.id == "kind"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get" and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and node.args[0].value == "kind")


def findings(source: str) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = set().union(*(_names(o) for o in operands))
            if named and any(_is_kind(o) for o in operands):
                out.append((node.lineno, f"compares a kind to {sorted(named)}"))
        elif isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            elts = node.keys if isinstance(node, ast.Dict) else node.elts
            named = {n for e in elts if e is not None for n in _names(e)}
            if len(named) >= 2:
                out.append((node.lineno, f"lists the kinds {sorted(named)}"))
    return out


def test_no_module_compares_or_lists_judge_kind_names() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in OWNERS:
            continue
        found += [f"{rel}:{line}: {what}"
                  for line, what in findings(path.read_text(encoding="utf-8"))]
    assert not found, "judge kind names outside the registry:\n  " + "\n  ".join(found)


@pytest.mark.parametrize("planted", [
    'if protocol.judge.kind == "llm": pass',
    'ok = cfg.kind in ("llm", "rule")',
    'ok = judge.get("kind", "none") != "none"',
    'DESCRIBE = {"rule": "x", "llm": "y"}',
])
def test_the_scan_finds_a_planted_comparison(planted: str) -> None:
    assert findings(planted)


def test_the_config_literal_is_the_registry() -> None:
    literal = get_args(JudgeConfig.model_fields["kind"].annotation)
    assert set(literal) == NAMES and len(literal) == len(NAMES)


def _batch_lists(source: str, backends: frozenset[str]) -> list[int]:
    """Lines of tuple, list or set literals that name exactly the batch backends."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) > 1
            and {e.value for e in node.elts if isinstance(e, ast.Constant)} == backends]


def test_the_batch_backends_are_the_batch_registry() -> None:
    """Batch mode asks the batch registry which backends have a batch API; no module keeps
    a list of them beside it (before: BATCH_BACKENDS in run/execution/batch_calls.py)."""
    from snapaudit.testbed.generate.batch_registry import BATCH_PROVIDERS

    backends = frozenset(BATCH_PROVIDERS.kinds())
    assert _batch_lists('BATCH = ("openai", "anthropic")', backends) == [1]  # the walk
    found = [f"{p.relative_to(SRC).as_posix()}:{line}" for p in sorted(SRC.rglob("*.py"))
             for line in _batch_lists(p.read_text(encoding="utf-8"), backends)]
    assert not found, "lists of the batch backends beside the registry: " + ", ".join(found)
