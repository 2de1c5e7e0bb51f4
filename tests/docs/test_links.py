"""The docs stay navigable: every relative link of README.md, CONTRIBUTING.md, CHANGELOG.md,
docs/*.md and the examples' pages reaches a file of the repository (and, with ``#anchor``,
one of its headings), and docs/index.md, the map of docs/, names every page there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.markdown import anchors, links

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
         *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("**/*.md"))]


def _broken(page: Path, root: Path = ROOT) -> list[str]:
    broken: list[str] = []
    for href in links(page):
        if "://" in href or href.startswith("mailto:"):
            continue
        target, _, anchor = href.partition("#")
        file = (page.parent / target).resolve() if target else page
        if not file.exists() or root not in file.parents:
            broken.append(f"{href}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{href}: no heading with that anchor")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(page: Path) -> None:
    assert not _broken(page)


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title here\n\n[ok](#title-here) [bad](#nowhere) "
                                   "[gone](missing.md) [web](https://example.org/x)\n")
    assert anchors(tmp_path / "a.md") == {"title-here"}
    assert _broken(tmp_path / "a.md", tmp_path.resolve()) == [
        "#nowhere: no heading with that anchor", "missing.md: no such file"]


def test_anchors_as_github_makes_them(tmp_path: Path) -> None:
    (tmp_path / "h.md").write_text("# Input formats (UTF-8 JSONL, or Parquet)\n\n"
                                   "## `snapaudit plan`\n\n## `snapaudit plan`\n")
    assert anchors(tmp_path / "h.md") == {"input-formats-utf-8-jsonl-or-parquet",
                                          "snapaudit-plan", "snapaudit-plan-1"}


def test_the_index_names_every_page() -> None:
    named = {Path(h.partition("#")[0]).name for h in links(ROOT / "docs" / "index.md")}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert pages <= named, sorted(pages - named)
