"""``snapaudit rejudge``: a new run from a finished run's locked answers, with a new judge.

The parent's lock chain is verified and its answer lock read; the new run's protocol is the
parent's with the new ``[judge]`` section and a ``[lineage]`` naming the parent run, its
protocol hash and its answer lock. The new run replays the locked answers
(:mod:`snapaudit.run.after.replay`: no system is called), then runs the semantic stage with the new
judge, the gold unlock and the analysis, like any run; ``export`` and ``verify`` treat it as
one, and its protocol names the lineage.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError, IntegrityError, ProtocolError
from snapaudit.progress import Progress
from snapaudit.run.after.replay import parent_answers
from snapaudit.run.engine import RunOutcome, run_audit
from snapaudit.run.record.protocol import Protocol, parse_protocol, protocol_hash
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.gate import Profile


def read_judge_section(path: Path) -> dict[str, Any]:
    """A TOML file with a ``[judge]`` table (or the judge's keys at top level)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: judge file not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{path}: not valid TOML: {exc}") from None
    section = data.get("judge", data)
    if not isinstance(section, dict) or (set(data) - {"judge"} and "judge" in data):
        raise ProtocolError(f"{path}: expected a [judge] table and nothing else")
    return dict(section)


def judge_section(spec: str) -> dict[str, Any]:
    """The ``[judge]`` table of ``--judge``: a TOML file (any judge kind), or a short form of
    :mod:`snapaudit.judge.spec` (``rule``: the offline rule judge, ``openai:MODEL@URL``, ...)."""
    if spec.endswith(".toml") or Path(spec).is_file():
        return read_judge_section(Path(spec))
    from snapaudit.judge.spec import parse_judge_spec

    config = parse_judge_spec(spec)
    return config.model_dump(mode="json", exclude_none=True)


def rejudge_protocol(parent: RunDir, judge: dict[str, Any],
                     gate_profile: Profile | None = None) -> Protocol:
    """The parent's protocol with a new judge (and, given ``gate_profile``, the gate of that
    profile at the parent's ``min_d_pp``) and the lineage; the parent is verified."""
    if not parent.initialized():
        raise ConfigError(f"{parent.path} is not a run directory")
    with parent:
        proto = parent.load_protocol()
        locks = {record["stage"]: digest for record, digest in parent.ledger().locks()}
    answer_lock = locks.get("answer")
    if answer_lock is None:
        raise IntegrityError(f"{parent.path} has no answer lock yet: finish its run first")
    parent_answers(str(parent.path.resolve()), answer_lock)  # verifies the chain and the lock
    data = proto.model_dump(mode="json", exclude_none=True)
    data["judge"] = judge
    if gate_profile is not None:
        data["gate"] = {"profile": gate_profile, "min_d_pp": proto.gate.min_d_pp}
    data["lineage"] = {"parent_run": str(parent.path.resolve()),
                       "parent_protocol_sha256": protocol_hash(proto),
                       "parent_answer_lock_sha256": answer_lock}
    return parse_protocol(data, "rejudge")


def rejudge(run_dir: Path, judge: str | Path, out: Path, progress: Progress,
            gate_profile: Profile | None = None) -> RunOutcome:
    """Re-judge ``run_dir``'s locked answers with the judge ``judge`` (a TOML file or a short
    form: :func:`judge_section`) in ``out``."""
    parent = RunDir(run_dir)
    if Path(out).resolve() == parent.path.resolve():
        raise ConfigError("--out must be a new run directory, not the parent run")
    protocol = rejudge_protocol(parent, judge_section(str(judge)), gate_profile)
    with parent:
        base = parent.base_dir() or Path.cwd()
    return run_audit(protocol, Path(out), base_dir=base, progress=progress)
