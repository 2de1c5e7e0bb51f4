"""Synthetic web-like documents for the corpus benchmarks (seeded, streamed to JSONL).

About ``words`` words per document (uniform 0.5x-1.5x), Zipfian over a vocabulary of
syllable words with the English stopwords at the top ranks (as in web text, about a third of
the running words), a topic drift per document, sentence capitals and punctuation, and one
document in ten with non-ASCII words (accents, curly quotes), so both tokenizer paths work.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

STOP = (
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "this", "are", "or", "at", "from", "but", "an", "they", "their",
    "which", "will", "there", "if", "into", "such", "then", "these", "no"
)
SYLL = (
    "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "pa", "di", "go", "ha", "je", "xu", "bri",
    "sto", "lan", "mor", "tis", "ven", "dar", "kel", "pro", "gen", "ter", "nal", "fi"
)


def vocabulary(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = list(STOP)
    seen = set(words)
    while len(words) < n:
        lens = rng.integers(2, 5, 4 * n)
        sylls = rng.integers(0, len(SYLL), (4 * n, 4))
        for k, row in zip(lens.tolist(), sylls.tolist(), strict=True):
            w = "".join(SYLL[i] for i in row[:k])
            if w not in seen:
                seen.add(w)
                words.append(w)
                if len(words) == n:
                    break
    return words


def generate(path: Path, n_docs: int, seed: int = 0, words: int = 600,
             vocab_size: int = 200_000, chunk: int = 2000) -> None:
    rng = np.random.default_rng(seed)
    plain = vocabulary(vocab_size, seed)
    vocab = np.array(plain, dtype=object)
    capital = np.array([w.capitalize() + "." for w in plain], dtype=object)
    accented = np.array([w.replace("a", "á").replace("o", "ö") + "’s" for w in plain],
                        dtype=object)
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    cdf = np.cumsum(ranks ** -1.05)
    cdf /= cdf[-1]
    with open(path, "w", encoding="utf-8") as f:
        for lo in range(0, n_docs, chunk):
            m = min(chunk, n_docs - lo)
            lens = rng.integers(words // 2, words * 3 // 2, m)
            ids = np.minimum(np.searchsorted(cdf, rng.random(int(lens.sum()))), vocab_size - 1)
            topic = np.repeat(rng.integers(1000, vocab_size - 500, m), lens)
            local = rng.random(len(ids)) < 0.15
            ids[local] = topic[local] + rng.integers(0, 400, int(local.sum()))
            toks = vocab[ids]
            toks[::12] = capital[ids[::12]]
            bounds = np.concatenate([[0], np.cumsum(lens)])
            lines = []
            for d in range(m):
                i = lo + d
                doc = toks[bounds[d]: bounds[d + 1]]
                if i % 10 == 3:
                    doc = doc.copy()
                    doc[::17] = accented[ids[bounds[d]: bounds[d + 1]: 17]]
                lines.append(json.dumps({"id": f"web-{i:08d}", "url": f"https://site{i % 997}"
                                         f".example/p/{i}", "text": " ".join(doc.tolist())},
                                        ensure_ascii=False))
            f.write("\n".join(lines) + "\n")


def queries(n: int, seed: int = 1, vocab_size: int = 200_000) -> list[str]:
    """Queries of 2-6 words: content words of mid frequency, as users type them."""
    rng = np.random.default_rng(seed)
    vocab = vocabulary(vocab_size, 0)
    out = []
    for _ in range(n):
        k = int(rng.integers(2, 7))
        ids = rng.integers(len(STOP) + 50, 60_000, k)
        out.append(" ".join(vocab[i] for i in ids))
    return out
