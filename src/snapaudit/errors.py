"""The one error hierarchy of snapaudit.

Every error the library raises on purpose derives from :class:`SnapauditError`,
so a caller can catch one type. The CLI maps them to exit codes::

    SnapauditError                      exit 2 unless noted
    ├── InputError                      a bad input file: names file, line and problem
    ├── ProtocolError                   a protocol TOML that does not validate
    ├── ConfigError                     a bad option or combination of options
    │   └── FieldErrors                 a config object's fields that do not validate
    ├── IntegrityError                  a ledger, lock, manifest or artifact that changed
    │   └── ProtocolMismatchError       resuming with a protocol whose hash differs
    ├── LockError                       a stage run out of order (e.g. gold read before unlock)
    ├── BusyError                       another snapaudit command is writing the run directory
    ├── StorageError                    a full disk or a read-only folder: names the path
    ├── BackendError                    a backend that cannot be used (missing extra, bad model)
    │   └── NotFoundError               a URL or object the service does not know (HTTP 404)
    ├── TransportInvalid                one retryable failed external call (never escapes a run)
    ├── RetriesExhaustedError           cells that still failed after every retry
    ├── FailFastError                   a stage whose attempts and retries all failed identically
    ├── EndpointDownError               an endpoint still down after the breaker's budget
    └── VerificationError               `verify` found claims that do not reproduce (exit 3)

``GateFailed`` is not an error: the release gate reports through the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from snapaudit.reasons import FailureReason


class SnapauditError(Exception):
    """Root of every error snapaudit raises on purpose."""

    exit_code: int = 2


class InputError(SnapauditError):
    """A malformed input file. The message names the file, the line and the problem."""

    def __init__(self, problem: str, *, path: str | None = None, line: int | None = None):
        self.problem = problem
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{problem}")


class ProtocolError(SnapauditError):
    """A protocol file that does not validate."""


class ConfigError(SnapauditError):
    """A bad option or combination of options."""


class FieldErrors(ConfigError, ValueError):
    """The fields of a config object (e.g. ``AnalysisConfig``) that do not validate: every
    ``(field, problem)`` pair, the field ``""`` for a rule across fields. A ``ValueError``
    too, as pydantic's ``ValidationError`` of the models these objects once were."""

    def __init__(self, errors: Sequence[tuple[str, str]]):
        self.errors = tuple(errors)
        super().__init__("; ".join(f"{f}: {p}" if f else p for f, p in self.errors))

    def describe(self, names: Mapping[str, str]) -> str:
        """The problems with each field named as the user typed it (``names``: field ->
        option), else by the field's own name."""
        return "; ".join(f"{names.get(f, f)}: {p}" if names.get(f, f) else p
                         for f, p in self.errors)


class IntegrityError(SnapauditError):
    """Something bound by a hash (ledger row, lock, manifest, artifact) has changed."""


class ProtocolMismatchError(IntegrityError):
    """The protocol differs from the one the run was locked with."""

    def __init__(self, changed_fields: Sequence[str]):
        self.changed_fields = list(changed_fields)
        super().__init__(
            "protocol differs from the locked protocol in output-shaping fields: "
            + ", ".join(self.changed_fields)
        )


class LockError(SnapauditError):
    """A stage was attempted out of order, e.g. reading gold before the gold unlock."""


class BusyError(SnapauditError):
    """Another snapaudit command holds the run directory's lock (``DIR/.lock``); the message
    names its pid, host, command and start time."""


class StorageError(SnapauditError):
    """A file or the ledger cannot be written: the disk is full (free space and re-run) or
    the folder is read-only. The message names the path; nothing recorded is lost."""


class BackendError(SnapauditError):
    """A backend (generator, retriever, judge) that cannot be used as configured."""


class NotFoundError(BackendError):
    """A URL or an object (a provider batch, a results file) the service does not know:
    HTTP 404."""


class TransportInvalid(SnapauditError):
    """One failed external call that is retried: connection error, timeout, 429/5xx,
    unparseable or schema-violating body, empty or oversized answer. ``reason`` is a
    :class:`~snapaudit.reasons.FailureReason` (ValueError for a value outside it)."""

    def __init__(self, reason: FailureReason, *, detail: str = "",
                 retry_after: float | None = None, body: str = "", traceback: str = ""):
        self.reason = FailureReason(reason)
        self.detail = detail
        self.retry_after = retry_after
        # a Python system's failing call: its redacted, bounded traceback (kept in the
        # attempt's meta; ``snapaudit status --failures`` shows it)
        self.traceback = traceback
        # a redacted excerpt of an error body that is not kept in the ledger (5xx): used
        # only to tell identical failures apart and to quote them when failing fast
        self.body = body
        super().__init__(f"{reason}: {detail}" if detail else reason)


class RetriesExhaustedError(SnapauditError):
    """Cells that exhausted their retries; they are listed, never dropped."""

    def __init__(self, stage: str, cell_keys: Sequence[str],
                 reasons: Mapping[str, int] | None = None,
                 last_errors: Mapping[str, str] | None = None):
        self.stage = stage
        self.cell_keys = list(cell_keys)
        self.reasons = dict(reasons or {})
        self.last_errors = dict(last_errors or {})
        shown = ", ".join(self.cell_keys[:10])
        more = f" (+{len(self.cell_keys) - 10} more)" if len(self.cell_keys) > 10 else ""
        why = failure_lines(self.reasons, self.last_errors)
        super().__init__(
            f"{len(self.cell_keys)} {stage} cell(s) exhausted their retries: {shown}{more}; "
            + retry_hint(self.reasons) + "".join(f"\n  {w}" for w in why)
        )


def retry_hint(reasons: Mapping[str, int]) -> str:
    """What to do about cells that exhausted their retries: re-running helps a transient
    failure, not a call that is always slower than the timeout."""
    if reasons and set(reasons) <= {"timeout"}:
        return ("re-running retries them under the same timeout, so first raise [run] "
                "timeout_s if the calls are slow; for a Python system whose calls hang, set "
                'isolation = "process" in [systems.<state>] (a hanging call is then killed)')
    if "timeout" in reasons:
        return ("re-run the same command to retry them (for the timeouts: raise [run] "
                'timeout_s, or set isolation = "process" for a Python system)')
    return "re-run the same command to retry them"


def failure_lines(reasons: Mapping[str, int], last_errors: Mapping[str, str]) -> list[str]:
    """``failures by reason: http_503 x12, timeout x3`` and one ``last error`` per endpoint."""
    out = []
    if reasons:
        out.append("failures by reason: " + ", ".join(
            f"{r} x{n}" for r, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))))
    out += [f"last error at {ep}: {err}" for ep, err in sorted(last_errors.items())]
    return out


class FailFastError(SnapauditError):
    """A stage stopped early: its attempts, retries included, all failed with one identical
    error, which is a configuration problem (wrong response format, unknown model, ...), not
    bad luck."""

    def __init__(self, stage: str, error: str, failures: int, cells: int):
        self.stage = stage
        self.error = error
        self.failures = failures
        self.cells = cells
        super().__init__(
            f"{stage}: stopped after {failures} identical failures across {cells} cells and no "
            f"success (likely a configuration error; fix it and re-run): {error}"
        )


class EndpointDownError(SnapauditError):
    """An endpoint that kept failing transiently for longer than ``[run]``
    breaker_max_wait_s while its circuit breaker held the stage's cells back
    (:mod:`snapaudit.run.execution.breaker`)."""

    def __init__(self, stage: str, endpoint: str, waited_s: float, budget_s: float,
                 error: str):
        self.stage = stage
        self.endpoint = endpoint
        self.error = error
        super().__init__(
            f"{stage}: endpoint {endpoint} still failing after {waited_s:.1f} s of backing off "
            f"(run.breaker_max_wait_s = {budget_s:g}); last error: {error}; re-run the same "
            "command once it is back"
        )


class VerificationError(SnapauditError):
    """An artifact whose claims do not reproduce."""

    exit_code = 3

    def __init__(self, failures: Sequence[str]):
        self.failures = list(failures)
        super().__init__("claims that do not reproduce:\n  " + "\n  ".join(self.failures))
