"""Which systems ``snapaudit attribute`` can give counterfactual evidence to, and that evidence
for the systems that retrieve on their own.

The built-in testbed is given its evidence already (rendered from the locked blocks). A Python
system opts in with a target that takes an ``evidence`` keyword, an HTTP system with a
``body_template`` field whose value is ``"{evidence}"``; both then receive each
counterfactual list as (id, url, text) records, in rank order, from a documents file
(``--documents``: JSONL ``{"id", "url"?, "text"}``), and O and N are the doc ids their locked
answers reported. Any other system: a ConfigError naming what is needed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from snapaudit.errors import ConfigError
from snapaudit.hashing import canonical_json
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.stages.attribution import QuestionPlan
from snapaudit.stats.attribution import counterfactual_lists
from snapaudit.systems.base import Document, Evidence
from snapaudit.systems.config import HttpSystemConfig, PythonSystemConfig
from snapaudit.systems.http import takes_evidence
from snapaudit.systems.python import accepts_evidence, load_target, search_path

NEEDS = {
    "python": "attribution of a python system needs a target that accepts an `evidence` "
              "keyword (it then receives the counterfactual documents, a tuple of (id, url, "
              "text) records, instead of retrieving)",
    "http": 'attribution of an http system needs a body_template field whose value is '
            '"{evidence}" (the counterfactual documents are sent there as a list of '
            '{"id", "url", "text"})',
}
NEEDS_SYSTEM = ("attribution needs the built-in testbed, a python target that accepts an "
                '`evidence` keyword, or an http system with an "{evidence}" body_template field')
NEEDS_DOCUMENTS = ("attribution of a {kind} system needs --documents FILE: JSONL records "
                   '{{"id", "url", "text"}} of the documents its answers name (doc_ids)')


def check_opt_in(protocol: Protocol, state: str, base: Path | None) -> None:
    """ConfigError unless ``state``'s system can be given counterfactual evidence (a Python
    target is imported to read its signature)."""
    kind = protocol.system.kind
    if kind == "testbed":
        return
    config = protocol.systems.get(state)
    if isinstance(config, HttpSystemConfig) and kind == "http":
        if not takes_evidence(config.body_template):
            raise ConfigError(NEEDS["http"])
    elif isinstance(config, PythonSystemConfig) and kind == "python":
        if not accepts_evidence(load_target(config.target, search_path(config, base))):
            raise ConfigError(NEEDS["python"])
    else:
        raise ConfigError(NEEDS_SYSTEM)


def read_documents(path: Path) -> dict[str, Document]:
    """Doc id -> (id, url, text) of a JSONL documents file."""
    out: dict[str, Document] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"--documents {path}: {exc.strerror}") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            doc = (str(rec["id"]), str(rec.get("url") or ""), str(rec["text"]))
        except (ValueError, KeyError, TypeError):
            raise ConfigError(f"--documents {path} line {n}: expected a JSON object with "
                              "'id' and 'text'") from None
        out[doc[0]] = doc
    return out


def record_plan(question_id: str, question: str, flip: bool, old: tuple[str, ...],
                new: tuple[str, ...], documents: Mapping[str, Document]) -> QuestionPlan:
    """The counterfactual evidence of one question as document records."""
    missing = sorted({d for d in (*old, *new) if d not in documents})
    if missing:
        raise ConfigError(f"question {question_id}: --documents has no document "
                          f"{', '.join(missing[:5])}")
    variants = {}
    for name, ids in counterfactual_lists(old, new).items():
        docs = tuple(documents[d] for d in ids)
        variants[name] = Evidence(ids, canonical_json([list(d) for d in docs]), docs)
    return QuestionPlan(question_id, question, flip, old, new, variants)
