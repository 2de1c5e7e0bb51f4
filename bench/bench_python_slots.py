"""What sharing a sync target's slots between states costs, measured in one run.

    PYTHONPATH=src:. .venv/bin/python bench/bench_python_slots.py [QUESTIONS] [CALL_MS]

2 states x 2 repeats, ``[run] concurrency = 4``, the default execution settings:

1. **engine overhead**, QUESTIONS (10,000) questions, a target that returns at once: cells/s
   when both states call one function (the README's pattern: one slot shared by the states)
   against two states whose targets share nothing (a slot each, as every state had before the
   slots were shared); and, measured alone, the per-call cost of what every call of a Python
   system now does besides (the module watch and the import-path scope), in microseconds.
2. **a model taking CALL_MS (5) per call**, QUESTIONS / 20 questions: the wall time of the
   shared slot (one call of the model at a time, by any state) against a slot per state (two
   at once: what a shared non-reentrant model could not survive). The ratio is the price of
   never entering one model twice at once; ``thread_safe = true`` or ``isolation =
   "process"`` buy the parallelism back where the model allows it.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

import snapaudit

TARGET = '''import time


def answer(call, index="v1"):
    if {call_s}:
        time.sleep({call_s})
    return "answer " + call.question_id
'''


def _run(questions: int, call_s: float, shared: bool) -> tuple[float, int]:
    """(wall s of the run, answer cells) for one fresh run."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        write_world(tmp, n=questions)
        tag = f"{'shared' if shared else 'apart'}_{int(call_s * 1e6)}_{questions}"
        for state in ("old", "new"):
            (tmp / f"bench_{state}_{tag}.py").write_text(TARGET.format(call_s=call_s))
        old, new = (f'target = "bench_{s if not shared else "old"}_{tag}:answer"\n'
                    f'python_path = "."' for s in ("old", "new"))
        text = python_protocol_text(old, new, run={"concurrency": 4})
        proto = save_protocol(tmp, text.replace("size = 6", f"size = {questions}"))
        start = time.monotonic()
        snapaudit.audit(proto, tmp / "run")
        return time.monotonic() - start, questions * 4


def _per_call_us(n: int = 200_000) -> float:
    """The module watch and the import-path scope of one call, in microseconds."""
    from snapaudit.systems.python_call import ModuleWatch, import_path

    watch, folder = ModuleWatch(), Path(tempfile.gettempdir())
    start = time.perf_counter()
    for _ in range(n):
        with import_path(folder):
            pass
        watch.gained()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    questions = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    call_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    print(f"1. engine overhead: {questions} questions x 2 states x 2 repeats, instant target")
    apart, cells = _run(questions, 0.0, shared=False)
    shared, _ = _run(questions, 0.0, shared=True)
    print(f"   a slot per state:  {cells / apart:8.0f} cells/s ({apart:.1f} s)")
    print(f"   one shared slot:   {cells / shared:8.0f} cells/s ({shared:.1f} s)  "
          f"ratio {apart / shared:.2f}")
    per_call = _per_call_us()
    print(f"   module watch + import-path scope: {per_call:.2f} us per call = "
          f"{per_call / (shared / cells * 1e6):.2%} of a cell's time")
    small = max(questions // 20, 6)
    print(f"2. a model taking {call_ms:g} ms per call: {small} questions x 2 x 2")
    apart, cells = _run(small, call_ms / 1000, shared=False)
    shared, _ = _run(small, call_ms / 1000, shared=True)
    print(f"   a slot per state (2 calls at once):  {apart:.1f} s")
    print(f"   one shared slot (1 call at a time):  {shared:.1f} s  ratio {shared / apart:.2f} "
          f"(floor {cells * call_ms / 1000:.1f} s of model time)")


if __name__ == "__main__":
    main()
