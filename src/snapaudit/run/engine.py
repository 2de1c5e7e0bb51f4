"""The stages of ``snapaudit run``, in order, ending in ``DIR/results.json``.

preflight (validate, select the cohort, build systems, reach endpoints; nothing written)
-> open or verify the run (protocol hash, resolved TOML, cohort manifest, lock chain)
-> retrieval lock (RetrievingSystem states only) -> answer lock -> semantic lock
-> gold unlock -> analysis. Each stage runs only if its lock is missing; see docs/engine.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapaudit import tables
from snapaudit.errors import (
    ConfigError,
    IntegrityError,
    LockError,
)
from snapaudit.hashing import sha256_file, sha256_json
from snapaudit.progress import Progress
from snapaudit.run import cohort
from snapaudit.run.answers import (
    TESTBED_MAX_BYTES,
    check_evaluable,
    effective_gate,
    max_answer_bytes,
    validate_answer,
)
from snapaudit.run.batch import run_stage
from snapaudit.run.batch_calls import BatchCalls, check_batch_mode
from snapaudit.run.context import RunContext
from snapaudit.run.interrupt import interruptible
from snapaudit.run.ledger import Ledger
from snapaudit.run.locks import (
    code_version,
    content_now,
    initialize_run,
    verify_chain,
    verify_run_files,
)
from snapaudit.run.preflight import needs_systems, preflight
from snapaudit.run.protocol import (
    Protocol,
    load_protocol,
    protocol_hash,
)
from snapaudit.run.rundir import RunDir
from snapaudit.run.runner import CellResult, CellTask, run_cells
from snapaudit.run.schedule import answer_schedule
from snapaudit.run.semantic import pair_labels, semantic_stage
from snapaudit.run.systems import build_system
from snapaudit.systems.base import AnswerCall, Evidence, RetrievingSystem, System
from snapaudit.tables import AnswerRow, GoldRow

if TYPE_CHECKING:
    from snapaudit.stats.analysis import AnalysisResult

MAX_ANSWER_BYTES = TESTBED_MAX_BYTES
BOOTSTRAP_METHOD = "whole-question bootstrap, snapaudit.stats.bootstrap"


@dataclass(frozen=True, slots=True)
class RunOutcome:
    results_path: Path
    results: dict[str, Any]
    analysis: AnalysisResult | None = None  # the typed results (None when read back)


# ---------------------------------------------------------------- entry points


def run_audit(protocol: Protocol, run_dir: Path | RunDir, *, base_dir: Path | None = None,
              progress: Progress, systems: Mapping[str, System] | None = None) -> RunOutcome:
    """Run every stage not yet locked, then the analysis; see the module docstring.

    ``systems`` (state -> System) replaces :func:`build_system` for callers that bring
    their own system objects; their ``spec()`` is hash-bound like any other.
    """
    rd = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    with interruptible() as run, rd:  # Ctrl-C: one clean stop, the ledger closed after it
        outcome: RunOutcome = run(_run_audit(protocol, rd, base_dir or Path.cwd(), progress,
                                             systems))
        return outcome


def reanalyze(run_dir: Path | RunDir, progress: Progress) -> RunOutcome:
    """Resume a run from its own resolved protocol (paths resolve against the folder the run
    was started from): every locked stage is kept; tables and results.json are rewritten,
    e.g. to include a judge audit's labels."""
    rd = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    with rd:
        return run_audit(rd.load_protocol(), rd, base_dir=rd.base_dir(), progress=progress)


def run_protocol_file(path: Path, run_dir: Path, overrides: Sequence[str],
                      progress: Progress) -> RunOutcome:
    """``snapaudit run``: relative paths in the protocol resolve against its folder."""
    protocol = load_protocol(path, overrides)
    return run_audit(protocol, run_dir, base_dir=Path(path).resolve().parent, progress=progress)


async def _run_audit(protocol: Protocol, rd: RunDir, base: Path, progress: Progress,
                     given: Mapping[str, System] | None) -> RunOutcome:
    check_evaluable(protocol)
    check_batch_mode(protocol)
    fresh = not rd.initialized()
    manifest = cohort.select(protocol.cohort, base) if fresh else None
    locked = set() if fresh else {str(rec["stage"]) for rec, _ in rd.ledger().locks()}
    build = given is None and needs_systems(locked)  # lazily: only for stages still open
    systems = dict(given) if given is not None else {
        s: build_system(protocol, s, rd.path, base) for s in protocol.states.order} \
        if build else {}
    if (given is not None or build) and sorted(systems) != sorted(protocol.states.order):
        raise ConfigError("systems must be given for exactly the states of states.order")
    try:
        await preflight(protocol, base, systems, locked)  # nothing written before it passes
        if fresh:
            assert manifest is not None
            initialize_run(protocol, rd, manifest, base)
        else:
            verify_run_files(rd, protocol)
        run = _open(protocol, rd, base, progress, systems)
        await _stages(run)
        return _analyze(run)
    finally:
        for system in systems.values():
            await system.aclose()


def _open(protocol: Protocol, rd: RunDir, base: Path, progress: Progress,
          systems: dict[str, System]) -> RunContext:
    ledger = rd.ledger()
    depends = {
        "protocol_sha256": protocol_hash(protocol),
        "cohort_sha256": str(ledger.get_meta("cohort_sha256")),
        "systems_sha256": _systems_hash(ledger, systems),
        "code_version": code_version(),
        "bootstrap_sha256": sha256_json({"method": BOOTSTRAP_METHOD,
                                         **protocol.bootstrap.model_dump(mode="json")}),
    }
    questions = cohort.read_manifest(rd.cohort_path)
    chain = verify_chain(ledger.locks(), content_now(ledger, protocol, base), depends)
    ledger.interrupt_unfinished()
    return RunContext(protocol, rd, base, progress, questions, systems, depends, chain)


def _systems_hash(ledger: Ledger, systems: Mapping[str, System]) -> str:
    """Of the systems' specs; with no system built (answers locked), the locks' own value."""
    if systems:
        return sha256_json({s: systems[s].spec() for s in sorted(systems)})
    for record, _ in ledger.locks():
        return str(record.get("depends", {}).get("systems_sha256", ""))
    return ""


# ---------------------------------------------------------------- stages


async def _stages(run: RunContext) -> None:
    evidence: dict[tuple[str, str], Evidence | None] = {}
    if any(isinstance(s, RetrievingSystem) for s in run.systems.values()):
        if not run.locked("retrieval"):
            await _retrieval_stage(run)
        evidence = locked_evidence(run.ledger)
    if not run.locked("answer"):
        await _answer_stage(run, evidence)
    answers = answer_rows(run.ledger, run.questions)
    run.rd.write_table("answers", tables.write_answers, answers)
    if not run.locked("semantic"):
        await semantic_stage(run, answers)
    run.rd.write_table("labels", tables.write_labels, pair_labels(run))
    gold = read_gold(run)
    if not run.locked("gold"):
        run.lock("gold", {"gold_sha256": sha256_file(cohort.resolve(run.protocol.gold.path,
                                                                    run.base_dir))})
    run.rd.write_table("gold", tables.write_gold, gold)  # rewritten: kill-safe


async def _retrieval_stage(run: RunContext) -> None:
    tasks: list[CellTask] = []
    for q in run.questions:
        for state, system in run.systems.items():
            if not isinstance(system, RetrievingSystem):
                continue
            for pass_no in (1, 2):
                tasks.append(CellTask(f"{q.question_id}|{state}|p{pass_no}",
                                      {"question_id": q.question_id, "state": state,
                                       "pass": pass_no},
                                      _retrieve_call(system, q, pass_no)))
    await run_cells(run.ledger, "retrieval", tasks, run.policy(False), run.progress)
    cells = {c.cell_key: c.payload for c in run.ledger.cells("retrieval")}
    bad = sorted(k[:-3] for k, p1 in cells.items()
                 if k.endswith("|p1") and cells.get(k[:-3] + "|p2") != p1)
    if bad:
        raise IntegrityError("retrieval is not reproducible (pass 1 != pass 2) for "
                             f"{len(bad)} cell(s): " + ", ".join(bad))
    run.lock("retrieval", run.ledger.content_hashes("retrieval"))


def _retrieve_call(system: RetrievingSystem, q: cohort.Question, pass_no: int) -> Any:
    async def call(attempt: int, seed: int) -> CellResult:
        # called on the event loop thread: retrievers need not be thread-safe
        ev = system.retrieve(q.question_id, q.question, pass_no)
        if ev is None:
            return CellResult({"evidence": None})
        return CellResult({"evidence": {"doc_ids": list(ev.doc_ids), "rendered": ev.rendered}})
    return call


def locked_evidence(ledger: Ledger) -> dict[tuple[str, str], Evidence | None]:
    out: dict[tuple[str, str], Evidence | None] = {}
    for cell in ledger.cells("retrieval"):
        qid, state, pass_no = cell.cell_key.rsplit("|", 2)
        if pass_no == "p1":
            ev = cell.payload["evidence"]
            out[(qid, state)] = None if ev is None else Evidence(tuple(ev["doc_ids"]),
                                                                 ev["rendered"])
    return out


async def _answer_stage(run: RunContext,
                        evidence: Mapping[tuple[str, str], Evidence | None]) -> None:
    text = {q.question_id: q.question for q in run.questions}
    tasks = []
    batch = BatchCalls(run.protocol)  # run.mode = "batch": provider batch APIs
    for sc in answer_schedule(list(text), run.protocol.states.order, run.protocol.design.repeats):
        key = f"{sc.question_id}|{sc.state}|{sc.repeat}"
        request = {"question_id": sc.question_id, "state": sc.state, "repeat": sc.repeat}
        args = (run.systems[sc.state], sc.question_id, text[sc.question_id], sc.state,
                sc.repeat, evidence.get((sc.question_id, sc.state)), max_answer_bytes(run.protocol))
        tasks.append(CellTask(key, request, _answer_call(*args), batch.answer(*args)))
    per_endpoint = run.protocol.system.kind == "http"
    await run_stage(run.ledger, "answer", tasks, run.policy(not per_endpoint), run.progress,
                    run.protocol.run)
    run.lock("answer", run.ledger.content_hashes("answer"))


def _answer_call(system: System, qid: str, question: str, state: str, repeat: int,
                 evidence: Evidence | None, max_bytes: int = TESTBED_MAX_BYTES) -> Any:
    async def call(attempt: int, seed: int) -> CellResult:
        out = await system.answer(AnswerCall(qid, question, state, repeat, attempt, seed,
                                             evidence))
        validate_answer(out.answer, max_bytes)
        doc_ids = list(out.doc_ids) if out.doc_ids is not None else None
        return CellResult({"answer": out.answer, "doc_ids": doc_ids}, dict(out.usage),
                          out.latency_s or None, dict(out.meta))
    return call


def answer_rows(ledger: Ledger, questions: Sequence[cohort.Question]) -> list[AnswerRow]:
    """Accepted answers as interchange rows, in cohort order, then state key, then repeat."""
    text = {q.question_id: q.question for q in questions}
    cluster = {q.question_id: q.cluster for q in questions}
    order = {q.question_id: i for i, q in enumerate(questions)}
    rows = []
    for cell in ledger.cells("answer"):
        qid, state, rep = cell.cell_key.rsplit("|", 2)
        ids = cell.payload.get("doc_ids")
        rows.append(AnswerRow(qid, state, int(rep), cell.payload["answer"],
                              tuple(ids) if ids is not None else None, text.get(qid),
                              cluster.get(qid)))
    return sorted(rows, key=lambda r: (order.get(r.question_id, -1), r.state, r.repeat))


def read_gold(run: RunContext) -> list[GoldRow]:
    """Gold of the cohort questions; LockError unless answer and semantic locks exist."""
    from snapaudit.tables import read_gold as read_table

    if not (run.locked("answer") and run.locked("semantic")):
        raise LockError("gold is readable only after the answer and semantic locks")
    cfg = run.protocol.gold
    table = read_table(cohort.resolve(cfg.path, run.base_dir), cfg.format)
    missing = [q.question_id for q in run.questions if q.question_id not in table]
    if missing:
        raise ConfigError(f"gold file {cfg.path} lacks {len(missing)} cohort question(s): "
                          + ", ".join(missing[:10]))
    return [GoldRow(q.question_id, tuple(table[q.question_id])) for q in run.questions]


def _analyze(run: RunContext) -> RunOutcome:
    from snapaudit.run.usage import usage_summary
    from snapaudit.stats.analysis import AnalysisConfig, analyze

    p = run.protocol
    gold = {g.question_id: g.answers for g in read_gold(run)}
    config = AnalysisConfig(
        old=p.states.old, new=p.states.new,
        ladder=tuple(p.states.order) if len(p.states.order) > 2 else None,
        states=tuple(p.states.order),
        benchmark=p.gold.benchmark, draws=p.bootstrap.draws, seed=p.bootstrap.seed,
        bootstrap=p.bootstrap.method,
        permutations=p.bootstrap.permutations, gate=effective_gate(p),
        primary_judge=p.judge.name if p.judge.kind != "none" else None)
    result = analyze(answer_rows(run.ledger, run.questions), config=config,
                     labels=pair_labels(run), gold=gold)
    results = result.to_json()
    results["usage"] = usage_summary(run.ledger, p)
    return RunOutcome(run.rd.write_results(results), results, result)
