"""Warnings where the answers say the protocol is wrong, in ``results.json`` ``warnings``.

* ``long_answers``: ``answers.kind = "short"`` while the median answer of some state is over
  :data:`SHORT_MEDIAN_WORDS` words: the exact kernel then counts rewordings as churn (set
  ``kind = "long"``, a judge and the ``long-form`` gate profile; without a judge, the advice
  starts with the offline one below).
* ``sentence_answers``: no judge, and the median answer of some state is a sentence (over
  :data:`~snapaudit.stats.answer_form.SENTENCE_WORDS` words): the exact kernel and EM say
  next to nothing; the offline rule judge (no API key) reads one-sentence answers, so the
  advice is ``snapaudit rejudge`` of this run with ``--judge rule --gate long-form``.
* ``unstable_doc_ids``: both endpoint states return document ids, yet no question shares a
  single id between them: the ids are most likely not stable across the two indexes (a
  rebuilt index numbering its documents anew), so retrieval overlap says nothing.

Each warning is a :class:`~snapaudit.results.sections.ProtocolWarning` (``{"code",
"message"}``, strings only: not a claim the verifier recomputes); the key is written only
when there is a warning, so the results of a protocol the answers agree with are unchanged.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from statistics import median

from snapaudit.judge.registry import judge_kind
from snapaudit.results.sections import ProtocolWarning
from snapaudit.run.record.protocol import Protocol
from snapaudit.stats.answer_form import SENTENCE_WORDS
from snapaudit.tables import AnswerRow

SHORT_MEDIAN_WORDS = 8
_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}",
                   re.IGNORECASE)


def protocol_warnings(protocol: Protocol, rows: Sequence[AnswerRow]
                      ) -> tuple[ProtocolWarning, ...]:
    """The warnings of ``rows`` (the run's answers) under ``protocol`` (see module doc)."""
    out: list[ProtocolWarning] = []
    if protocol.answers.kind == "short":
        out += _length_warnings(protocol, rows)
    old, new = protocol.states.old, protocol.states.new
    ids: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows:
        if r.state in (old, new) and r.doc_ids:
            ids[(r.question_id, r.state)].update(r.doc_ids)
    both = [q for (q, s) in ids if s == old and (q, new) in ids]
    if both and not any(ids[(q, old)] & ids[(q, new)] for q in both):
        out.append(ProtocolWarning("unstable_doc_ids", (
            f"no question shares a document id between {old} and {new} ({len(both)} "
            "questions with ids in both): the ids are likely not stable across the two "
            "indexes, so the retrieval overlap is meaningless; return stable document ids "
            "(e.g. a content hash or the source id) rather than index positions")))
    out.extend(_random_ids(rows))
    return tuple(out)


OFFLINE = ("judge them offline (no API key) with the rule judge, which reads one-sentence "
           "answers for their facts: `snapaudit rejudge RUN_DIR --judge rule --gate long-form "
           "--out NEW_RUN_DIR` re-judges this run's locked answers without calling the system "
           '(new runs: [judge] kind = "rule" and [gate] profile = "long-form")')


def _length_warnings(protocol: Protocol, rows: Sequence[AnswerRow]
                     ) -> list[ProtocolWarning]:
    """``long_answers`` or ``sentence_answers`` (``answers.kind = "short"``), or nothing."""
    words: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        words[r.state].append(len(r.answer.split()))
    medians = {s: median(w) for s, w in sorted(words.items()) if w}
    judged = judge_kind(protocol.judge.kind).labels
    long_states = {s: m for s, m in medians.items() if m > SHORT_MEDIAN_WORDS}
    if long_states:
        shown = ", ".join(f"{s} {m:g}" for s, m in long_states.items())
        fix = ('set answers.kind = "long" with a judge and gate profile "long-form"' if judged
               else f'{OFFLINE}; paragraphs: set answers.kind = "long" with an LLM judge and '
                    'gate profile "long-form"')
        return [ProtocolWarning("long_answers", (
            f'answers.kind = "short" but the median answer is over {SHORT_MEDIAN_WORDS} '
            f"words (median words: {shown}): the exact kernel counts every rewording as "
            f"churn; {fix}"))]
    sentences = {s: m for s, m in medians.items() if m > SENTENCE_WORDS}
    if not sentences or judged:
        return []
    shown = ", ".join(f"{s} {m:g}" for s, m in sentences.items())
    return [ProtocolWarning("sentence_answers", (
        f"the answers are sentences (median words: {shown}) and no judge reads them: the "
        "exact kernel counts every rewording as a change and EM needs the whole answer to "
        'equal a gold answer (utility "contains" counts answers containing one); '
        f"{OFFLINE}"))]


def _random_ids(rows: Sequence[AnswerRow]) -> list[ProtocolWarning]:
    per_state: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        if r.doc_ids:
            per_state[r.state].update(r.doc_ids)
    random_states = sorted(s for s, ids in per_state.items()
                           if all(_UUID.fullmatch(d) for d in ids))
    if not random_states:
        return []
    example = min(per_state[random_states[0]])
    return [ProtocolWarning("random_doc_ids", (
        f"every document id of {', '.join(random_states)} looks like a random UUID (e.g. "
        f"{example}): an index rebuilt, or the pipeline restarted, numbers the same documents "
        "anew; give the documents stable ids (LlamaIndex TextNode(id_=...) or "
        "Document(doc_id=...), LangChain Document(id=...), or a metadata key with "
        "id_key='...')"))]
