"""Outcome-blind question selection and its frozen manifest (``DIR/cohort.json``).

Candidates are read from the source (ids and question text only; gold aliases are never
read here), ordered by ``SHA-256("snapaudit-cohort-v1|{seed}|{id}")`` (hex digest, ties
impossible in practice, broken by id), excluded ids are dropped, and the first ``size``
are taken. Ids: the 0-based line of an NQ-open JSONL file, the 0-based row of the DPR
TriviaQA TSV, or the ``id_field`` of a generic JSONL/CSV file. A generic JSONL question may
be a conversation: its ``turns`` (a list of user turns, answered in order within one call;
:mod:`snapaudit.tables.turns`) are kept in the manifest beside the ``question`` (its
identifying text) and bound by their own hash.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapaudit import atomic
from snapaudit.errors import InputError, IntegrityError
from snapaudit.hashing import canonical_json, sha256_file, sha256_json, sha256_text
from snapaudit.run.record.protocol import CohortConfig
from snapaudit.tables.turns import TurnsError, parse_texts

MANIFEST_VERSION = 1
KEY_TEMPLATE = "snapaudit-cohort-v1|{seed}|{id}"


@dataclass(frozen=True, slots=True)
class Question:
    question_id: str
    question: str
    cluster: str | None = None
    # a conversation's user turns, in order (a JSONL source's ``turns``); None: one question
    turns: tuple[str, ...] | None = None


def conversations(questions: Sequence[Question]) -> dict[str, tuple[str, ...]]:
    """The user turns of each conversation among ``questions``."""
    return {q.question_id: q.turns for q in questions if q.turns is not None}


def cohort_key(seed: int, question_id: str) -> str:
    text = KEY_TEMPLATE.format(seed=seed, id=question_id)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of a UTF-8 file; a leading BOM is dropped and a byte
    that is not UTF-8 is an error naming the file and line."""
    if not path.is_file():
        raise InputError("cohort source not found", path=str(path))
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start} of the "
                                 "line)", path=str(path), line=number) from None
            yield number, text.removeprefix("\ufeff") if number == 1 else text


def _jsonl(path: Path, cfg: CohortConfig, nq: bool) -> Iterator[Question]:
    index = 0
    for number, line in _read_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", path=str(path), line=number) from None
        qfield = "question" if nq else cfg.question_field
        if not isinstance(obj, dict) or not isinstance(obj.get(qfield), str):
            raise InputError(f"missing string field {qfield!r}", path=str(path), line=number)
        qid = str(index) if nq else obj.get(cfg.id_field)
        if not nq and not isinstance(qid, str | int):
            raise InputError(f"missing id field {cfg.id_field!r}", path=str(path), line=number)
        yield Question(str(qid), obj[qfield], _cluster(obj, cfg, path, number),
                       _turns(obj, path, number))
        index += 1


def _turns(obj: dict[str, Any], path: Path, number: int) -> tuple[str, ...] | None:
    """The ``turns`` of a JSONL question (a conversation), checked and bounded."""
    if obj.get("turns") is None:
        return None
    try:
        return parse_texts(obj["turns"], "turns")
    except TurnsError as exc:
        raise InputError(str(exc), path=str(path), line=number) from None


def _tsv_triviaqa(path: Path) -> Iterator[Question]:
    for row_no, (number, line) in enumerate(_read_lines(path)):
        cells = next(csv.reader([line.rstrip("\r\n")], delimiter="\t"), [])
        if len(cells) < 1 or not cells[0]:
            raise InputError("empty question", path=str(path), line=number)
        yield Question(str(row_no), cells[0])


def _csv(path: Path, cfg: CohortConfig) -> Iterator[Question]:
    if not path.is_file():
        raise InputError("cohort source not found", path=str(path))
    lines = [text for _, text in _read_lines(path)]  # UTF-8 checked line by line, BOM dropped
    reader = csv.DictReader(lines)
    for field in (cfg.id_field, cfg.question_field, *_optional(cfg.cluster_field)):
        if reader.fieldnames is None or field not in reader.fieldnames:
            raise InputError(f"CSV header lacks column {field!r}", path=str(path), line=1)
    for row in reader:
        yield Question(str(row[cfg.id_field]), str(row[cfg.question_field]),
                       str(row[cfg.cluster_field]) if cfg.cluster_field else None)


def _optional(name: str | None) -> tuple[str, ...]:
    return (name,) if name else ()


def _cluster(obj: dict[str, Any], cfg: CohortConfig, path: Path, number: int) -> str | None:
    """The ``cluster_field`` of a JSONL question (a string or integer), when configured."""
    if cfg.cluster_field is None:
        return None
    value = obj.get(cfg.cluster_field)
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise InputError(f"missing cluster field {cfg.cluster_field!r}", path=str(path),
                         line=number)
    return str(value)


def read_candidates(cfg: CohortConfig, base: Path) -> list[Question]:
    """All candidate questions of the source, ids unique."""
    path = resolve(cfg.path, base)
    if cfg.cluster_field is not None and cfg.source in ("nq-open", "triviaqa-dpr"):
        raise InputError(f"cluster_field needs a jsonl or csv cohort source, not {cfg.source}",
                         path=str(path))
    if cfg.source == "nq-open":
        items = list(_jsonl(path, cfg, nq=True))
    elif cfg.source == "jsonl":
        items = list(_jsonl(path, cfg, nq=False))
    elif cfg.source == "triviaqa-dpr":
        items = list(_tsv_triviaqa(path))
    else:
        items = list(_csv(path, cfg))
    seen: set[str] = set()
    for q in items:
        if q.question_id in seen:
            raise InputError(f"duplicate question id {q.question_id!r}", path=str(path))
        seen.add(q.question_id)
    return items


def read_exclusions(path: Path) -> set[str]:
    """One id per line; blank lines and lines starting with '#' are ignored."""
    ids: set[str] = set()
    for _, line in _read_lines(path):
        text = line.strip()
        if text and not text.startswith("#"):
            ids.add(text)
    return ids


def resolve(path: str, base: Path) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else base / p


def select(cfg: CohortConfig, base: Path) -> dict[str, Any]:
    """Build the cohort manifest (a JSON-ready dict); InputError if the source is too small."""
    candidates = read_candidates(cfg, base)
    excluded = read_exclusions(resolve(cfg.exclude, base)) if cfg.exclude else set()
    pool = [q for q in candidates if q.question_id not in excluded]
    if cfg.size > len(pool):
        raise InputError(
            f"cohort size {cfg.size} is larger than the {len(pool)} eligible questions "
            f"({len(candidates)} in the source, {len(candidates) - len(pool)} excluded)",
            path=str(resolve(cfg.path, base)),
        )
    pool.sort(key=lambda q: (cohort_key(cfg.seed, q.question_id), q.question_id))
    chosen = pool[: cfg.size]
    return {
        "schema_version": MANIFEST_VERSION,
        "key": KEY_TEMPLATE,
        "source": cfg.source,
        "source_sha256": sha256_file(resolve(cfg.path, base)),
        "seed": cfg.seed,
        "size": cfg.size,
        "n_candidates": len(candidates),
        "n_excluded": len(candidates) - len(pool),
        "exclude_sha256": sha256_file(resolve(cfg.exclude, base)) if cfg.exclude else None,
        "questions": [
            {"question_id": q.question_id, "question": q.question,
             "question_sha256": sha256_text(q.question),
             **({"cluster": q.cluster} if q.cluster is not None else {}),
             **({"turns": list(q.turns), "turns_sha256": sha256_json(list(q.turns))}
                if q.turns is not None else {})}
            for q in chosen
        ],
    }


def write_manifest(path: Path, manifest: dict[str, Any]) -> str:
    """Write the manifest (canonical JSON + newline) atomically; return its SHA-256."""
    atomic.write_text(path, canonical_json(manifest) + "\n")
    return sha256_file(path)


def read_manifest(path: Path) -> list[Question]:
    """Questions of a manifest, each text checked against its recorded hash."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["questions"]
        out = [Question(str(r["question_id"]), str(r["question"]),
                        str(r["cluster"]) if r.get("cluster") is not None else None,
                        tuple(map(str, r["turns"])) if r.get("turns") is not None else None)
               for r in rows]
        hashes = [str(r["question_sha256"]) for r in rows]
        turn_hashes = [r.get("turns_sha256") for r in rows]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IntegrityError(f"{path.name} is unreadable or malformed: {exc}") from None
    for q, h, t in zip(out, hashes, turn_hashes, strict=True):
        if sha256_text(q.question) != h:
            raise IntegrityError(f"{path.name}: question {q.question_id} text changed")
        if (None if q.turns is None else sha256_json(list(q.turns))) != t:
            raise IntegrityError(f"{path.name}: question {q.question_id} turns changed")
    return out
