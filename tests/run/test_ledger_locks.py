"""The ledger's immutability rules and the pure lock-chain check."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from snapaudit.errors import IntegrityError
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.locks import make_lock, record_hash, verify_chain


def test_attempt_is_durable_before_the_call_and_cells_are_accepted_once(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    with Ledger(db) as ledger:
        a1 = ledger.begin_attempt("answer", "q|s|1", "h")
        # a second connection sees the attempt before any outcome exists
        with contextlib.closing(sqlite3.connect(db)) as other:
            assert other.execute("SELECT attempt_no, outcome FROM attempts").fetchall() == [
                (1, None)]
        ledger.finish_attempt(a1, "transport_invalid", reason="http_500")
        a2 = ledger.begin_attempt("answer", "q|s|1", "h")
        assert ledger.attempt_no(a2) == 2
        ledger.finish_and_accept("answer", "q|s|1", a2, {"answer": "x"}, latency_s=0.1)
        with pytest.raises(IntegrityError, match="already accepted"):
            ledger.begin_attempt("answer", "q|s|1", "h")
        with pytest.raises(IntegrityError, match="immutable"):
            ledger.accept("answer", "q|s|1", a2, {"answer": "y"})
        with pytest.raises(IntegrityError, match="written once"):
            ledger.finish_attempt(a1, "accepted")
        assert [c.payload for c in ledger.cells("answer")] == [{"answer": "x"}]
        assert ledger.outcome_counts() == {"answer": {"accepted": 1, "transport_invalid": 1}}
    with contextlib.closing(sqlite3.connect(db)) as con:
        for stmt in ("UPDATE cells SET payload='{}'", "DELETE FROM cells",
                     "DELETE FROM attempts"):
            with pytest.raises(sqlite3.DatabaseError):
                con.execute(stmt)
        assert con.execute("SELECT version, name FROM migrations").fetchall() == [
            (1, "initial schema"),
            (2, "attempt meta (model, finish reason, controls left to the provider)"),
            (3, "provider batches (run.mode = 'batch'): a batch and the attempts it carries")]
        assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_unfinished_attempts_become_interrupted(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as ledger:
        ledger.begin_attempt("answer", "k", "h")
    with Ledger(tmp_path / "l.sqlite") as ledger:
        assert ledger.interrupt_unfinished() == 1
        assert [a.outcome for a in ledger.attempts()] == ["interrupted"]


def _chain() -> list[tuple[dict[str, object], str]]:
    dep = {"protocol_sha256": "p"}
    r1, h1 = make_lock("answer", dep, {"cells_sha256": "a"}, [])
    r2, h2 = make_lock("semantic", dep, {"cells_sha256": "b"}, [r1])
    r3, h3 = make_lock("gold", dep, {"gold_sha256": "g"}, [r1, r2])
    return [(r.model_dump(mode="json"), h) for r, h in ((r1, h1), (r2, h2), (r3, h3))]


def test_verify_chain_accepts_an_intact_chain() -> None:
    chain = _chain()
    records = verify_chain(chain, {"answer": {"cells_sha256": "a"}}, {"protocol_sha256": "p"})
    assert [r.stage for r in records] == ["answer", "semantic", "gold"]
    assert records[1].prev_hash == record_hash(records[0])


def test_verify_chain_names_every_problem() -> None:
    chain = _chain()
    forged = dict(chain[0][0])
    forged["content"] = {"cells_sha256": "z"}
    chain[0] = (forged, chain[0][1])
    with pytest.raises(IntegrityError) as info:
        verify_chain(chain, {"answer": {"cells_sha256": "a"}}, {"protocol_sha256": "q"})
    text = str(info.value)
    assert "answer lock: record does not match its stored hash" in text
    assert "answer lock: ledger content 'cells_sha256' changed" in text
    assert "semantic lock: chain broken" in text
    assert "gold lock: dependency 'protocol_sha256' changed" in text


def test_verify_chain_refuses_reordered_locks() -> None:
    chain = _chain()
    with pytest.raises(IntegrityError, match="sequence number"):
        verify_chain([chain[1], chain[0], chain[2]])


def test_a_lock_binds_what_was_accepted_and_keeps_its_history_beside_it() -> None:
    from snapaudit.hashing import sha256_json
    from snapaudit.run.record.locks import LockRecord

    dep = {"protocol_sha256": "p"}
    full = {"accepted_sha256": "acc", "cells_sha256": "c", "n_cells": "2",
            "attempts_sha256": "t", "n_attempts": "3"}
    record, digest = make_lock("answer", dep, full, [])
    assert record.content == {"accepted_sha256": "acc", "n_cells": "2"}
    assert record.history == {"cells_sha256": "c", "attempts_sha256": "t", "n_attempts": "3"}
    # the same cells accepted after other attempts (a resumed run): the same lock hash
    resumed = {**full, "cells_sha256": "c2", "attempts_sha256": "t2", "n_attempts": "5"}
    assert make_lock("answer", dep, resumed, [])[1] == digest
    stored = [(record.model_dump(mode="json"), digest)]
    assert verify_chain(stored, {"answer": full})[0].history == record.history
    with pytest.raises(IntegrityError, match="answer lock: attempt history 'n_attempts'"):
        verify_chain(stored, {"answer": {**full, "n_attempts": "4"}})
    # a version-1 lock (an older run) bound both in content, hashed as stored, and verifies
    old = {"schema_version": 1, "seq": 1, "stage": "answer", "depends": dep, "prev_hash": None,
           "content": {k: full[k] for k in ("cells_sha256", "n_cells", "attempts_sha256",
                                             "n_attempts")}}
    assert record_hash(LockRecord.model_validate(old)) == sha256_json(old)
    assert verify_chain([(old, sha256_json(old))], {"answer": full})[0].schema_version == 1
    with pytest.raises(IntegrityError, match="ledger content 'attempts_sha256'"):
        verify_chain([(old, sha256_json(old))], {"answer": resumed})
