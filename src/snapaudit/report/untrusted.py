"""Untrusted text in the report: the one place that makes it inert, per output format.

Answers, questions, document and question ids, judge names, plant kinds and everything else
that came from a service, a corpus or a file is shown through :func:`md` (report.md) or
:func:`html` (report.html); every renderer of the report, and any new view, calls these
two functions for every string it did not write itself.

- Control, format (bidi overrides and isolates, zero-width characters), private-use,
  unassigned and line/paragraph-separator characters are shown visibly as ``\\u202e`` /
  ``\\x1b`` (tab, newline and carriage return excepted), so none can reorder or hide text.
- :func:`html` escapes ``& < > " '`` and isolates the string in ``<bdi>``, so even
  right-to-left letters cannot move the text around it (a mark after an answer stays after
  it).
- :func:`md` collapses whitespace to one line; a string with any character that CommonMark
  or GFM could read as markup (links, images, raw HTML, entities, emphasis, code, table
  pipes, a block marker at its start) is put in a code span, where nothing is
  interpreted, so no service text becomes a link, an image or HTML.
"""

from __future__ import annotations

import re
import unicodedata
from html import escape

_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_KEEP = frozenset("\t\n\r")
_MARKUP = re.compile(r"[\[\]<>&`*_~\\|!#{}@]|://|(?i:www\.)|^(?:[-+=>]|\d+[.)])")
_TICKS = re.compile(r"`+")


def shown(text: object) -> str:
    """``text`` with every invisible or reordering character written as an escape."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(_show(c) for c in s)


def _show(char: str) -> str:
    if char in _KEEP or unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def html(text: object) -> str:
    """Element content for report.html: escaped, controls shown, isolated in ``<bdi>``."""
    return f"<bdi>{escape(shown(text), quote=True)}</bdi>"


def md(text: object, *, table: bool = False) -> str:
    """Inline Markdown for report.md that renders as exactly ``text`` (on one line).

    ``table``: the string is a table cell, where ``|`` must be escaped even in a code span.
    """
    s = " ".join(shown(text).split())
    if not s or not _MARKUP.search(s):
        return s
    fence = "`" * (max((len(m) for m in _TICKS.findall(s)), default=0) + 1)
    if table:
        s = s.replace("|", "\\|")
    return f"{fence} {s} {fence}"
