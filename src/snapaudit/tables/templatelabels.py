"""Labels files in the layouts snapaudit's writers and benches emit, read with numpy.

``write_labels`` writes ``json.dumps(..., sort_keys=True)`` lines; the benches and most
hand-written files use the documented key order (question_id, a, b, same, judge); either with
the default separators or the compact ones. Each is one template per line (see
:mod:`snapaudit.tables.templaterows`), read here with no Python step per line.

It is a fast path in front of :func:`snapaudit.tables.columnar.fast_labels` and returns
exactly that reader's table, or None for the whole file: a line off the file's template
(another key order or spacing, an escape, a control byte, a leading zero, an extra or missing
key, a blank line), invalid UTF-8, an empty judge, or a line longer than ``MAX_LINE`` bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from snapaudit.tables.labeltable import LabelTable, ref_sides
from snapaudit.tables.templaterows import (
    BLOCK,
    CHUNK,
    DECLINED,
    Template,
    Token,
    compile_template,
    read_columns,
)


def _template(outer: tuple[str, ...], inner: tuple[str, ...], item: str, key: str) -> Template:
    tokens: list[Token] = ["{"]
    for i, name in enumerate(outer):
        tokens += [item] * bool(i) + [f'"{name}"{key}']
        if name in ("a", "b"):
            tokens.append("{")
            for k, part in enumerate(inner):
                tokens += [item] * bool(k) + [f'"{part}"{key}']
                tokens += ['"', ("s", f"{name}.state"), '"'] if part == "state" else [
                    ("i", f"{name}.repeat")]
            tokens.append("}")
        else:
            tokens += [("b", name)] if name == "same" else ['"', ("s", name), '"']
    tokens.append("}")
    return compile_template(tokens)


TEMPLATES = [_template(outer, inner, item, key)
             for outer, inner in ((("question_id", "a", "b", "same", "judge"), ("state", "repeat")),
                                  (("a", "b", "judge", "question_id", "same"), ("repeat", "state")))
             for item, key in ((", ", ": "), (",", ":"))]


def template_labels(path: str | Path, *, block: int = BLOCK, chunk: int = CHUNK
                    ) -> LabelTable | None:
    """What :func:`~snapaudit.tables.columnar.fast_labels` returns for a file that follows
    one template throughout, or None (see the module doc). The file is read ``block`` bytes
    at a time (cut at a newline), checked ``chunk`` lines at a time."""
    try:
        _, codes, cols = read_columns(Path(path), TEMPLATES, block, chunk)
    except DECLINED:
        return None
    judges = codes["judge"].values
    if "" in judges:
        return None  # read as "default" by the other readers: not coded here
    states = list(codes["a.state"].values)
    known = {s: i for i, s in enumerate(states)}
    for s in codes["b.state"].values:
        known.setdefault(s, len(states))
        if len(states) < len(known):
            states.append(s)
    remap = np.array([known[s] for s in codes["b.state"].values], dtype=np.int32)
    sides = [(cols.pop("a.state"), cols.pop("a.repeat")),
             (remap[cols.pop("b.state")], cols.pop("b.repeat"))]
    refs, (ia, ib) = ref_sides(states, sides)
    return LabelTable(codes["question_id"].values, refs, judges, cols["question_id"], ia, ib,
                      cols["same"], cols["judge"])
