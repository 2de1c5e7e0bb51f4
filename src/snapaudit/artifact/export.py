"""``snapaudit export``: a sanitized, self-verifying artifact of a finished run.

The artifact keeps everything needed to recompute the audit's numbers with no network and no
gold: accepted cells and attempts of every stage, the lock chain, the answer and label tables,
the results and a claims file (every number the report states). It drops what must not be
published: question text, gold aliases and retrieved passages are replaced by their SHA-256
(``{"sha256": ...}``); secrets are never in a run directory to begin with (the protocol names
environment variables, never their values). Layout::

    ARTIFACT/manifest.json          version, file list with sha256, what was hashed
    ARTIFACT/protocol.json          the bound protocol fields (secret-free)
    ARTIFACT/cohort.json            question ids and question sha256 only
    ARTIFACT/locks.json             [[record, stored hash], ...] in chain order
    ARTIFACT/ledger/<stage>.cells.jsonl, <stage>.attempts.jsonl
    ARTIFACT/tables/answers.jsonl, labels.jsonl   (no question text)
    ARTIFACT/gold.sha256.json       question id -> sha256 of its canonical alias list
    ARTIFACT/results.json, claims.json
    ARTIFACT/review/decisions.jsonl, label_locks.jsonl   (snapaudit review, when present)
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from snapaudit.artifact.review_check import export_review
from snapaudit.errors import InputError
from snapaudit.hashing import canonical_json, sha256_file, sha256_json, sha256_text
from snapaudit.run.record.ledger.cells import Publish, published_text
from snapaudit.run.record.ledger.store import connect_read_only
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.normalize import normalizer
from snapaudit.tables import Step, read_answers, read_gold, read_labels, write_answers, write_labels
from snapaudit.tables.steps import parse_steps, public_payload, steps_record

ARTIFACT_VERSION = 1
# Keys whose string values are text that must not be published (hashed instead).
SENSITIVE_KEYS = frozenset({"question", "rendered", "text", "passages", "evidence", "gold",
                            "answers_gold", "prompt"})
# Results sections that need gold to recompute.
GOLD_SECTIONS = frozenset({"utility", "transitions", "flip_rates"})


def sanitize(value: Any, key: str | None = None) -> Any:
    """Replace every string under a sensitive key by ``{"sha256": ...}``, recursively."""
    if key in SENSITIVE_KEYS and isinstance(value, str):
        return {"sha256": sha256_text(value)}
    if isinstance(value, dict):
        return {k: sanitize(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitize(v, key) if key in SENSITIVE_KEYS else sanitize(v) for v in value]
    return value


# results.json keys that are not claims: the schema's version, and the tokens and cost the run
# metered from its ledger (not derived from the answers, so nothing to recompute).
NOT_CLAIMS = frozenset({"schema_version", "usage"})


def claims(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every number (and decision) of the results, as ``{"claim", "value", "needs_gold"}``.

    The claim name is the dotted path into results.json, e.g. ``kernels.semantic.d_hat``.
    """
    out: list[dict[str, Any]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for k in sorted(value):
                walk(value[k], f"{path}.{k}" if path else str(k))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for i, v in enumerate(value):
                walk(v, f"{path}[{i}]")
        elif isinstance(value, (int, float, bool, list)) and value is not None:
            out.append({"claim": path, "value": value,
                        "needs_gold": path.split(".")[0] in GOLD_SECTIONS})

    walk({k: v for k, v in results.items() if k not in NOT_CLAIMS}, "")
    return out


def _rows(db: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    yield from db.execute(sql, params).fetchall()


def _stages(db: sqlite3.Connection) -> list[str]:
    return [str(r[0]) for r in db.execute(
        "SELECT DISTINCT stage FROM attempts UNION SELECT DISTINCT stage FROM cells ORDER BY 1")]


def _export_ledger(ledger: Path, out: Path, publish: Publish) -> dict[str, bool]:
    """Write each stage's cells and attempts; return stage -> whether anything was hashed
    (the answer cells' steps are published by ``publish``, which the answer lock binds)."""
    (out / "ledger").mkdir()
    db = connect_read_only(ledger)
    hashed: dict[str, bool] = {}
    try:
        for stage in _stages(db):
            changed = False
            name = stage.replace(":", "_")
            with open(out / "ledger" / f"{name}.cells.jsonl", "w", encoding="utf-8") as f:
                for key, aid, body in _rows(db, "SELECT cell_key, attempt_id, payload FROM cells "
                                            "WHERE stage=? ORDER BY cell_key", (stage,)):
                    payload = json.loads(body)
                    clean = sanitize(publish(payload) if stage == "answer" else payload)
                    changed |= clean != payload
                    f.write(canonical_json({"cell_key": key, "attempt_id": aid,
                                            "payload": clean}) + "\n")
            with open(out / "ledger" / f"{name}.attempts.jsonl", "w", encoding="utf-8") as f:
                for row in _rows(db, "SELECT id, cell_key, attempt_no, request_hash, outcome, "
                                 "reason, error, payload FROM attempts WHERE stage=? ORDER BY id",
                                 (stage,)):
                    payload = published_text(row[7], publish) if stage == "answer" else row[7]
                    changed |= payload != row[7]
                    if payload is not None:
                        clean = canonical_json(sanitize(json.loads(payload)))
                        if clean != canonical_json(json.loads(payload)):
                            changed, payload = True, clean
                    f.write(canonical_json([stage, *row[:7], payload]) + "\n")
            hashed[stage] = changed
        locks = [[json.loads(r), h] for r, h in
                 db.execute("SELECT record, record_hash FROM locks ORDER BY seq")]
        export_review(ledger, db, out)
    finally:
        db.close()
    (out / "locks.json").write_text(canonical_json(locks) + "\n", encoding="utf-8")
    return hashed


def _export_tables(rd: RunDir, out: Path, publish: Publish) -> None:
    tables = out / "tables"
    tables.mkdir()
    answers = read_answers(rd.table("answers"))
    write_answers(tables / "answers.jsonl",
                  [type(a)(a.question_id, a.state, a.repeat, a.answer, a.doc_ids, None,
                           doc_hashes=a.doc_hashes, steps=_public_steps(a.steps, publish),
                           turn_answers=a.turn_answers)
                  for a in answers])
    labels_path = rd.table("labels")
    write_labels(tables / "labels.jsonl", read_labels(labels_path) if labels_path.exists() else [])
    gold_path = rd.table("gold")
    gold = read_gold(gold_path, "jsonl") if gold_path.exists() else {}
    (out / "gold.sha256.json").write_text(
        canonical_json({q: sha256_json(list(a)) for q, a in gold.items()}) + "\n",
        encoding="utf-8")


def _public_steps(steps: tuple[Step, ...] | None, publish: Publish
                  ) -> tuple[Step, ...] | None:
    """A row's steps as the artifact publishes them (as its ledger cell's)."""
    if not steps:
        return steps
    return parse_steps(publish({"steps": steps_record(steps)})["steps"])


def _protocol_json(rd: RunDir) -> dict[str, Any]:
    from snapaudit.run.record.protocol import bound_fields, load_protocol

    path = rd.protocol_path
    if not path.exists():
        return {}
    return sanitize(bound_fields(load_protocol(path)))  # type: ignore[no-any-return]


def export_artifact(run_dir: str | Path, out: str | Path) -> Path:
    """Write the sanitized artifact of ``run_dir`` into the new directory ``out``."""
    rd, dest = RunDir(run_dir, read_only=True), Path(out)
    results_path = rd.results_path
    if not results_path.exists():
        raise InputError("results.json not found; the run is not finished", path=str(rd.path))
    if dest.exists():
        raise InputError("artifact directory already exists; choose a new --out",
                         path=str(dest))
    if rd.has_ledger():
        with rd:
            rd.ledger()  # verifies every accepted cell before anything is written
    # written into a hidden folder next to ``out`` and renamed at the end: an interrupted
    # export leaves no artifact (only the hidden folder), never a partial one
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        _write_artifact(rd, partial)
        partial.rename(dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return dest


def _write_artifact(rd: RunDir, dest: Path) -> None:
    results_path = rd.results_path
    results = json.loads(results_path.read_text(encoding="utf-8"))
    norm = normalizer(str(results.get("comparison", {}).get("benchmark", "nq")))

    def publish(payload: Mapping[str, Any]) -> Mapping[str, Any]:
        return public_payload(payload, norm)

    hashed: dict[str, bool] = {}
    if rd.has_ledger():
        hashed = _export_ledger(rd.ledger_path, dest, publish)
    else:  # answers brought from elsewhere (`snapaudit analyze`): no ledger, no locks
        (dest / "locks.json").write_text("[]\n", encoding="utf-8")
    _export_tables(rd, dest, publish)
    shutil.copyfile(results_path, dest / "results.json")
    (dest / "claims.json").write_text(
        json.dumps(claims(results), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (dest / "protocol.json").write_text(canonical_json(_protocol_json(rd)) + "\n",
                                        encoding="utf-8")
    cohort_path = rd.cohort_path
    cohort = json.loads(cohort_path.read_text(encoding="utf-8")) if cohort_path.exists() else {}
    (dest / "cohort.json").write_text(canonical_json(sanitize(cohort)) + "\n", encoding="utf-8")
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    manifest = {"artifact_version": ARTIFACT_VERSION,
                "files": {f: sha256_file(dest / f) for f in files},
                "hashed_stages": sorted(s for s, h in hashed.items() if h),
                "sanitized_keys": sorted(SENSITIVE_KEYS)}
    # the manifest is written last: an artifact without one is an incomplete export
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                        encoding="utf-8")
