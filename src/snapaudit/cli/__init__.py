"""The thin command line: each command builds a config and calls one library function.

Commands live in their own modules under :mod:`snapaudit.cli` and are imported
only when invoked, so ``snapaudit --help`` stays fast and optional extras stay
optional.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, TypeGuard

import click

from snapaudit import __version__
from snapaudit.errors import SnapauditError

if TYPE_CHECKING:
    import sqlite3

# command name -> (module under snapaudit.cli, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": ("analyze", "Audit answer tables from two snapshots (any system)."),
    "import": ("import_", "Answer tables from inspect_ai, promptfoo or lm-eval logs."),
    "init": ("init", "Write a commented protocol template."),
    "run": ("run", "Run every stage of a protocol that is not yet locked, then analyze."),
    "status": ("status", "Show stage progress, attempts by outcome, and locks of a run."),
    "corpus": ("corpus", "Ingest and shard a corpus for the built-in testbed."),
    "demo": ("demo", "Run a complete locked audit on the embedded demo world."),
    "report": ("report", "Write the HTML and Markdown report of a run."),
    "export": ("export", "Write a sanitized artifact of a run."),
    "verify": ("verify", "Recompute every claim of an artifact, with no network."),
    "judge-audit": ("judge_audit", "Have a second judge label a blind sample; agreement."),
    "replicate": ("replicate", "Rerun two locked states with a second generator."),
    "attribute": ("attribute", "Which evidence document caused each changed answer."),
    "rejudge": ("rejudge", "Judge a run's locked answers again with a new judge (no calls)."),
    "plan": ("plan", "Questions needed for a target power, from a pilot run."),
    "view": ("view", "Serve the report of a run on localhost (Ctrl-C to stop)."),
    "review": ("review", "Review a run's changes or label blind pairs in a local page."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        from snapaudit.run.execution.gcpacing import quiet_imports

        with quiet_imports():  # the application's choice: no collections while importing
            module = importlib.import_module(f"snapaudit.cli.{entry[0]}")
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(version=__version__, package_name="snapaudit")  # no metadata lookup
@click.pass_context
def cli(ctx: click.Context) -> None:
    """snapaudit: does a new snapshot of a RAG system still give the same answers?

    Verdicts: INCOMPATIBLE (excess churn established); with a margin ([gate] margin_pp,
    --margin) COMPATIBLE (answers move less than the margin beyond repeat noise) or UNDECIDED;
    without one EXCESS CHURN NOT SHOWN (not proof of compatibility); NOT EVALUABLE. Exit
    codes: 0 success, 2 bad input or options, 3 verify found claims that do not reproduce,
    4 `--fail-on incompatible|not-compatible` and INCOMPATIBLE, 5 and NOT EVALUABLE, 6
    `run|report --fail-on regressions` and a reviewed regression stands, 7 `--fail-on
    not-compatible` and UNDECIDED, 130 interrupted.
    """
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        return
    from snapaudit.run.execution.gcpacing import gc_pacing

    ctx.with_resource(gc_pacing())  # the application paces the collector while stages run


def main(argv: list[str] | None = None) -> Any:
    """Console entry point: every error becomes one clear message and an exit code; no
    Python traceback reaches a user (set SNAPAUDIT_TRACEBACK=1 to see one). Only the
    program itself (``argv`` None: the command line) may end the process at once past an
    abandoned call; a caller that passes ``argv`` (a test, an embedding application) gets
    SystemExit as usual, its own process and threads untouched. The program also leaves
    what is alive at its end out of the collections of the interpreter's shutdown
    (:func:`_freeze_for_exit`)."""
    program = argv is None
    command = _command_of(sys.argv[1:]) if program else None
    if program:
        blas_on_one_thread(os.environ, command)
    try:
        return _main(argv, program)
    finally:
        if program and command in FREEZE_AT_EXIT:
            _freeze_for_exit()


# commands that hold no ledger, connection, server or event loop at their end (and the group
# alone: --version, --help): the program skips the shutdown's collections after them
FREEZE_AT_EXIT = frozenset({None, "analyze"})


# commands whose work is the library's own numpy, in its own worker threads (the analysis's
# bootstraps, the tables' readers), loading no system, model or user code
ONE_BLAS_THREAD = frozenset({"analyze", "verify", "plan", "report", "export"})
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def blas_on_one_thread(env: MutableMapping[str, str], command: str | None) -> None:
    """The program's choice for the commands of :data:`ONE_BLAS_THREAD`, made before numpy
    is imported: BLAS runs in the calling thread (each variable of :data:`BLAS_THREADS` the
    environment leaves unset becomes "1"). OpenBLAS's own threads otherwise spin-wait after
    each call (and at numpy's import) and take a core from the analysis's threads on a small
    machine: ~0.2 s of CPU and ~0.05 s of a short ``snapaudit analyze`` (docs/benchmarks.md).
    OpenBLAS splits a product by rows, not along the sums: the results are the same bytes on
    one thread or more (tests/cli/test_cli_startup.py). A value the user set is kept; a caller
    that passes ``argv`` is left as it was."""
    if command in ONE_BLAS_THREAD:
        for name in BLAS_THREADS:
            env.setdefault(name, "1")


def _command_of(args: list[str]) -> str | None:
    """The command named on a command line (the group's own options all start with '-')."""
    return next((a for a in args if not a.startswith("-")), None)


def _freeze_for_exit() -> None:
    """The command is done and the interpreter exits next: move every object to the
    collector's permanent generation (``gc.freeze``), so that the shutdown's full collections
    (module teardown) do not traverse numpy's, pydantic's and the library's objects again:
    ~0.1 s of a short ``snapaudit analyze``. The young generations are collected first (the
    command's last garbage, finalizers and all); what is old is what the imports built.
    Only the program (``main()`` from the command line), never a caller that passes
    ``argv``, and only after the commands of :data:`FREEZE_AT_EXIT`."""
    import gc

    gc.collect(1)
    gc.freeze()


def _main(argv: list[str] | None, program: bool) -> Any:
    try:
        return cli.main(args=argv, standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):
        _ignore_sigint()  # exiting: a further Ctrl-C must not turn 130 into a traceback
        click.echo("aborted", err=True)
        if program:
            _exit_now_if_a_model_call_was_abandoned(130)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except SnapauditError as exc:
        from snapaudit.systems.redact import redact_message

        click.echo(f"error: {redact_message(str(exc))}", err=True)
        if program:
            _exit_now_if_a_model_call_was_abandoned(exc.exit_code)
        sys.exit(exc.exit_code)
    except OSError as exc:
        if os.environ.get("SNAPAUDIT_TRACEBACK"):
            raise
        click.echo(f"error: {os_error_message(exc)}", err=True)
        sys.exit(2)
    except Exception as exc:
        if os.environ.get("SNAPAUDIT_TRACEBACK"):
            raise
        if _is_sqlite_error(exc):  # a ledger read outside the ledger's own error mapping
            from pathlib import Path

            from snapaudit.run.record.ledger.faults import sqlite_error

            click.echo(f"error: {sqlite_error(Path('ledger.sqlite'), exc)}", err=True)
            sys.exit(2)
        from snapaudit.systems.redact import redact_message

        message = redact_message(str(exc))
        click.echo(f"internal error: {type(exc).__name__}: {message}\n(this is a bug; "
                   "set SNAPAUDIT_TRACEBACK=1 to see where, and please report it)", err=True)
        sys.exit(1)


def _is_sqlite_error(exc: Exception) -> TypeGuard[sqlite3.Error]:
    """``sqlite3.Error``, without importing sqlite3 (a command that never imported it cannot
    have raised one)."""
    sqlite3 = sys.modules.get("sqlite3")
    return sqlite3 is not None and isinstance(exc, sqlite3.Error)


def os_error_message(exc: OSError) -> str:
    """An OSError in words, with its path; a full disk says what to do."""
    where = f"{exc.filename}: " if exc.filename else ""
    text = f"{where}{exc.strerror or exc}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        text += " (the disk is full): free space and re-run; everything already recorded is kept"
    elif exc.errno == errno.EROFS:
        text += " (a read-only folder: status, report and export read it; run cannot write it)"
    return text


def _ignore_sigint() -> None:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _exit_now_if_a_model_call_was_abandoned(code: int) -> None:
    """A local-model call abandoned by Ctrl-C (or a Python system's call abandoned at its
    timeout) still runs in its daemon thread; finalizing the interpreter under it can crash
    in native code, so exit at once (the ledger is already closed and every attempt
    marked)."""
    import os
    import threading

    if any((t.name == "snapaudit-llm" or t.name.startswith("snapaudit-python-"))
           and t.is_alive() for t in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
