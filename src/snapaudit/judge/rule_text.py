"""Text handling of the rule judge: normalization, numbers, dates and the answer core.

Normalization follows the Natural Questions / SQuAD convention (lower case, no
punctuation, no articles, single spaces) with additions that the rule needs and
documents: accents folded, dates written as ``d:YYYYMMDD``, digit grouping
commas removed, decimal points kept, number words (up to millions, and years
read as "nineteen forty-five") turned into digits, ``%`` read as "percent",
unit spellings folded (metres -> m), and runs of single letters joined
("J. K." -> "jk", "U.S.A." -> "usa").
"""

from __future__ import annotations

import re
import string
import unicodedata


def _words(text: str) -> list[str]:
    return text.split()


MONTHS = {m: i + 1 for i, m in enumerate(_words(
    "january february march april may june july august september october november "
    "december"))}
UNITS = {"metre": "m", "metres": "m", "meter": "m", "meters": "m", "kilometre": "km",
         "kilometres": "km", "kilometer": "km", "kilometers": "km", "feet": "ft",
         "foot": "ft", "celsius": "c", "fahrenheit": "f", "degree": "degrees",
         "kilograms": "kg", "kilogram": "kg", "miles": "mi", "mile": "mi"}
SMALL = {w: i for i, w in enumerate(_words(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"))}
TENS = {w: 10 * (i + 2) for i, w in enumerate(_words(
    "twenty thirty forty fifty sixty seventy eighty ninety"))}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
ARTICLES = {"a", "an", "the"}
# Words an answer may add around the fact without changing it.
FILLER = ARTICLES | set(_words(
    "is was are were be been it its it's this that he she they his her their there by of in "
    "on at to from for as and answer called named known located about approximately around "
    "roughly nearly some percent degrees sir dr mr mrs ms president king queen saint st "
    "capital city river planet country")
)
NEGATIONS = {"not", "no", "never", "neither", "nor", "isnt", "wasnt", "arent", "werent"}
HEDGES = {"or", "either", "maybe", "perhaps", "possibly"}
REFUSALS = {"", "unknown", "i dont know", "dont know", "no answer", "cannot answer",
            "not enough information", "n a", "na", "none"}
_PUNCT = set(string.punctuation)
_MONTH = "(" + "|".join(MONTHS) + ")"
_DATE_PATTERNS = (
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), (1, 2, 3)),
    (re.compile(_MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b"), (3, 1, 2)),
    (re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+(\d{4})\b"),
     (3, 2, 1)),
)


def fold(text: str) -> str:
    """Lower case with accents removed."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _date_token(match: re.Match[str], order: tuple[int, int, int]) -> str:
    parts = [match.group(i) for i in order]
    year, month, day = parts[0], parts[1], parts[2]
    month_no = MONTHS[month] if month in MONTHS else int(month)
    return f" d{int(year):04d}{month_no:02d}{int(day):02d} "


def _dates(text: str) -> str:
    for pattern, order in _DATE_PATTERNS:
        text = pattern.sub(lambda m, o=order: _date_token(m, o), text)  # type: ignore[misc]
    return text


def _words_to_numbers(tokens: list[str]) -> list[str]:
    out: list[str] = []
    current: int | None = None

    def flush() -> None:
        nonlocal current
        if current is not None:
            out.append(str(current))
            current = None

    for tok in tokens:
        value = SMALL.get(tok, TENS.get(tok))
        if tok in SCALES and current is not None:
            current *= SCALES[tok]
        elif value is None:
            flush()
            out.append(tok)
        elif current is None:
            current = value
        elif (value >= 10 and 10 <= current < 100 and current % 10 != 0) or (
                value >= 10 and current < 10):
            current = current * 100 + value  # "nineteen forty" -> 1940
        elif value < 10 and current % 10 == 0:
            current += value
        else:
            flush()
            current = value
    flush()
    return out


def _join_letters(tokens: list[str]) -> list[str]:
    out: list[str] = []
    run = ""
    for tok in [*tokens, ""]:
        if len(tok) == 1 and tok.isalpha():
            run += tok
            continue
        if run:
            out.append(run)
            run = ""
        if tok:
            out.append(tok)
    return out


def tokens(text: str) -> list[str]:
    """Normalized tokens of an answer (see the module docstring)."""
    text = _dates(fold(text))
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text).replace("%", " percent ")
    text = text.replace("°", " degrees ").replace("'s ", " ").replace("’s ", " ")
    text = re.sub(r"(?<=\d)\.(?=\d)", "\x00", text)
    text = re.sub(r"[-/]", " ", text)
    text = "".join(c for c in text if c not in _PUNCT).replace("\x00", ".")
    words = [UNITS.get(w, w) for w in text.split() if w not in ARTICLES]
    return _join_letters(_words_to_numbers(words))


def normalize(text: str) -> str:
    return " ".join(tokens(text))


def is_number(token: str) -> bool:
    return bool(re.fullmatch(r"d?\d+(\.\d+)?", token))


def core(answer_tokens: list[str], question_tokens: set[str]) -> list[str]:
    """The answer without filler and without words it repeats from the question."""
    return [t for t in answer_tokens if t not in FILLER and t not in question_tokens]
