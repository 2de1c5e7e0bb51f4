"""Counterfactual evidence attribution of changed answers: the lists and the verdict table.

For a question whose locked evidence went from O (old state) to N (new state), the
documents that *entered* are N \\ O (in N's rank order) and those that *left* O \\ N (in
O's rank order). The counterfactual lists (doc ids, rank order) are:

``suff<i>`` sufficiency of the i-th entering document e: O with e inserted at its rank in N
         and the lowest-ranked leaving document dropped (depth stays k);
``nec<i>`` necessity of e: N with e replaced by the highest-ranked leaving document;
``set-in``  O with every entering document swapped in at its rank (leaving ones drop out,
         lowest first); ``set-out``: N with every entering document swapped out (replaced by the
         leaving ones, highest first). The set lists exist only with two or more entering
         documents (with one, they repeat ``suff1`` and ``nec1``).

Each counterfactual answer is compared with the question's old and new answers: it
*moves forward* when it agrees with (a majority of) the new answers and not the old, and
*moves back* when it agrees with the old and not the new. A document is sufficient when a
strict majority of its ``suff`` repeats move forward, necessary when a strict majority of its
``nec`` repeats move back. Only a strict flip (every old answer the same, every new answer
the same, no old answer the same as a new one) has a change to explain: any other question
is ``not explained by evidence`` whatever its counterfactuals do (its answers already vary
between repeats of one state). Pure functions: the table is recomputed from accepted labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CAUSED = "caused"
SUFFICIENT_ONLY = "sufficient only"
NECESSARY_ONLY = "necessary only"
THE_SET = "no single document: the set"
NOT_EXPLAINED = "not explained by evidence"
VERDICTS = (CAUSED, SUFFICIENT_ONLY, NECESSARY_ONLY, THE_SET, NOT_EXPLAINED)

Ids = tuple[str, ...]


def entering(old: Sequence[str], new: Sequence[str]) -> Ids:
    """Documents of ``new`` not in ``old``, in ``new``'s rank order."""
    return tuple(d for d in new if d not in set(old))


def leaving(old: Sequence[str], new: Sequence[str]) -> Ids:
    """Documents of ``old`` not in ``new``, in ``old``'s rank order."""
    return tuple(d for d in old if d not in set(new))


def _insert_at_ranks(base: list[str], docs: Sequence[str], new: Sequence[str]) -> Ids:
    for doc in sorted(docs, key=list(new).index):  # rank 1 first: earlier slots hold
        base.insert(min(list(new).index(doc), len(base)), doc)
    return tuple(base)


def sufficiency_list(old: Sequence[str], new: Sequence[str], doc: str) -> Ids:
    """O with ``doc`` inserted at its rank in N; the lowest-ranked leaving document drops."""
    gone = leaving(old, new)
    base = [d for d in old if not gone or d != gone[-1]]
    return _insert_at_ranks(base, [doc], new)


def necessity_list(old: Sequence[str], new: Sequence[str], doc: str) -> Ids:
    """N with ``doc`` replaced by the highest-ranked leaving document (removed if none)."""
    gone = leaving(old, new)
    if not gone:
        return tuple(d for d in new if d != doc)
    return tuple(gone[0] if d == doc else d for d in new)


def set_in_list(old: Sequence[str], new: Sequence[str]) -> Ids:
    """O with every entering document at its rank in N; as many leaving ones drop (lowest
    ranked first)."""
    came, gone = entering(old, new), leaving(old, new)
    dropped = set(gone[len(gone) - min(len(came), len(gone)):])
    return _insert_at_ranks([d for d in old if d not in dropped], came, new)


def set_out_list(old: Sequence[str], new: Sequence[str]) -> Ids:
    """N with every entering document replaced by the leaving ones, highest ranked first
    (an entering document with no leaving one left is removed)."""
    came, gone = entering(old, new), leaving(old, new)
    fill = dict(zip(came, gone, strict=False))
    return tuple(fill.get(d, d) for d in new if d not in came or d in fill)


def counterfactual_lists(old: Sequence[str], new: Sequence[str]) -> dict[str, Ids]:
    """Variant name -> counterfactual list, in the order the cells run (none when nothing
    entered)."""
    came = entering(old, new)
    out: dict[str, Ids] = {}
    for i, doc in enumerate(came, start=1):
        out[f"suff{i}"] = sufficiency_list(old, new, doc)
        out[f"nec{i}"] = necessity_list(old, new, doc)
    if len(came) > 1:
        out["set-in"] = set_in_list(old, new)
        out["set-out"] = set_out_list(old, new)
    return out


def default_call_budget(entering_counts: Sequence[int], repeats: int, judged: bool,
                        cap: int) -> int:
    """The default ``--max-calls``: 4 x repeats x entering documents per question, and with a
    judge 4 more calls per entering document (one judge call per variant), at most ``cap``.

    A question with e entering documents has 2e variants (2e + 2 when e > 1, never more than
    4e), each answered ``repeats`` times and judged once, so the default never refuses a
    selection that is under the cap."""
    per_doc = 4 * (repeats + (1 if judged else 0))
    return min(cap, sum(per_doc * e for e in entering_counts))


# ---------------------------------------------------------------- verdicts


@dataclass(frozen=True, slots=True)
class Agreement:
    """One counterfactual answer: whether it agrees with the old and with the new answers."""

    old: bool
    new: bool

    @property
    def forward(self) -> bool:
        return self.new and not self.old

    @property
    def back(self) -> bool:
        return self.old and not self.new


def majority_agreement(same_as_old: Sequence[bool], same_as_new: Sequence[bool]) -> Agreement:
    """Agreement with a state: with a strict majority of its answers."""
    return Agreement(2 * sum(same_as_old) > len(same_as_old),
                     2 * sum(same_as_new) > len(same_as_new))


def _rate(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _holds(rate: float | None) -> bool:
    return rate is not None and rate > 0.5


@dataclass(frozen=True, slots=True)
class DocumentEffect:
    doc_id: str
    rank: int  # 1-based rank in N
    sufficiency: float | None  # share of the suff repeats that moved forward
    necessity: float | None  # share of the nec repeats that moved back

    @property
    def caused(self) -> bool:
        return _holds(self.sufficiency) and _holds(self.necessity)

    def to_json(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "rank": self.rank, "sufficiency": self.sufficiency,
                "necessity": self.necessity, "caused": self.caused}


@dataclass(frozen=True, slots=True)
class QuestionAttribution:
    question_id: str
    flip: bool
    entering: Ids
    leaving: Ids
    documents: tuple[DocumentEffect, ...]
    set_in: float | None
    set_out: float | None
    verdict: str
    agreement: float | None  # the repeat agreement the verdict rests on
    old: Ids = ()  # O and N, rank order
    new: Ids = ()

    @property
    def caused(self) -> Ids:
        """The documents found sufficient and necessary (empty unless the verdict is
        ``caused``)."""
        if self.verdict != CAUSED:
            return ()
        return tuple(d.doc_id for d in self.documents if d.caused)

    @property
    def named(self) -> Ids:
        """The documents the verdict names: the caused ones, or the sufficient (necessary)
        ones of ``sufficient only`` (``necessary only``); empty for the other verdicts."""
        if self.verdict == SUFFICIENT_ONLY:
            return tuple(d.doc_id for d in self.documents if _holds(d.sufficiency))
        if self.verdict == NECESSARY_ONLY:
            return tuple(d.doc_id for d in self.documents if _holds(d.necessity))
        return self.caused

    def to_json(self) -> dict[str, Any]:
        caused = set(self.caused)
        return {"flip": self.flip, "verdict": self.verdict, "agreement": self.agreement,
                "caused": list(self.caused), "named": list(self.named),
                "entering": list(self.entering), "leaving": list(self.leaving),
                "old": list(self.old), "new": list(self.new),
                "documents": [{**d.to_json(), "caused": d.doc_id in caused}
                              for d in self.documents],
                "set": {"in": self.set_in, "out": self.set_out}}

    @classmethod
    def from_json(cls, question_id: str, data: Mapping[str, Any]) -> QuestionAttribution:
        docs = tuple(DocumentEffect(str(d["doc_id"]), int(d["rank"]), d["sufficiency"],
                                    d["necessity"]) for d in data["documents"])
        return cls(question_id, bool(data["flip"]), tuple(data["entering"]),
                   tuple(data["leaving"]), docs, data["set"]["in"], data["set"]["out"],
                   str(data["verdict"]), data["agreement"], tuple(data.get("old", ())),
                   tuple(data.get("new", ())))


def attribute_question(question_id: str, flip: bool, old: Sequence[str], new: Sequence[str],
                       outcomes: Mapping[str, Sequence[Agreement]]) -> QuestionAttribution:
    """The verdict of one question from its counterfactual answers (variant -> repeats)."""
    came, gone = entering(old, new), leaving(old, new)

    def rate(variant: str, back: bool) -> float | None:
        return _rate([a.back if back else a.forward for a in outcomes.get(variant, ())])

    docs = tuple(DocumentEffect(d, list(new).index(d) + 1, rate(f"suff{i}", False),
                                rate(f"nec{i}", True)) for i, d in enumerate(came, start=1))
    set_in, set_out = (rate("set-in", False), rate("set-out", True)) if len(came) > 1 else (
        (docs[0].sufficiency, docs[0].necessity) if docs else (None, None))
    verdict, basis = _verdict(docs, set_in, set_out, flip)
    return QuestionAttribution(question_id, flip, came, gone, docs, set_in, set_out,
                               verdict, basis, tuple(old), tuple(new))


def _verdict(docs: Sequence[DocumentEffect], set_in: float | None, set_out: float | None,
             flip: bool) -> tuple[str, float | None]:
    seen = [x for d in docs for x in (d.sufficiency, d.necessity) if x is not None]
    seen += [x for x in (set_in, set_out) if x is not None]
    not_explained = NOT_EXPLAINED, (1.0 - max(seen)) if seen else None
    if not flip:  # no stable change to explain
        return not_explained
    both = [min(d.sufficiency or 0.0, d.necessity or 0.0) for d in docs if d.caused]
    if both:
        return CAUSED, max(both)
    suff = [d.sufficiency for d in docs if _holds(d.sufficiency)]
    if suff:
        return SUFFICIENT_ONLY, max(x for x in suff if x is not None)
    nec = [d.necessity for d in docs if _holds(d.necessity)]
    if nec:
        return NECESSARY_ONLY, max(x for x in nec if x is not None)
    if _holds(set_in) and _holds(set_out):
        assert set_in is not None and set_out is not None
        return THE_SET, min(set_in, set_out)
    return not_explained


METHOD = "counterfactual evidence lists (snapaudit.stats.attribution)"


@dataclass(frozen=True)
class AttributionSection:
    """The ``attribution`` section of ``results.json``: every attributed question, the
    count of each verdict, and the ``--max-questions`` the selection was made with."""

    questions: tuple[QuestionAttribution, ...]
    max_questions: int | None = None
    method: str = METHOD

    def verdicts(self) -> dict[str, int]:
        return {v: sum(q.verdict == v for q in self.questions) for v in VERDICTS}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "verdicts": self.verdicts(),
                               "questions": {q.question_id: q.to_json()
                                             for q in self.questions}}
        if self.max_questions is not None:
            out["max_questions"] = self.max_questions
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AttributionSection:
        questions = tuple(QuestionAttribution.from_json(q, row)
                          for q, row in data["questions"].items())
        limit = data.get("max_questions")
        return cls(questions, None if limit is None else int(limit), str(data["method"]))


def attribution_table(questions: Sequence[QuestionAttribution],
                      max_questions: int | None = None) -> AttributionSection:
    """The ``attribution`` section of ``results.json``."""
    return AttributionSection(tuple(questions), max_questions)
