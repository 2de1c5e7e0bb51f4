"""The outcome-blind hash sample of questions that audit stages draw (judge audit, replicate).

The ``n`` question ids with the smallest ``SHA-256(version NUL str(seed) NUL question_id)``,
returned sorted: the sample depends only on the version string, the seed and the ids (never
on an answer), and a larger ``n`` contains every smaller one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def hash_sample(question_ids: Sequence[str], n: int, seed: int, version: str) -> list[str]:
    def key(qid: str) -> str:
        return hashlib.sha256(f"{version}\0{seed}\0{qid}".encode()).hexdigest()

    return sorted(sorted(set(question_ids), key=key)[:n])
