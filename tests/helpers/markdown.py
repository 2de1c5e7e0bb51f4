"""Markdown read as markdown-it-py parses it: fenced shell commands, links and heading anchors
(for tests/docs)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

_MD = MarkdownIt("commonmark").enable("table")


def tokens(path: Path) -> list[Token]:
    return _MD.parse(path.read_text(encoding="utf-8"))


def shell_commands(path: Path) -> Iterator[list[str]]:
    """Every command of the ``bash`` blocks of ``path``, split as the shell splits words:
    continuation lines joined, comments dropped, ``a && b`` two commands."""
    for token in tokens(path):
        if token.type != "fence" or token.info.strip() != "bash":
            continue
        for line in token.content.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            command: list[str] = []
            for word in [*words, "&&"]:
                if word == "&&":
                    if command:
                        yield command
                    command = []
                else:
                    command.append(word)


def inline_commands(path: Path, program: str) -> Iterator[list[str]]:
    """Every inline code span of ``path`` that is a command line of ``program``, split."""
    for token in tokens(path):
        for child in token.children or []:
            if child.type == "code_inline" and child.content.startswith(program + " "):
                yield shlex.split(child.content)


def links(path: Path) -> Iterator[str]:
    """The target of every link of ``path``."""
    for token in tokens(path):
        for child in token.children or []:
            if child.type == "link_open":
                yield str(child.attrs["href"])


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``path``: lower case, punctuation (but ``-``
    and ``_``) dropped, spaces to ``-``, a repeated anchor numbered ``-1``, ``-2``, ..."""
    found: set[str] = set()
    stream = tokens(path)
    for opened, inline in pairwise(stream):
        if opened.type != "heading_open":
            continue
        slug = re.sub(r"[^\w\- ]", "", inline.content.lower()).replace(" ", "-")
        unique, n = slug, 0
        while unique in found:
            n += 1
            unique = f"{slug}-{n}"
        found.add(unique)
    return found
