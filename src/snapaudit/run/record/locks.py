"""Lock records and the lock chain.

A lock closes one stage (``retrieval``, ``answer``, ``semantic``, ``gold``, and after
them the optional ``attribution`` of ``snapaudit attribute``). A sequential design
(``[design] looks = K``) first records one ``look`` lock per look taken (its number, its
questions, the hash of the answers and labels it read and of its result), before them. It stores
``depends`` (hashes of everything the stage depended on: protocol, cohort manifest, system
specs, code version, bootstrap stream), ``content`` (hashes of what the stage accepted,
plus stage extras such as the gold file hash) and ``prev_hash``, the hash of the previous
lock. The record hash is the SHA-256 of the record's canonical JSON, so editing any earlier
row or lock breaks every later lock. :func:`verify_chain` is a pure function over stored
records and freshly computed hashes, reused by the artifact verifier.

A lock of ``schema_version`` 2 binds only what was accepted (each cell's key and payload
hash, ``accepted_sha256``, and ``n_cells``): a run killed and resumed, whose accepted
answers are those of an uninterrupted run, has the same lock hashes. How they were reached
(which attempt was accepted, ``cells_sha256``; every attempt row, ``attempts_sha256``,
``n_attempts``) is its ``history``, stored beside the record, outside its hash, and checked
against the ledger like ``content``. A version-1 lock (older runs) bound both in ``content``.

The second half binds a run directory: the protocol, ``protocol.resolved.toml`` and
``cohort.json`` are checked against what the ledger recorded when the run began.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from snapaudit import atomic
from snapaudit._model import Frozen
from snapaudit.errors import IntegrityError, ProtocolMismatchError
from snapaudit.hashing import canonical_json, sha256_file, sha256_json
from snapaudit.judge.registry import judge_kind
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.ledger.cells import Publish
from snapaudit.run.record.protocol import (
    Protocol,
    bound_fields,
    changed_fields,
    load_protocol,
    protocol_hash,
    to_toml,
)
from snapaudit.run.record.rundir import INITIALIZING_NAME, LEDGER_NAME, RunDir
from snapaudit.stats.normalize import normalizer
from snapaudit.tables.steps import public_payload

__all__ = ["LEDGER_NAME", "LockRecord", "content_now", "initialize_run", "make_lock",
           "verify_chain", "verify_run_files"]

LockStage = Literal["look", "retrieval", "answer", "semantic", "gold", "attribution"]
STAGE_ORDER: tuple[str, ...] = ("look", "retrieval", "answer", "semantic", "gold",
                                "attribution")
REPEATED = ("look",)  # stages locked once per look, in order


# content keys of the ledger (Ledger.content_hashes; attribution's carry a prefix): what a
# version-2 lock keeps beside its record, and what only a version-2 lock binds
HISTORY_KEYS = ("cells_sha256", "attempts_sha256", "n_attempts")
ACCEPTED_KEYS = ("accepted_sha256",)


def _is(key: str, names: Sequence[str]) -> bool:
    return any(key == n or key.endswith("_" + n) for n in names)


def split_content(content: Mapping[str, str], version: int = 2
                  ) -> tuple[dict[str, str], dict[str, str]]:
    """``(content, history)`` of a lock of ``version`` from a stage's full content hashes."""
    if version == 1:
        return {k: v for k, v in content.items() if not _is(k, ACCEPTED_KEYS)}, {}
    return ({k: v for k, v in content.items() if not _is(k, HISTORY_KEYS)},
            {k: v for k, v in content.items() if _is(k, HISTORY_KEYS)})


class LockRecord(Frozen):
    schema_version: Literal[1, 2] = 2
    seq: int
    stage: LockStage
    depends: dict[str, str]
    content: dict[str, str]
    prev_hash: str | None
    history: dict[str, str] | None = None  # version 2: beside the record, not in its hash

    @model_serializer(mode="wrap")
    def _no_empty_history(self, handler: SerializerFunctionWrapHandler,
                          info: SerializationInfo) -> Any:
        """A version-1 record is stored as it always was (no ``history`` key)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("history") is None:
            data.pop("history", None)
        return data


def record_hash(record: LockRecord) -> str:
    """SHA-256 of the record's canonical JSON, its ``history`` left out."""
    data = record.model_dump(mode="json")
    data.pop("history", None)
    return sha256_json(data)


def make_lock(
    stage: LockStage,
    depends: Mapping[str, str],
    content: Mapping[str, str],
    chain: Sequence[LockRecord],
) -> tuple[LockRecord, str]:
    """The next lock of ``chain`` and its hash (``content``: the stage's full content
    hashes; what was accepted goes into the record, how into its ``history``)."""
    if stage not in REPEATED and any(r.stage == stage for r in chain):
        raise IntegrityError(f"stage {stage} is already locked")
    prev = record_hash(chain[-1]) if chain else None
    bound, history = split_content(content)
    record = LockRecord(seq=len(chain) + 1, stage=stage, depends=dict(depends),
                        content=bound, prev_hash=prev, history=history or None)
    return record, record_hash(record)


def _diff(kind: str, stage: str, stored: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    keys = sorted(k for k in set(stored) | set(now) if stored.get(k) != now.get(k))
    return [f"{stage} lock: {kind} '{k}' changed" for k in keys]


def _content_problems(rec: LockRecord, now: Mapping[str, str]) -> list[str]:
    """``rec``'s content (and history) against the stage's content hashes now."""
    bound, history = split_content(now, rec.schema_version)
    return (_diff("ledger content", rec.stage, rec.content, bound)
            + _diff("attempt history", rec.stage, rec.history or {}, history))


def verify_chain(
    stored: Sequence[tuple[Mapping[str, Any], str]],
    content: Mapping[str, Mapping[str, str]] | None = None,
    depends: Mapping[str, str] | None = None,
) -> list[LockRecord]:
    """Check a chain of ``(record dict, stored hash)`` pairs; return the parsed records.

    Checks each record parses, its hash matches the stored hash, ``seq`` counts 1, 2, ...,
    ``prev_hash`` equals the previous record's hash, stages are in order, and, when given,
    that each lock's ``content`` and ``history`` equal those of ``content[stage]`` (the
    stage's content hashes recomputed from the ledger, :func:`split_content`) and its
    ``depends`` equals ``depends``. Raises IntegrityError listing every problem.
    """
    problems: list[str] = []
    records: list[LockRecord] = []
    prev: str | None = None
    last_order = -1
    for index, (raw, stored_hash) in enumerate(stored, start=1):
        try:
            rec = LockRecord.model_validate(dict(raw))
        except ValidationError as exc:
            problems.append(f"lock #{index} is malformed: {exc.errors()[0]['msg']}")
            break
        name = rec.stage
        actual = record_hash(rec)
        if actual != stored_hash:
            problems.append(f"{name} lock: record does not match its stored hash")
        if rec.seq != index:
            problems.append(f"{name} lock: sequence number {rec.seq}, expected {index}")
        if rec.prev_hash != prev:
            problems.append(f"{name} lock: chain broken (previous lock hash differs)")
        order = STAGE_ORDER.index(name)
        if order < last_order or (order == last_order and name not in REPEATED):
            problems.append(f"{name} lock: out of stage order")
        last_order = order
        key = content_key(rec)
        if content is not None and key in content:
            problems += _content_problems(rec, content[key])
        if depends is not None:
            problems += _diff("dependency", name, rec.depends, depends)
        records.append(rec)
        prev = actual
    if problems:
        raise IntegrityError("integrity check failed:\n  " + "\n  ".join(problems))
    return records


def content_key(record: LockRecord) -> str:
    """The key of ``verify_chain``'s ``content`` for a lock: its stage, ``look:K`` for
    the lock of look K."""
    if record.stage == "look":
        return f"look:{record.content.get('look', '?')}"
    return record.stage


# ---------------------------------------------------------------- binding of a run directory


def code_version() -> str:
    try:
        return f"snapaudit {version('snapaudit')}"
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        return "snapaudit unknown"


def write_resolved(rd: RunDir, protocol: Protocol) -> None:
    """Write ``protocol.resolved.toml`` atomically (a kill never leaves half a file)."""
    atomic.write_text(rd.protocol_path, to_toml(protocol))


def initialize_run(protocol: Protocol, rd: RunDir, manifest: dict[str, Any],
                   base_dir: Path) -> None:
    """Write the run's first files, then record in one ledger transaction that it began.

    ``.initializing`` marks the files as not yet recorded: a kill before the ledger records
    them leaves a folder that the next run initialises again; once recorded, the files say
    the run began, and a ledger that lost that record is an IntegrityError, never a restart.
    """
    ledger = rd.ledger()  # the folder's lock first; creates the ledger
    if ledger.get_meta("protocol_sha256") is not None:  # another run began it meanwhile
        raise IntegrityError(f"{rd.path}: another snapaudit run began this run directory "
                             "meanwhile; nothing was changed: re-run to resume it")
    marker = rd.path / INITIALIZING_NAME
    atomic.write_text(marker, "")
    cohort_hash = cohort.write_manifest(rd.cohort_path, manifest)
    write_resolved(rd, protocol)
    ledger.begin_run({"protocol_bound": canonical_json(bound_fields(protocol)),
                      "cohort_sha256": cohort_hash,
                      "base_dir": str(base_dir.resolve()),
                      "protocol_sha256": protocol_hash(protocol)})
    marker.unlink()


def verify_run_files(rd: RunDir, protocol: Protocol | None = None) -> None:
    """Protocol (given and resolved file) and cohort manifest against the ledger's record."""
    ledger = rd.ledger()
    stored_hash = ledger.get_meta("protocol_sha256")
    stored = json.loads(ledger.get_meta("protocol_bound") or "{}")
    cohort_hash = ledger.get_meta("cohort_sha256")
    if sha256_json(stored) != stored_hash:
        raise IntegrityError("ledger meta: the recorded protocol does not match its hash")
    if protocol is not None and protocol_hash(protocol) != stored_hash:
        raise ProtocolMismatchError(changed_fields(stored, bound_fields(protocol)))
    try:
        on_disk = load_protocol(rd.protocol_path)
    except Exception as exc:
        raise IntegrityError(f"protocol.resolved.toml changed: {exc}") from None
    if protocol_hash(on_disk) != stored_hash:
        fields = ", ".join(changed_fields(stored, bound_fields(on_disk)))
        raise IntegrityError(f"protocol.resolved.toml changed after the run began: {fields}")
    manifest = rd.cohort_path
    if not manifest.exists() or sha256_file(manifest) != cohort_hash:
        raise IntegrityError("cohort.json changed since the run began")
    if protocol is not None:
        write_resolved(rd, protocol)  # [run] knobs may differ


def content_now(ledger: Ledger, protocol: Protocol, base: Path) -> dict[str, dict[str, str]]:
    """What each lock's ``content`` must equal now, recomputed from the ledger and files."""
    semantic = {"judge_kind": protocol.judge.kind,
                **ledger.content_hashes(f"judge:{protocol.judge.name}")}
    gold_path = cohort.resolve(protocol.gold.path, base)
    gold = {"gold_sha256": sha256_file(gold_path) if gold_path.exists() else "missing"}
    return {"retrieval": ledger.content_hashes("retrieval"),
            "answer": ledger.content_hashes("answer", answer_publisher(protocol)),
            "semantic": semantic, "gold": gold,
            "attribution": attribution_content(ledger, protocol)}


def answer_publisher(protocol: Protocol) -> Publish:
    """How an artifact publishes the answer cells of ``protocol``'s run: steps' texts hashed
    under the benchmark's normalization (:func:`snapaudit.tables.steps.public_payload`); the
    answer lock binds those published cells too when they differ."""
    norm = normalizer(protocol.gold.benchmark)
    return lambda payload: public_payload(payload, norm)


def attribution_content(ledger: Ledger, protocol: Protocol) -> dict[str, str]:
    """What the ``attribution`` lock binds: its answer cells and, with a judge, its
    ``attribution:judge:<name>`` cells (``snapaudit attribute``)."""
    content = {f"answers_{k}": v for k, v in ledger.content_hashes("attribution").items()}
    if judge_kind(protocol.judge.kind).packets:
        stage = f"attribution:judge:{protocol.judge.name}"
        content |= {f"judge_{k}": v for k, v in ledger.content_hashes(stage).items()}
    return content


