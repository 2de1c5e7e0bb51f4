"""Invented names for the demo world: seeded syllable words, never real entities."""

from __future__ import annotations

import random

_ONSETS = ("b", "br", "d", "dr", "f", "g", "k", "kh", "l", "m", "n", "p", "r", "s", "t",
           "th", "v", "z", "st", "tr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "eo", "ou")
_CODAS = ("", "n", "r", "l", "s", "th", "m", "nd", "rk", "x")


class NameMaker:
    """Unique capitalised invented words drawn from one seeded stream."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def word(self, syllables: int = 2) -> str:
        while True:
            parts = [
                self._rng.choice(_ONSETS) + self._rng.choice(_VOWELS) + self._rng.choice(_CODAS)
                for _ in range(syllables)
            ]
            word = "".join(parts).capitalize()
            if word not in self._used and 4 <= len(word) <= 11:
                self._used.add(word)
                return word

    def person(self) -> str:
        return f"{self.word(2)} {self.word(2)}"

    def year(self) -> str:
        while True:
            year = str(self._rng.randint(1620, 1990))
            if year not in self._used:
                self._used.add(year)
                return year
