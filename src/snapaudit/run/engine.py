"""The stages of ``snapaudit run``, in order, ending in ``DIR/results.json``.

preflight (validate, select the cohort, build systems, reach endpoints; nothing written)
-> open or verify the run (protocol hash, resolved TOML, cohort manifest, lock chain)
-> retrieval lock (RetrievingSystem states only) -> answer lock -> semantic lock
-> gold unlock -> analysis. Each stage runs only if its lock is missing; see docs/engine.md.
The stages themselves (their cells, payloads and the executor) are :mod:`snapaudit.run.stages`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapaudit import tables
from snapaudit.errors import ConfigError, LockError
from snapaudit.hashing import sha256_file, sha256_json
from snapaudit.progress import Progress
from snapaudit.results import RunResults, write_results
from snapaudit.run.analysis.results import run_results
from snapaudit.run.answers import max_answer_bytes
from snapaudit.run.bound_systems import CallImportsRecord, check_systems, live_specs
from snapaudit.run.context import RunContext
from snapaudit.run.dialect import resolve_dialects
from snapaudit.run.execution.interrupt import interruptible
from snapaudit.run.gate_profile import check_evaluable
from snapaudit.run.looks import look_contents, take_run_looks, used_questions
from snapaudit.run.preflight import check_conversations, needs_systems, preflight
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.locks import (
    code_version,
    content_now,
    initialize_run,
    verify_chain,
    verify_run_files,
)
from snapaudit.run.record.protocol import (
    Protocol,
    load_protocol,
    protocol_hash,
)
from snapaudit.run.record.rundir import RunDir
from snapaudit.run.stages.answer import answer_rows, answer_stage
from snapaudit.run.stages.batch_calls import check_batch_mode
from snapaudit.run.stages.retrieval import locked_evidence, retrieval_stage
from snapaudit.run.stages.semantic import pair_labels, semantic_stage
from snapaudit.run.systems import build_system, run_resources
from snapaudit.stats.sequential import check_design
from snapaudit.systems.base import Evidence, RetrievingSystem, System
from snapaudit.systems.resources import RunResources
from snapaudit.tables import AnswerRow, GoldRow

if TYPE_CHECKING:
    from snapaudit.stats.analysis import AnalysisResult

BOOTSTRAP_METHOD = "whole-question bootstrap, snapaudit.stats.bootstrap"


@dataclass(frozen=True, slots=True)
class RunOutcome:
    results_path: Path
    record: RunResults  # results.json, typed

    @property
    def results(self) -> dict[str, Any]:
        """The results document (``record.to_json()``)."""
        return self.record.to_json()

    @property
    def analysis(self) -> AnalysisResult:
        return self.record.analysis


# ---------------------------------------------------------------- entry points


def run_audit(protocol: Protocol, run_dir: Path | RunDir, *, base_dir: Path | None = None,
              progress: Progress, systems: Mapping[str, System] | None = None,
              resources: RunResources | None = None) -> RunOutcome:
    """Run every stage not yet locked, then the analysis; see the module docstring.

    ``systems`` (state -> System) replaces :func:`build_system` for callers that bring
    their own system objects; their ``spec()`` is hash-bound like any other. ``resources``:
    replica pools and shared generators to use (the caller closes them); by default the run
    makes its own and closes them when it ends.
    """
    rd = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    with interruptible() as run, rd:  # Ctrl-C: one clean stop, the ledger closed after it
        outcome: RunOutcome = run(_run_audit(protocol, rd, base_dir or Path.cwd(), progress,
                                             systems, resources))
        return outcome


async def arun_audit(protocol: Protocol, run_dir: Path | RunDir, *,
                     base_dir: Path | None = None, progress: Progress,
                     systems: Mapping[str, System] | None = None,
                     resources: RunResources | None = None) -> RunOutcome:
    """:func:`run_audit` on the caller's running event loop (``await snapaudit.aaudit``): no
    SIGINT handler of its own; cancelling it stops the run as Ctrl-C does."""
    rd = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    with rd:
        return await _run_audit(protocol, rd, base_dir or Path.cwd(), progress, systems,
                                resources)


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
                     given: Mapping[str, System] | None,
                     shared: RunResources | None = None) -> RunOutcome:
    check_evaluable(protocol)
    check_batch_mode(protocol)
    fresh = not rd.initialized()
    manifest = cohort.select(protocol.cohort, base) if fresh else None
    if manifest is not None:  # a design whose first look is too small: refused unwritten
        check_design(len(manifest["questions"]), protocol.design.looks)
        check_conversations(protocol, manifest)
    locked = set() if fresh else {str(rec["stage"]) for rec, _ in rd.ledger().locks()}
    protocol = await resolve_dialects(protocol, rd, fresh)  # "auto": probed, nothing written
    build = given is None and needs_systems(locked)  # lazily: only for stages still open
    resources = shared if shared is not None else run_resources(protocol)  # this run's
    systems = dict(given) if given is not None else {
        s: build_system(protocol, s, rd.path, base, resources) for s in protocol.states.order} \
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
        note = check_systems(rd.ledger(), live_specs(protocol, base, systems), base_dir=base)
        if note is not None:  # nothing was accepted yet: the run starts again
            progress.info(note)
        CallImportsRecord(rd.ledger()).watch(systems)  # what calls import is bound too
        run = _open(protocol, rd, base, progress, systems)
        run.resources = resources
        planned = len(run.questions)  # the cohort; a sequential run may use a prefix
        await _stages(run)
        return _analyze(run, planned)
    finally:
        for system in systems.values():
            await system.aclose()
        if shared is None:  # the run's own pools and generators end with it
            await resources.aclose()


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
    stored = ledger.locks()
    looks = look_contents(ledger, protocol, questions, [rec for rec, _ in stored])
    chain = verify_chain(stored, {**content_now(ledger, protocol, base), **looks}, depends)
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
    if run.protocol.design.looks > 1:  # the blocks and their looks, then the questions used
        run.questions = (used_questions(run) if run.locked("answer")
                         else await take_run_looks(run, _block))
    answers = await _answers(run)
    run.rd.write_table("answers", tables.write_answers, answers)
    if not run.locked("semantic"):
        await semantic_stage(run, answers)
    run.rd.write_table("labels", tables.write_labels, pair_labels(run))
    gold = read_gold(run)
    if not run.locked("gold"):
        run.lock("gold", {"gold_sha256": sha256_file(cohort.resolve(run.protocol.gold.path,
                                                                    run.base_dir))})
    run.rd.write_table("gold", tables.write_gold, gold)  # rewritten: kill-safe


async def _answers(run: RunContext) -> list[AnswerRow]:
    """Retrieval (retrieving states) and answer cells of ``run.questions``, each stage
    locked unless it is, or ``run.locking`` is off; the accepted answers."""
    evidence: dict[tuple[str, str], Evidence | None] = {}
    if any(isinstance(s, RetrievingSystem) for s in run.systems.values()):
        if not run.locked("retrieval"):
            await retrieval_stage(run)
        evidence = locked_evidence(run.ledger)
    if not run.locked("answer"):
        await answer_stage(run, evidence, max_answer_bytes(run.protocol))
    return answer_rows(run.ledger, run.questions)


async def _block(run: RunContext) -> None:
    """One block of a sequential design: every cell of its questions, nothing locked."""
    answers = await _answers(run)
    await semantic_stage(run, answers)


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


def _analyze(run: RunContext, planned: int) -> RunOutcome:
    gold = {g.question_id: g.answers for g in read_gold(run)}
    record = run_results(run.protocol, run.rd, answer_rows(run.ledger, run.questions),
                         pair_labels(run), gold, run.locked("attribution"), planned)
    return RunOutcome(write_results(run.rd.results_path, record), record)
