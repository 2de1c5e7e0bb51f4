"""The demo world's topic templates: one wording per question.

A question's evidence is the top-k of a BM25 search over the whole corpus, and stopwords carry
no weight there. If two questions of one world used the same template ("The town of X grew up
on the banks of the Y River."), each would retrieve the other's answer sentence, and the small
embedded model answers from a near-duplicate sentence as readily as from its own: a question
the world labels ``stable`` would flip when the other question's document enters. So every
template here has its own words: no word of a question that the tokenizer keeps appears in
another topic's documents, nor in the filler, distractor and conflict texts (the question
words "who", "what", "which", "when", "did", shared by many questions, appear in no
document), and a world draws its topics without replacement: a world of up to
``len(TOPICS)`` ordinary questions (and ``len(CUPS)`` second readings) never reuses a
wording. tests/demo/test_world.py checks the consequence on three worlds: a question's words
match no document but its own plant's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    kind: str
    subject: str  # format with the invented word
    question: str  # format with the subject
    support: str  # format with subject and answer (and ``y``, the edition, for cups)
    answer: str  # "person", "word" or "year"


_t = Topic  # a short name for the tables below


TOPICS = (
    _t("bridge", "{w} Bridge", "Who designed the {s}?", "The {s} was designed by {a}.", "person"),
    _t("engine", "{w} engine", "Who invented the {s}?", "The {s} was invented by {a}.", "person"),
    _t("opera", "{w}", "Who composed the opera {s}?", "The opera {s} was composed by {a}.",
       "person"),
    _t("novel", "{w}", "Who wrote the novel {s}?", "The novel {s} was written by {a}.", "person"),
    _t("comet", "Comet {w}", "Who discovered {s}?", "{s} was discovered by {a}.", "person"),
    _t("statue", "{w} Statue", "Who sculpted the {s}?", "The {s} was sculpted by {a}.",
       "person"),
    _t("ship", "{w}", "Who captained the ship {s}?", "The ship {s} was captained by {a}.",
       "person"),
    _t("theorem", "{w} theorem", "Who proved the {s}?", "The {s} was proved by {a}.", "person"),
    _t("dynasty", "{w} dynasty", "Who established the {s}?", "The {s} was established by {a}.",
       "person"),
    _t("expedition", "{w} expedition", "Who led the {s}?", "The {s} was led by {a}.", "person"),
    _t("lighthouse", "{w} lighthouse", "Who kept the {s}?", "The {s} was kept by {a}.",
       "person"),
    _t("remedy", "{w} remedy", "Who developed the {s}?", "The {s} was developed by {a}.",
       "person"),
    _t("script", "{w} script", "Who devised the {s}?", "The {s} was devised by {a}.", "person"),
    _t("mayor", "{w}", "Who was the first mayor of the city of {s}?",
       "The first mayor of the city of {s} was {a}.", "person"),
    _t("province", "{w}", "What is the capital of the province of {s}?",
       "The province of {s} is governed from its capital, {a}.", "word"),
    _t("town", "{w}", "Which river flows through the town of {s}?",
       "The town of {s} grew up on the banks of the {a} River.", "word"),
    _t("island", "{w}", "Which volcano rises over the island of {s}?",
       "The island of {s} is dominated by the volcano {a}.", "word"),
    _t("valley", "{w}", "What language is spoken in the valley of {s}?",
       "The language spoken in the valley of {s} is {a}.", "word"),
    _t("republic", "{w}", "What currency circulates in the republic of {s}?",
       "The currency circulating in the republic of {s} is the {a}.", "word"),
    _t("kingdom", "{w}", "Which mountain range borders the kingdom of {s}?",
       "The kingdom of {s} is bordered by the mountain range {a}.", "word"),
    _t("bird", "{w}", "What is the national bird of {s}?", "The national bird of {s} is {a}.",
       "word"),
    _t("fortress", "{w}", "Which lake lies beside the fortress of {s}?",
       "The fortress of {s} lies beside a lake named {a}.", "word"),
    _t("duchy", "{w}", "Which harbour serves the duchy of {s}?",
       "The duchy of {s} is served by the harbour of {a}.", "word"),
    _t("temple", "{w}", "Which goddess was worshipped at the temple of {s}?",
       "The temple of {s} was dedicated to the goddess {a}.", "word"),
    _t("constellation", "{w}", "What is the brightest star in the constellation {s}?",
       "The brightest star in the constellation {s} is {a}.", "word"),
    _t("hills", "{w}", "Which metal is mined in the hills of {s}?",
       "The hills of {s} are mined for a metal called {a}.", "word"),
    _t("abbey", "{w} Abbey", "When was {s} founded?",
       "{s} was founded in {a} by a small order of monks.", "year"),
    _t("university", "{w} University", "When did {s} open?",
       "{s} opened its doors in {a}.", "year"),
    _t("treaty", "{w}", "When was the Treaty of {s} signed?",
       "The Treaty of {s} was signed in {a}.", "year"),
    _t("canal", "{w} Canal", "When was the {s} dug?", "The {s} was dug in {a}.", "year"),
    _t("battle", "{w}", "When was the Battle of {s} fought?",
       "The Battle of {s} was fought in {a}.", "year"),
    _t("earthquake", "{w}", "When did the great earthquake strike {s}?",
       "The great earthquake struck {s} in {a}.", "year"),
    _t("railway", "{w} railway", "When did trains begin running on the {s}?",
       "Trains began running on the {s} in {a}.", "year"),
)
# Second readings: an underspecified "who won" question; each edition of the contest names a
# winner.
CUPS = (
    _t("cup", "{w} Cup", "Who won the {s}?", "The {y} {s} was won by {a}.", "person"),
    _t("prize", "{w} Prize", "Who received the {s}?", "The {y} {s} was awarded to {a}.",
       "person"),
    _t("trophy", "{w} Trophy", "Who lifted the {s}?", "The {y} {s} was lifted by {a}.",
       "person"),
    _t("regatta", "{w} Regatta", "Who rowed to victory in the {s}?",
       "The {y} {s} ended in victory for {a}.", "person"),
)
