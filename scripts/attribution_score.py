"""Score ``snapaudit attribute`` on a demo run against the world's plants.

The demo world's ``plants.json`` (copied into the run directory by ``snapaudit demo``) names
the documents behind each planted change and the shard each document lands in. A *planted
document* of a question is one of its plant's documents that enters between the old and the
new state (its shard is in the new state's prefix and not in the old one's). Two figures:

- **planted flips named**: of the planted flips (regression, recovery, second reading) that the
  audit flags as strict flips, the share whose ``caused`` documents include a planted document;
  the share whose verdict names one at all (``named``: caused, sufficient only or necessary
  only); and the share whose explaining documents hold one (the named ones, or for ``no single
  document: the set`` the entering set);
- **stable/distractor caused**: of the world's stable and distractor questions, the share that
  attribution gives a ``caused`` document (a question attribution did not flag has none).

Usage::

    python scripts/attribution_score.py RUN_DIR [--plants PLANTS_JSON] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

FLIP_KINDS = frozenset({"regression", "recovery", "second_reading"})
QUIET_KINDS = frozenset({"stable", "distractor"})
THE_SET = "no single document: the set"


def _state_shards(run_dir: Path) -> tuple[int, int]:
    protocol = tomllib.loads((run_dir / "protocol.resolved.toml").read_text(encoding="utf-8"))
    states = protocol["testbed"]["states"]
    return int(states[protocol["states"]["old"]]), int(states[protocol["states"]["new"]])


def score(run_dir: Path, plants_path: Path) -> dict[str, Any]:
    plants = json.loads(plants_path.read_text(encoding="utf-8"))
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    rows: dict[str, Any] = results["attribution"]["questions"]
    old_shards, new_shards = _state_shards(run_dir)
    shards: dict[str, int] = plants["doc_shards"]
    flips: list[dict[str, Any]] = []
    quiet: list[dict[str, Any]] = []
    for qid, plant in sorted(plants["questions"].items()):
        row = rows.get(qid)
        planted = {d for d in plant["doc_ids"] if old_shards < shards[d] <= new_shards}
        caused = set(row["caused"]) if row else set()
        named = set(row.get("named", row["caused"])) if row else set()
        explaining = (set(row["entering"]) if row and row["verdict"] == THE_SET else named)
        entry = {"question_id": qid, "kind": plant["kind"], "planted": sorted(planted),
                 "flagged": row is not None, "flip": bool(row and row["flip"]),
                 "verdict": row["verdict"] if row else None, "caused": sorted(caused),
                 "named": sorted(named), "caused_planted": bool(caused & planted),
                 "named_planted": bool(named & planted),
                 "set_planted": bool(explaining & planted)}
        if plant["kind"] in FLIP_KINDS and entry["flip"]:
            flips.append(entry)
        elif plant["kind"] in QUIET_KINDS:
            quiet.append(entry)
    return {"planted_flips_flagged": len(flips),
            "caused_planted": sum(e["caused_planted"] for e in flips),
            "named_planted": sum(e["named_planted"] for e in flips),
            "set_planted": sum(e["set_planted"] for e in flips),
            "stable_distractor": len(quiet),
            "stable_distractor_caused": sum(bool(e["caused"]) for e in quiet),
            "questions": flips + quiet}


def _share(k: int, n: int) -> str:
    return f"{k} of {n} ({100 * k / n:.0f}%)" if n else f"{k} of 0"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--plants", type=Path, default=None,
                        help="plants.json (default RUN_DIR/plants.json)")
    parser.add_argument("--json", action="store_true", help="print the whole score as JSON")
    args = parser.parse_args(argv)
    out = score(args.run_dir, args.plants or args.run_dir / "plants.json")
    if args.json:
        sys.stdout.write(json.dumps(out, indent=1) + "\n")
        return 0
    for e in out["questions"]:
        sys.stdout.write(f"{e['question_id']} {e['kind']:<14} flip={e['flip']!s:<5} "
                         f"verdict={e['verdict']} caused={','.join(e['caused']) or '-'} "
                         f"named={','.join(e['named']) or '-'} "
                         f"planted={','.join(e['planted']) or '-'}\n")
    n = out["planted_flips_flagged"]
    sys.stdout.write(f"planted flips flagged: {n}; planted document caused: "
                     f"{_share(out['caused_planted'], n)}; named: "
                     f"{_share(out['named_planted'], n)}; in the explaining set: "
                     f"{_share(out['set_planted'], n)}\n")
    sys.stdout.write(f"stable/distractor questions with a caused document: "
                     f"{_share(out['stable_distractor_caused'], out['stable_distractor'])}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
