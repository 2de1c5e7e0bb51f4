"""A planted conversation world: five questions (q000..q004), states old and new, two
repeats; q000..q003 are three-turn conversations, q004 a two-turn one.

- turn 1: stable everywhere;
- turn 2: churn planted in q001, q002 and q004 (old answers ``old-2``, new ``new-2``);
- turn 3: repeat noise in q003 (repeat 1 answers ``m``, repeat 2 ``n``, in both states).

By hand (w: within, c: cross, per question; D = mean of w - c):

======= ========= ========= ========= =======
turn    questions within %  cross %   D pp
======= ========= ========= ========= =======
1       5         100       100       0
2       5         100       40        60
3       4         75        87.5      -12.5
final   5         80        70        10
======= ========= ========= ========= =======

``final`` is each conversation's last turn (q004's is turn 2), so its turn is null. The exact
bootstrap: turn 2's D_i are 0, 1, 1, 0, 1, so the mean of 5 draws is K/5 with K ~ Bin(5, 3/5):
P(K <= 0) = 0.010 < 0.05 <= P(K <= 1) = 0.087, lcb95 = 20 pp. Turn 3's D_i are 0, 0, 0, -1/2:
the mean is -K/8, K ~ Bin(4, 1/4): P(K = 4) = 0.004 < 0.05 <= P(K >= 3) = 0.051, lcb95 =
-37.5 pp.

The same replies come from the Python target :func:`talker`, the loopback service
:class:`TalkService` (``turns`` in the request body, ``turn_answers`` under
``reply.per_turn``) and the answers table :func:`conversation_rows`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from snapaudit.systems.python import PythonCall
from snapaudit.tables import AnswerRow
from tests.fakes.loopback import LoopbackServer

QUESTIONS = tuple(f"q00{i}" for i in range(5))
STATES = ("old", "new")
TURNS = {q: (3 if q != "q004" else 2) for q in QUESTIONS}

EXPECTED = {  # turn: (questions, within %, cross %, D pp, lcb95 pp)
    1: (5, 100.0, 100.0, 0.0, 0.0),
    2: (5, 100.0, 40.0, 60.0, 20.0),
    3: (4, 75.0, 87.5, -12.5, -37.5),
}
FINAL = (5, 80.0, 70.0, 10.0)


def turns_of(qid: str) -> list[str]:
    """The user turns of a question (its cohort ``turns``)."""
    return [f"{qid} turn {j}" for j in range(1, TURNS[qid] + 1)]


def turn_answer(qid: str, state: str, repeat: int, turn: int) -> str:
    """The planted answer of one turn (1-based) of one cell."""
    if turn == 2 and qid in ("q001", "q002", "q004"):
        return f"{state}-2"
    if turn == 3 and qid == "q003":
        return "m" if repeat == 1 else "n"
    return f"answer {turn}"


def answers_of(qid: str, state: str, repeat: int, turns: int) -> list[str]:
    return [turn_answer(qid, state, repeat, j) for j in range(1, turns + 1)]


def talker(call: PythonCall) -> dict[str, Any]:
    """The Python target: one answer per turn of ``call.turns``."""
    assert call.turns is not None and list(call.turns) == turns_of(call.question_id)
    return {"turn_answers": answers_of(call.question_id, call.state, call.repeat,
                                       len(call.turns))}


def conversation_rows() -> list[AnswerRow]:
    """The planted world as an answers table."""
    rows = []
    for q in QUESTIONS:
        for s in STATES:
            for r in (1, 2):
                turns = tuple(answers_of(q, s, r, TURNS[q]))
                rows.append(AnswerRow(q, s, r, turns[-1], turn_answers=turns))
    return rows


@dataclass
class TalkService(LoopbackServer):
    """The planted world over HTTP: ``POST /<state>`` with ``{question_id, repeat, turns}``;
    the turn answers under ``reply.per_turn``. ``requests`` keeps every request body. The
    first reply for each question of ``broken`` leaves out its last turn's answer."""

    broken: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []

    def url(self, state: str) -> str:
        return f"http://127.0.0.1:{self.port}/{state}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        answers = answers_of(body["question_id"], request.match_info["state"],
                             int(body["repeat"]), len(body["turns"]))
        asked = [r for r in self.requests if r["question_id"] == body["question_id"]]
        if body["question_id"] in self.broken and len(asked) == 1:
            answers = answers[:-1]
        return web.Response(text=json.dumps({"reply": {"per_turn": answers}}),
                            content_type="application/json")

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{state}", self._handle)


def write_conversations(tmp: Path) -> None:
    """``questions.jsonl`` (the five conversations, ``question`` their first turn) and
    ``gold.jsonl``, as :func:`tests.helpers.protocol.write_world` writes its world."""
    with open(tmp / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in QUESTIONS:
            turns = turns_of(q)
            f.write(json.dumps({"id": q, "question": turns[0], "turns": turns}) + "\n")
    with open(tmp / "gold.jsonl", "w", encoding="utf-8") as f:
        for q in QUESTIONS:
            f.write(json.dumps({"question_id": q, "answers": ["answer 3"]}) + "\n")


def sampled_talker(call: PythonCall, delay_s: float = 0.0) -> dict[str, Any]:
    """A sampling conversation: after ``delay_s`` seconds, each turn's answer a function of
    (question, seed, turn) alone, so a run killed anywhere and resumed must end with the
    uninterrupted run's cells."""
    import time

    time.sleep(float(delay_s))
    assert call.turns is not None
    return {"turn_answers": [f"turn {j} answer {(call.seed >> j) % 3}"
                             for j in range(1, len(call.turns) + 1)]}
