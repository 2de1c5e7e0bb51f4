"""The package map as a test: imports point one way, down the pipeline, and never cycle.

Every ``import`` and ``from ... import`` in ``src/snapaudit`` counts, wherever it sits
(module level, inside a function, under ``TYPE_CHECKING``). The layers, top to bottom::

    cli -> demo -> review -> report -> artifact -> run -> judge -> testbed -> adapters
        -> systems -> results -> stats -> root

``snapaudit/__init__.py`` is the public facade: it re-exports lazily and is not a layer.

Inside ``run/`` the groups are layers too: ``record < execution < stages < analysis <
after``. A module of a group reaches no module of a higher group, directly or through the
glue modules directly in ``run/`` (the engine, the context, ...).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "snapaudit"
LAYERS = ["root", "stats", "results", "systems", "adapters", "testbed", "judge", "run", "artifact",
          "report", "review", "demo", "cli"]
RANK = {name: i for i, name in enumerate(LAYERS)}
ROOT_MODULES = {"_kinds", "_model", "atomic", "errors", "hashing", "names", "progress",
                "reasons", "registry", "tables"}
RUN_GROUPS = ["record", "execution", "stages", "analysis", "after"]  # inside run/, bottom to top


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "facade"
    head = parts[1]
    if head in ROOT_MODULES:
        return "root"
    if head not in RANK:
        raise AssertionError(f"{module}: top-level name {head!r} is in no layer; add it to "
                             "docs/architecture.md and this test")
    return head


def _resolve(target: str, modules: set[str]) -> str | None:
    """The module ``target`` names (``pkg.mod.attr`` -> ``pkg.mod``)."""
    while target:
        if target in modules:
            return target
        target = target.rpartition(".")[0]
    return None


def _edges() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    modules = set(files)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if not name.startswith("snapaudit"):
                    continue
                dep = _resolve(name, modules)
                if dep is not None and dep != mod and not mod.startswith(dep + "."):
                    edges[mod].add(dep)
    return edges


EDGES = _edges()


def test_every_module_is_in_a_layer() -> None:
    assert len(EDGES) > 80  # the walk found the package
    for mod in EDGES:
        _layer(mod)


def test_imports_point_down() -> None:
    upward = []
    for mod, deps in EDGES.items():
        src = _layer(mod)
        if src == "facade":
            continue
        for dep in deps:
            dst = _layer(dep)
            if dst == "facade" or RANK[dst] > RANK[src]:
                upward.append(f"{mod} ({src}) -> {dep} ({dst})")
    assert not upward, "imports that point up the pipeline:\n  " + "\n  ".join(sorted(upward))


def test_no_import_cycles() -> None:
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(EDGES[node]):
            if state.get(dep) == 1:
                cycles.append([*stack[stack.index(dep):], dep])
            elif dep not in state:
                visit(dep, stack)
        stack.pop()
        state[node] = 2

    for mod in sorted(EDGES):
        if mod not in state:
            visit(mod, [])
    assert not cycles, "import cycles:\n  " + "\n  ".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_file_over_350_lines(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= 350, f"{path.relative_to(SRC)} has {lines} lines (limit 350)"


def test_the_checks_can_fail() -> None:
    """The layer rule and the cycle search flag a planted upward edge and a planted cycle."""
    assert RANK[_layer("snapaudit.stats.churn")] < RANK[_layer("snapaudit.run.engine")]
    assert _layer("snapaudit.errors") == "root"
    with pytest.raises(AssertionError):
        _layer("snapaudit.nowhere.module")
    planted = {"snapaudit.stats.churn": {"snapaudit.run.engine"},
               "snapaudit.run.engine": {"snapaudit.stats.churn"}}
    saved = {k: EDGES.get(k, set()) for k in planted}
    try:
        EDGES.update(planted)
        with pytest.raises(AssertionError, match="point up"):
            test_imports_point_down()
        with pytest.raises(AssertionError, match="cycles"):
            test_no_import_cycles()
    finally:
        EDGES.update(saved)


def _run_group(module: str) -> str | None:
    """The group of a module of ``run/`` (None: outside run/ or glue directly in it)."""
    parts = module.split(".")
    if parts[:2] != ["snapaudit", "run"] or len(parts) < 4 or parts[2] not in RUN_GROUPS:
        return None
    return parts[2]


def _run_reach(module: str, edges: dict[str, set[str]]) -> set[str]:
    """The modules of ``run/`` that ``module`` imports, directly or through other modules of
    ``run/`` (glue included)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for dep in edges.get(todo.pop(), set()):
            if dep.startswith("snapaudit.run.") and dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def _run_upward(edges: dict[str, set[str]]) -> list[str]:
    out = []
    for mod in sorted(edges):
        group = _run_group(mod)
        if group is None:
            continue
        for dep in sorted(_run_reach(mod, edges)):
            higher = _run_group(dep)
            if higher is not None and RUN_GROUPS.index(higher) > RUN_GROUPS.index(group):
                out.append(f"{mod} ({group}) reaches {dep} ({higher})")
    return out


def test_run_groups_point_down() -> None:
    """record < execution < stages < analysis < after: no group reaches a higher one, even
    through the glue of run/ (execution never decodes a stage's keys; record never reads after/)."""
    upward = _run_upward(EDGES)
    assert not upward, "run/ imports that point up:\n  " + "\n  ".join(upward)


def test_the_run_group_check_can_fail() -> None:
    """A planted edge up the groups, direct or through glue, is found."""
    assert _run_group("snapaudit.run.record.readonly") == "record"
    assert _run_group("snapaudit.run.engine") is None
    direct = {"snapaudit.run.record.readonly": {"snapaudit.run.after.status"}}
    assert _run_upward(direct) == ["snapaudit.run.record.readonly (record) reaches "
                                   "snapaudit.run.after.status (after)"]
    glued = {"snapaudit.run.execution.failures": {"snapaudit.run.context"},
             "snapaudit.run.context": {"snapaudit.run.stages.keys"}}
    assert _run_upward(glued) == ["snapaudit.run.execution.failures (execution) reaches "
                                  "snapaudit.run.stages.keys (stages)"]


def test_run_keeps_only_entry_points_and_glue() -> None:
    """At most 12 modules sit directly in ``run/``; the rest live in its sub-packages."""
    run = SRC / "run"
    direct = sorted(p.name for p in run.glob("*.py") if p.name != "__init__.py")
    assert len(direct) <= 12, f"{len(direct)} modules directly in run/: {direct}"
    groups = {p.name for p in run.iterdir() if (p / "__init__.py").is_file()}
    assert {"record", "execution", "stages", "analysis", "after"} <= groups, sorted(groups)
