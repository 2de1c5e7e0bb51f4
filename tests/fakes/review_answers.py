"""Python-system callables for the review app's tests: hostile and long answers."""

from __future__ import annotations

from snapaudit.systems.python import PythonCall

HOSTILE = (
    "<script>window.__pwned=1;document.title='pwned'</script>",
    '<img src=x onerror="window.__pwned=1">',
    "[click me](javascript:window.__pwned=1) **bold** "
    '<a href="javascript:window.__pwned=1">a</a>',
    "\u202eevil\u202c after \u2066isolate\u2069 \x1b[31mred",
)
LONG_OLD = ("The river rises in the northern hills and flows south through three counties "
            "before it reaches the sea at the old harbour town, where the bridge was built "
            "in the year of the great flood and later widened for the railway line.")
LONG_NEW = ("The river rises in the western hills and flows south through four counties "
            "before it reaches the sea at the old harbour town, where the bridge was built "
            "in the year of the great flood and later widened for the railway line.")


def hostile(call: PythonCall) -> str:
    """The old state answers plainly; the new one answers hostile text (a different one per
    question and repeat)."""
    if call.state == "old":
        return f"answer {call.question_id}"
    return HOSTILE[(int(call.question_id[1:]) + call.repeat) % len(HOSTILE)]


def long_answers(call: PythonCall) -> str:
    """Long answers that differ in two words between the states (q000, q001) or not."""
    if call.state == "new" and call.question_id in {"q000", "q001"}:
        return LONG_NEW
    return LONG_OLD


def planted(call: PythonCall) -> str:
    """The loopback RAG fake's planted answers (stable, noisy, churned, UNKNOWN in old)."""
    from tests.fakes.rag_service import planted_answer

    return planted_answer(call.question_id, call.state, call.repeat)
