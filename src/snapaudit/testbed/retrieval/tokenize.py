"""The deterministic BM25 tokenizer (version 1).

1. Unicode NFKC normalization, then ``str.casefold()``;
2. tokens are maximal runs of Unicode letters and digits (regex ``[^\\W_]+``), so punctuation,
   underscores and whitespace separate tokens;
3. tokens longer than 64 code points are dropped (hashes, URLs glued together);
4. a fixed list of 33 English stopwords (the Lucene / Pyserini English list) is dropped.

No stemming. The same function tokenizes documents at build time and queries at query time;
its name and version are bound into the index metadata and checked when the index opens.
"""

from __future__ import annotations

import re
import unicodedata

TOKENIZER = "snapaudit-word-v1"
MAX_TOKEN_CHARS = 64
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
})
_WORD = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order, duplicates kept."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [t for t in _WORD.findall(folded)
            if len(t) <= MAX_TOKEN_CHARS and t not in STOPWORDS]
