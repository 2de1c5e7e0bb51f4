"""The one rule for a name that may become part of a path: states, judges, stages' files.

A name is 1 to 128 characters from ``A-Z a-z 0-9 _ . -``, not starting with ``.`` or ``-``
(so never ``.``, ``..``, a hidden file or an option). The whole string must match: no
trailing newline, no NUL, no separator. Protocol load, judge specs and the verifier all
check names with :func:`check_name`.
"""

from __future__ import annotations

import re

NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
NAME_RULE = ("may only use letters, digits, '_', '.' and '-', may not start with '.' or '-', "
             "and has at most 128 characters")


def is_name(value: object) -> bool:
    return isinstance(value, str) and NAME_RE.fullmatch(value) is not None


def check_name(value: str, what: str) -> str:
    """``value`` when it is a valid name; ValueError naming ``what`` otherwise."""
    if not is_name(value):
        raise ValueError(f"{what} {value!r} {NAME_RULE}")
    return value
