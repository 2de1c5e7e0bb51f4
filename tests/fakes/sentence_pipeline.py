"""A chat pipeline that answers in sentences, for the sentence-answer tests.

Six questions "Where is the headquarters of company NAME?" (ids q000..q005, gold: the old
city). Every (state, repeat) words its sentence differently, so no two answers of a question
are the same string (the exact kernel sees within = cross = 0); the new index (``index =
"v2"``) moves two headquarters (q000 Austin -> Seattle, q001 Denver -> Boston), and its one
document per question (id ``hq-<i>``, the same id in both indexes) then has a new text. Two
answers are bare cities (q005 in old repeat 1, q004 in new repeat 1), the only EM-matches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from snapaudit.systems.python import PythonCall

COMPANIES = ("Acme", "Birch", "Cedar", "Delta", "Ember", "Fig")
OLD = ("Austin", "Denver", "Chicago", "Phoenix", "Portland", "Dallas")
NEW = ("Seattle", "Boston", *OLD[2:])
WORDINGS = {("v1", 1): "The headquarters is in {city}.",
            ("v1", 2): "The headquarters of company {company} is in {city}.",
            ("v2", 1): "Company {company} is located in {city}.",
            ("v2", 2): "The headquarters is located in {city}."}
BARE = {("v1", 1): 5, ("v2", 1): 4}  # (index, repeat) -> the question answered by its city


def answer(call: PythonCall, index: str = "v1") -> dict[str, Any]:
    i = int(call.question_id[1:])
    company, city = COMPANIES[i], (OLD if index == "v1" else NEW)[i]
    if BARE.get((index, call.repeat)) == i:
        text = city
    else:
        text = WORDINGS[(index, call.repeat)].format(company=company, city=city)
    return {"answer": text, "doc_ids": [f"hq-{i}"],
            "doc_texts": [f"{company} has its headquarters in {city}."]}


def write_world(tmp: Path) -> None:
    """``questions.jsonl`` and ``gold.jsonl`` (the old cities) of the six questions."""
    with open(tmp / "questions.jsonl", "w", encoding="utf-8") as f:
        for i, company in enumerate(COMPANIES):
            f.write(json.dumps({"id": f"q{i:03d}", "question":
                                f"Where is the headquarters of company {company}?"}) + "\n")
    with open(tmp / "gold.jsonl", "w", encoding="utf-8") as f:
        for i, city in enumerate(OLD):
            f.write(json.dumps({"question_id": f"q{i:03d}", "answers": [city]}) + "\n")
