"""``snapaudit verify ARTIFACT [--gold FILE]``: recompute an artifact's claims, no network.

Checks, in order: every file the manifest lists is present with its hash; the lock chain
(:func:`snapaudit.run.record.locks.verify_chain`) with each lock's ledger content recomputed
from the exported cells and attempts (stages whose payloads were sanitized are checked by
count only); the answer and label tables equal what the ledger cells say; then every claim
that does not need gold is recomputed with the analysis core on the sanitized tables, the
review's decisions and human labels too (:mod:`snapaudit.artifact.review_check`). With
``--gold`` the gold file must match the gold lock and the gold claims are recomputed too. An
attributed run's ``attribution`` lock is recomputed from its exported cells and its table from
the locked labels (:mod:`snapaudit.artifact.attribution`).
Any failure raises :class:`VerificationError` (exit 3) naming each claim or file.

Before any of that the artifact's layout is checked without opening anything
(:mod:`snapaudit.artifact.safety`): symbolic links, special files, names outside the name
rule, manifest entries that are absolute or contain ``..``, a judge name in
``protocol.json`` or a stage in ``locks.json`` that could name a path are refused; every
JSON file is decoded with a depth limit; a malformed artifact is exit 3 with a message,
never a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapaudit.artifact import attribution
from snapaudit.artifact.attribution import judge_of
from snapaudit.artifact.export import SENSITIVE_KEYS
from snapaudit.artifact.export import claims as claims_of
from snapaudit.artifact.looks import check_looks
from snapaudit.artifact.review_check import check_review
from snapaudit.artifact.safety import (
    check_tree,
    entry_path,
    entry_problem,
    load_json,
    load_jsonl,
    stage_content,
)
from snapaudit.artifact.tables_check import check_tables
from snapaudit.errors import ConfigError, InputError, IntegrityError, VerificationError
from snapaudit.hashing import sha256_file, sha256_json
from snapaudit.names import NAME_RULE, is_name
from snapaudit.results import RunResults, results_from_json
from snapaudit.tables import AnswerRow, PairLabel, read_answers, read_gold, read_labels

if TYPE_CHECKING:
    pass


@dataclass
class VerifyReport:
    checked: int = 0
    skipped: list[str] = field(default_factory=list)  # gold claims without --gold
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_files(root: Path, present: list[str], report: VerifyReport) -> dict[str, Any]:
    manifest: dict[str, Any] = load_json(root, "manifest.json")
    listed = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(listed, dict) or not all(isinstance(d, str) for d in listed.values()):
        raise VerificationError(["file manifest.json: no 'files' table of names and hashes"])
    unsafe = [p for p in (entry_problem(root, name) for name in sorted(listed)) if p]
    if unsafe:  # refused before any listed file is opened
        raise VerificationError(unsafe)
    for name, digest in sorted(listed.items()):
        path = entry_path(root, name)
        if not path.is_file():
            report.failures.append(f"file {name}: missing")
        elif sha256_file(path) != digest:
            report.failures.append(f"file {name}: content differs from the manifest")
    extra = [name for name in present if name != "manifest.json" and name not in listed]
    report.failures += [f"file {name}: not listed in the manifest" for name in extra]
    if not report.failures:
        for name in sorted(listed):  # every JSON file decodes within the depth limit
            if name.endswith(".jsonl"):
                load_jsonl(root, name)
            elif name.endswith(".json"):
                load_json(root, name)
    return manifest


def judge_name(protocol: Any) -> str:
    """The judge name of ``protocol.json``, refused unless it follows the name rule."""
    judge = protocol.get("judge") if isinstance(protocol, dict) else None
    name = (judge or {}).get("name", "judge") if isinstance(judge, dict | None) else None
    if not is_name(name):
        raise VerificationError([f"file protocol.json: judge name {name!r} {NAME_RULE}"])
    return str(name)


def _has_marker(value: Any, key: str | None = None) -> bool:
    if isinstance(value, dict):
        if key in SENSITIVE_KEYS and set(value) == {"sha256"}:
            return True
        return any(_has_marker(v, k) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_marker(v, key) for v in value)
    return False


def _sanitized_stage(root: Path, stage: str) -> bool:
    """Whether the exported cells of ``stage`` carry hashes in place of text (decided from
    the cells themselves, never from the manifest's say-so)."""
    if stage == "answer":  # answers are published whole; their lock is always recomputed
        return False
    name = stage.replace(":", "_")
    return any(_has_marker(c.get("payload"))
               for c in load_jsonl(root, f"ledger/{name}.cells.jsonl"))


def check_locks(root: Path, protocol: dict[str, Any],
                gold: Path | None, report: VerifyReport) -> None:
    from snapaudit.run.record.locks import STAGE_ORDER, verify_chain

    stored = [(rec, h) for rec, h in load_json(root, "locks.json")]
    odd = [rec.get("stage") for rec, _ in stored if rec.get("stage") not in STAGE_ORDER]
    if odd:  # refused before any stage's ledger file is read
        raise VerificationError([f"file locks.json: stage {s!r} is not one of "
                                 f"{', '.join(STAGE_ORDER)}" for s in odd])
    judge = protocol.get("judge", {})
    judge_stage = f"judge:{judge_name(protocol)}"
    content: dict[str, dict[str, str]] = {}
    for rec, _ in stored:
        stage = rec.get("stage")
        ledger_stage = judge_stage if stage == "semantic" else stage
        if stage == "attribution":  # snapaudit attribute: its answer and judge cells
            content["attribution"] = attribution.lock_content(root, protocol, stage_content)
            continue
        if stage == "gold":
            if gold is not None:
                content["gold"] = {"gold_sha256": sha256_file(gold)}
            continue
        now = stage_content(root, str(ledger_stage))
        if stage == "semantic":
            now = {"judge_kind": str(judge.get("kind")), **now}
        stated = {**rec.get("content", {}), **(rec.get("history") or {})}
        if stage == "answer" and "public_cells_sha256" in stated:
            now = _published(stated, now)
            report.notes.append("answer lock: steps are published hashed; checked through "
                                "the lock's hashes of the published cells and attempts")
        if _sanitized_stage(root, str(ledger_stage)):
            report.notes.append(f"{stage} lock: payloads are sanitized; checked cell count only")
            if rec.get("content", {}).get("n_cells") != now["n_cells"]:
                report.failures.append(f"{stage} lock: number of cells differs")
            continue
        content[str(stage)] = now
    try:
        verify_chain(stored, content)
    except IntegrityError as exc:
        report.failures += [f"locks: {line.strip()}" for line in str(exc).splitlines()[1:]]


def _published(stated: dict[str, str], now: dict[str, str]) -> dict[str, str]:
    """The answer lock's content and history as the artifact can recompute them: the
    exported cells and attempts are the published ones (their hashes are the lock's
    ``public_*`` hashes); the hashes of the unpublished text are taken as stated."""
    return {**stated, "public_cells_sha256": now["cells_sha256"], "n_cells": now["n_cells"],
            "public_attempts_sha256": now["attempts_sha256"], "n_attempts": now["n_attempts"],
            **({"public_accepted_sha256": now["accepted_sha256"]}
               if "public_accepted_sha256" in stated else {})}


def recompute(results: RunResults, protocol: dict[str, Any], answers: Sequence[AnswerRow],
              labels: list[PairLabel], gold: dict[str, tuple[str, ...]] | None
              ) -> RunResults:
    """The analysis re-run with the settings ``results`` states (and the corpus paths, when
    it states them); the other sections are the caller's."""
    from snapaudit.stats.analysis import AnalysisConfig, analyze
    from snapaudit.stats.gate import GateConfig, GateRule

    stated = results.analysis
    comp = stated.comparison
    rules = tuple(GateRule(kernel=r.kernel, statistic=r.statistic, op=r.op,  # type: ignore[arg-type]
                           threshold=r.threshold) for r in stated.gate.rules)
    semantic = stated.kernels.get("semantic")
    distribution = stated.secondary.distribution
    seq = stated.sequential
    config = AnalysisConfig(old=comp.old, new=comp.new,
                            ladder=stated.ladder.states if stated.ladder else None,
                            states=comp.states or None,
                            benchmark=comp.benchmark, draws=comp.draws,  # type: ignore[arg-type]
                            seed=comp.seed,
                            gate=GateConfig(rules=rules or None,
                                            margin_pp=stated.gate.margin_pp),
                            looks=seq.looks_planned if seq else 1,
                            planned_questions=seq.questions_planned if seq else None,
                            primary_judge=semantic.judge if semantic else None,
                            bootstrap=comp.bootstrap,  # type: ignore[arg-type]
                            permutations=distribution.permutations if distribution else 0)
    again = RunResults(analyze(answers, config=config, labels=labels, gold=gold))
    if results.paths is not None:  # [testbed.paths]: recomputed from the same tables
        from snapaudit.run.analysis.paths import paths_document

        orders = results.paths.orders
        again = again.with_sections(paths=paths_document(
            protocol, answers, labels, len(orders[0]) if orders else None))
    return again


def same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return bool(a == b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        try:
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
        except OverflowError:  # an integer too large for a float
            return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_claims(stated: list[dict[str, Any]], recomputed: dict[str, Any], with_gold: bool,
                 report: VerifyReport) -> None:
    got = {c["claim"]: c["value"] for c in claims_of(recomputed)}
    for claim in stated:
        name = claim["claim"]
        if claim["needs_gold"] and not with_gold:
            report.skipped.append(name)
            continue
        report.checked += 1
        if name not in got:
            report.failures.append(f"claim {name}: not reproduced (absent from recomputation)")
        elif not same(claim["value"], got[name]):
            report.failures.append(f"claim {name}: stated {claim['value']!r}, recomputed "
                                   f"{got[name]!r}")


_MALFORMED = (KeyError, TypeError, AttributeError, IndexError, ValueError, OverflowError,
              RecursionError)


def verify_artifact(artifact: str | Path, gold: str | Path | None = None) -> VerifyReport:
    """Verify an artifact; raise VerificationError listing every failure."""
    try:
        return _verify(Path(artifact), gold)
    except _MALFORMED as exc:  # a hostile or damaged artifact: a message, not a traceback
        raise VerificationError([f"artifact is malformed ({type(exc).__name__}: "
                                 f"{str(exc)[:200]})"]) from None


def _verify(root: Path, gold: str | Path | None) -> VerifyReport:
    report = VerifyReport()
    if not root.is_dir():
        raise VerificationError([f"artifact {root}: not a directory"])
    if not (root / "manifest.json").is_file() and _is_run_dir(root):
        raise ConfigError(f"{root} is a run directory, not an artifact; export it first: "
                          f"snapaudit export {root} --out ARTIFACT, then snapaudit verify "
                          "ARTIFACT")
    present = check_tree(root)
    if "manifest.json" not in present:
        raise InputError("incomplete export (missing manifest.json, which export writes "
                         "last): the export was interrupted; export the run again",
                         path=str(root))
    check_files(root, present, report)
    if report.failures:
        raise VerificationError(report.failures)
    protocol = load_json(root, "protocol.json")
    judge_name(protocol)
    lineage = protocol.get("lineage")
    if isinstance(lineage, dict):
        report.notes.append(f"lineage: re-judged from run {lineage.get('parent_run')} (answer "
                            f"lock {str(lineage.get('parent_answer_lock_sha256'))[:16]}, "
                            f"protocol {str(lineage.get('parent_protocol_sha256'))[:16]})")
    gold_path = Path(gold) if gold is not None else None
    check_locks(root, protocol, gold_path, report)
    answers = read_answers(entry_path(root, "tables/answers.jsonl"))
    labels = list(read_labels(entry_path(root, "tables/labels.jsonl"), answers))
    check_tables(root, answers, labels, report.failures, report.notes)
    gold_table = _gold(root, gold_path, protocol, report) if gold_path is not None else None
    results = load_json(root, "results.json")
    stated = load_json(root, "claims.json")
    if {c["claim"]: c["value"] for c in stated} != {c["claim"]: c["value"]
                                                     for c in claims_of(results)}:
        report.failures.append("claims.json: differs from the claims of results.json")
    record = results_from_json(results)
    again = recompute(record, protocol, answers, labels, gold_table)
    if record.attribution is not None:  # snapaudit attribute: recomputed from its locked rows
        if not any(rec.get("stage") == "attribution" for rec, _ in load_json(root, "locks.json")):
            report.failures.append("attribution: results.json has a section but no lock")
        else:
            section = attribution.recompute_section(root, protocol, answers, labels,
                                                    record.attribution)
            report.failures += attribution.table_failures(record.attribution.to_json(),
                                                          section.to_json())
            again = again.with_sections(attribution=section)
    check_looks(root, answers, labels, judge_of(protocol, packets=False),
                again.analysis.sequential, report.failures)
    review, human = check_review(root, record, answers, labels, report.failures)
    again = again.with_sections(review=review, human=human)
    check_claims(stated, again.to_json(), gold_table is not None, report)
    if report.failures:
        raise VerificationError(report.failures)
    return report


def _is_run_dir(root: Path) -> bool:
    from snapaudit.run.record.rundir import LEDGER_NAME, PROTOCOL_NAME

    return (root / LEDGER_NAME).is_file() or (root / PROTOCOL_NAME).is_file()


def _gold(root: Path, path: Path, protocol: dict[str, Any],
          report: VerifyReport) -> dict[str, tuple[str, ...]]:
    fmt = str((protocol.get("gold") or {}).get("format", "auto"))
    table = read_gold(path, fmt if fmt in ("jsonl", "nq-open", "triviaqa-dpr") else "auto")
    expected = load_json(root, "gold.sha256.json")
    for qid, digest in sorted(expected.items()):
        if sha256_json(list(table.get(qid, ()))) != digest:
            report.failures.append(f"gold: aliases of {qid} differ from the artifact's hash")
    return {q: table[q] for q in expected if q in table}
