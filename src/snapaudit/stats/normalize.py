"""Official-style answer normalization for NQ and TriviaQA.

NQ: the ORQA NQ-open evaluation (google-research/language, ``orqa/utils/eval_utils.py``,
``normalize_answer``), matched exactly: Unicode NFD first, then lowercase, drop ASCII
punctuation, drop the articles a/an/the, collapse whitespace. The SQuAD and DPR evaluations
apply the same steps *without* NFD, so EM here can differ from theirs only for strings that
are canonically equivalent but encoded differently (e.g. "café" with a precomposed é against
"cafe" + U+0301): ORQA (and snapaudit) count them equal, SQuAD/DPR do not. Strings already
in the same (e.g. composed, NFC) form on both sides get the same EM under all three.

TriviaQA (its official ``normalize_answer``): underscores become spaces,
then lowercase, then punctuation *and* the Unicode quotes ‘ ’ ´ ` become spaces (not deleted),
then articles and whitespace as for NQ.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Callable
from functools import lru_cache

_ARTICLES = re.compile(r"\b(a|an|the)\b", flags=re.UNICODE)
_PUNCT = frozenset(string.punctuation)
_TRIVIA_PUNCT = _PUNCT | {"‘", "’", "´", "`"}

Normalizer = Callable[[str], str]


def _strip(text: str, drop: frozenset[str], by: str = "") -> str:
    return "".join(by if ch in drop else ch for ch in text)


@lru_cache(maxsize=1 << 16)
def normalize_nq(text: str) -> str:
    """NQ-open answer normalization of the ORQA evaluation (NFD, then SQuAD's steps)."""
    text = unicodedata.normalize("NFD", text).lower()
    text = _strip(text, _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


@lru_cache(maxsize=1 << 16)
def normalize_triviaqa(text: str) -> str:
    """TriviaQA answer normalization (underscores and Unicode quotes included)."""
    text = text.lower().replace("_", " ")
    text = _strip(text, _TRIVIA_PUNCT, by=" ")
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


NORMALIZERS: dict[str, Normalizer] = {"nq": normalize_nq, "triviaqa": normalize_triviaqa}


def normalizer(benchmark: str) -> Normalizer:
    """The normalizer of ``benchmark`` ("nq" or "triviaqa")."""
    try:
        return NORMALIZERS[benchmark]
    except KeyError:
        from snapaudit.errors import ConfigError

        raise ConfigError(f"unknown benchmark {benchmark!r}; expected nq or triviaqa") from None
