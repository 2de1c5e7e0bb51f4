"""The report's agent section: the trajectory kernels, the changed pairs split by whether the
agent asked the same, and where trajectories first diverge (results.json ``trajectory``);
absent when the answers carry no steps."""

from __future__ import annotations

from snapaudit.report.model import Section, Table, interval, num
from snapaudit.stats.conversation import ConversationSection
from snapaudit.stats.trajectory_section import Divergence, TrajectorySection

READING = ("Trajectory kernels compare what the agent did, with the estimand of the answer "
           "kernels: tools (the same sequence of tool names), queries (the same inputs after "
           "answer normalization), documents (Jaccard of the document ids over all steps). A "
           "changed answer with the same queries points at the index (the agent asked the "
           "same and was told otherwise); with different queries, at the agent.")


def agents_section(t: TrajectorySection | None, old: str, new: str) -> Section | None:
    if t is None:
        return None
    rows = tuple((name, num(k.within), num(k.cross), num(k.d_hat), num(k.lcb95),
                  interval(k.ci95), num(k.p_nonpositive, 4)) for name, k in t.kernels.items())
    kernels = Table(f"Excess trajectory churn {old} → {new} (percent; D in percentage points)",
                    ("kernel", "Within", "Cross", "D", "LCB95", "95% CI", "P(D ≤ 0)"), rows)
    c = t.changed_pairs
    split = Table("Old × new pairs whose answers differ (exact kernel)", ("", "pairs"),
                  (("changed", num(c.total)), ("same queries (index side)", num(c.same_queries)),
                   ("different queries (agent side)", num(c.different_queries))))
    steps = sorted(set(t.first_divergence.cross.at_step) | set(t.first_divergence.within.at_step))
    divergence = Table("First step where the actions (tool, normalized input) differ",
                       ("pairs", "compared", "identical", *(f"step {j}" for j in steps)),
                       (_row("old × new", t.first_divergence.cross, steps),
                        _row("same state", t.first_divergence.within, steps)))
    paragraphs = [READING]
    if t.rows_without_steps:
        paragraphs.append(f"{num(t.rows_without_steps)} answers of {old} and {new} carried no "
                          "steps; they count as empty trajectories.")
    return Section("Agent trajectories", tuple(paragraphs), (kernels, split, divergence))


def conversation_section(c: ConversationSection | None, old: str, new: str) -> Section | None:
    """The report's conversation section: D of the exact kernel per turn, and of the final
    turns (results.json ``conversation``); absent when no question is a conversation."""
    if c is None:
        return None
    rows = tuple((name, num(t.questions), num(t.exact.within), num(t.exact.cross),
                  num(t.exact.d_hat), num(t.exact.lcb95), interval(t.exact.ci95))
                 for name, t in [*((str(t.turn), t) for t in c.turns), ("final", c.final)])
    table = Table(f"Excess answer churn per conversation turn {old} → {new} (exact kernel; "
                  "percent, D in percentage points)",
                  ("turn", "questions", "Within", "Cross", "D", "LCB95", "95% CI"), rows)
    text = (f"{num(c.conversations)} questions are conversations (a fixed list of user turns "
            "answered in order within one call), "
            f"{num(c.single_turn)} single questions. Turn j counts the conversations that "
            "have a turn j; final is each conversation's last turn, the answer every other "
            "number of this report is of.")
    return Section("Conversations", (text,), (table,))


def _row(name: str, d: Divergence, steps: list[int]) -> tuple[str, ...]:
    return (name, num(d.pairs), num(d.identical), *(num(d.at_step.get(j, 0)) for j in steps))
