"""A simulated annotator who labels by the demo world's planted truth, against the rule judge.

The annotator knows what the world planted (``plants.json``, ``gold.jsonl``): each answer is
read as the fact it states: the second reading's answer, the planted wrong answer, the gold
fact (any gold alias), UNKNOWN (a refusal), or none of them. Two answers are ``same`` when
they state the same planted fact, ``different`` when they state different ones, and, when
neither states a planted fact, ``same`` if their normalized texts are equal, else
``unsure``. The labels go through :class:`snapaudit.run.after.review.ReviewSession` (judge
``human:oracle``, on a copy of the run) and are compared with the run's primary judge by
:mod:`snapaudit.stats.human_agreement` (agreement, Cohen's kappa, identical partitions,
question-cluster intervals, D under each). The sample then goes through a Label Studio export
and re-import (the oracle's choices filled in as Label Studio's export writes them), which
must give exactly the same labels. Usage::

    snapaudit demo --out DEMO                    # the embedded world on the local generator
    python scripts/human_vs_rule.py DEMO [--sample N]
    python scripts/human_vs_rule.py --simulated 24   # model-free answers (tests.fakes)

DEMO is ``snapaudit demo``'s output folder (its run directory and world files inside) or a
run directory with ``plants.json`` next to it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.fakes

from snapaudit.run.after.review import Label, LabelItem, ReviewSession
from snapaudit.run.analysis.locked_run import LockedRun
from snapaudit.run.analysis.review import human_labels, human_section
from snapaudit.run.record.review_store import ReviewStore
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.normalize import normalize_nq


def _find(root: Path, name: str) -> Path:
    found = sorted(root.rglob(name))
    if not found:
        raise SystemExit(f"{name} not found under {root}")
    return found[0]


def facts(plants: dict[str, Any], gold: dict[str, list[str]]) -> dict[str, list[tuple[str, str]]]:
    """Question -> [(fact, normalized string)], most specific first."""
    out: dict[str, list[tuple[str, str]]] = {}
    for qid, plant in plants.items():
        rows = [("second", plant["second_answer"])] if "second_answer" in plant else []
        rows += [("planted", plant["planted_answer"])] if "planted_answer" in plant else []
        rows += [("gold", a) for a in gold.get(qid, [])]
        out[qid] = [(f, normalize_nq(str(s))) for f, s in rows if normalize_nq(str(s))]
    return out


def fact_of(text: str, known: list[tuple[str, str]]) -> str | None:
    norm = normalize_nq(text)
    if not norm or "unknown" in norm.split():
        return "unknown"
    for fact, alias in known:
        if alias in norm:
            return fact
    return None


def oracle(item: LabelItem, known: list[tuple[str, str]]) -> dict[str, Label]:
    fact = {a.item: fact_of(a.text, known) for a in item.answers}
    text = {a.item: normalize_nq(a.text) for a in item.answers}
    out: dict[str, Label] = {}
    for pair in item.pairs:
        x, _, y = pair.partition("|")
        if fact[x] is not None and fact[y] is not None:
            out[pair] = "same" if fact[x] == fact[y] else "different"
        elif fact[x] is None and fact[y] is None:
            out[pair] = "same" if text[x] == text[y] else "unsure"
        else:
            out[pair] = "different"
    return out


def measure(run_dir: Path, plants_path: Path, gold_path: Path, sample: int | None
            ) -> dict[str, Any]:
    plants = json.loads(plants_path.read_text(encoding="utf-8"))["questions"]
    gold = {r["question_id"]: r["answers"] for r in
            (json.loads(x) for x in gold_path.read_text(encoding="utf-8").splitlines() if x)}
    known = facts(plants, gold)
    with ReviewSession.open(run_dir, "oracle", sample=sample) as session:
        for item in session.label_items():
            session.save_labels(item.question_id, oracle(item, known[item.question_id]))
        session.finish_labels()
    with RunDir(run_dir, read_only=True) as rd:
        run = LockedRun.load(rd)
        store = ReviewStore(rd.ledger_path)
        try:
            labels = human_labels(rd.ledger(), store.label_locks())
        finally:
            store.close()
        protocol = rd.load_protocol()
        out = human_section(run, labels, protocol.bootstrap.draws, protocol.bootstrap.seed)
    assert out is not None
    return out


def label_studio_round_trip(run_dir: Path, sample: int | None, tmp: Path) -> int:
    """Export the sample for Label Studio, fill in the oracle's choices as Label Studio's
    export writes them, import them as ``human:oracle-ls``; the questions whose labels equal
    the oracle's own (``human:oracle``)."""
    from snapaudit.run.after.label_exchange import export_tasks, import_annotations

    tasks_path = tmp / "tasks.json"
    export_tasks(run_dir, "labelstudio", tasks_path, sample=sample)
    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
    with ReviewSession.open(run_dir, "oracle", sample=sample) as session:
        mine = {i.question_id: dict(i.saved or {}) for i in session.label_items()}
    done = [{"id": n, "data": t["data"], "annotations": [{"was_cancelled": False, "result": [
        {"from_name": "label", "to_name": "answer_a", "type": "choices",
         "value": {"choices": [mine[t["data"]["question_id"]][t["data"]["pair"]]]}}]}]}
        for n, t in enumerate(tasks, start=1)]
    (tmp / "done.json").write_text(json.dumps(done), encoding="utf-8")
    import_annotations(run_dir, tmp / "done.json", "oracle-ls")
    with ReviewSession.open(run_dir, "oracle-ls", sample=sample) as session:
        back = {i.question_id: dict(i.saved or {}) for i in session.label_items()}
    return sum(back[q] == mine[q] for q in mine)


def _simulated(root: Path, n: int) -> tuple[Path, Path, Path]:
    from tests.fakes.world_service import engine_run

    run = engine_run(root, n=n)
    return run, root / "world" / "plants.json", root / "world" / "gold.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("demo", nargs="?", type=Path)
    parser.add_argument("--sample", type=int, default=None,
                        help="questions to label (default: every labelled question)")
    parser.add_argument("--simulated", type=int, default=None, metavar="N",
                        help="a model-free run of N simulated demo questions instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.simulated:
            run, plants, gold = _simulated(Path(tmp), args.simulated)
        elif args.demo is not None:
            source = _find(args.demo, "ledger.sqlite").parent
            run = Path(shutil.copytree(source, Path(tmp) / "run"))  # the demo is not changed
            plants, gold = _find(args.demo, "plants.json"), _find(args.demo, "gold.jsonl")
        else:
            parser.error("give a demo folder or --simulated N")
        with RunDir(run, read_only=True) as rd:
            n = len({r.question_id for r in LockedRun.load(rd).primary_labels})
        out = measure(run, plants, gold, args.sample or n)
        same = label_studio_round_trip(run, args.sample or n, Path(tmp))
    print(f"Label Studio round trip: {same} of {n if not args.sample else args.sample} "
          "questions re-imported with exactly the oracle's labels")
    h = out["judges"]["human:oracle"]
    c = h["vs_primary"]
    print(f"primary judge {out['primary']} vs human:oracle (labels by the planted truth): "
          f"{c['questions']} questions, {c['pairs']} pairs decided by both, "
          f"{c['unsure']} unsure left out")
    print(f"agreement {c['agreement']:.1f}% {c['agreement_ci95']}, Cohen's kappa "
          f"{c['kappa']:.3f} {c['kappa_ci95']}, identical partitions "
          f"{c['partitions_identical']:.1f}% {c['partitions_identical_ci95']}")
    print(f"semantic D (pp) on {c['d_questions']} fully labelled questions: "
          + ", ".join(f"{k} {v:.2f}" for k, v in c["d_hat"].items() if v is not None))
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
