"""``snapaudit review DIR``: the review app on 127.0.0.1, or the label exchange files."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import click

from snapaudit.cli._common import serve_until_stopped
from snapaudit.errors import ConfigError


@click.command("review")
@click.argument("run_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True,
                                                          path_type=Path))
@click.option("--annotator", default="reviewer", show_default=True, metavar="NAME",
              help="Who labels or reviews (the labels are the judge human:NAME).")
@click.option("--label", "label", is_flag=True,
              help="Blind labels of a sample's answer pairs instead of the change review.")
@click.option("--sample", type=int, default=None, metavar="N",
              help="--label / --export: questions in the outcome-blind hash sample.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
@click.option("--open/--no-open", "open_browser", default=True, show_default=True,
              help="Open the page in the default web browser.")
@click.option("--export", "export_fmt", type=click.Choice(["labelstudio", "argilla"]),
              default=None, help="Write the label sample as tasks for Label Studio or Argilla.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="--export: the file to write.")
@click.option("--import", "import_file", type=click.Path(dir_okay=False, exists=True,
                                                        path_type=Path), default=None,
              help="Bring finished Label Studio / Argilla annotations back as human:NAME.")
def command(run_dir: Path, annotator: str, label: bool, sample: int | None, port: int,
            open_browser: bool, export_fmt: str | None, out: Path | None,
            import_file: Path | None) -> None:
    """Review DIR's changes (regression / improvement / neutral / can't tell) or label a blind
    sample of its answer pairs (--label), in a local web page (Ctrl-C to stop).

    The printed URL carries this session's token; requests without it are refused."""
    if export_fmt is not None or import_file is not None:
        _exchange(run_dir, annotator, sample, export_fmt, out, import_file, label)
        return
    if out is not None:
        raise ConfigError("--out applies to --export only")
    from snapaudit.review.server import ReviewConfig, open_review

    server = open_review(ReviewConfig(run_dir, annotator, label=label, sample=sample,
                                      port=port))
    what = "blind labels" if label else "change review"
    click.echo(f"{what} of {run_dir} for {annotator} at {server.url}  (Ctrl-C to stop)")
    serve_until_stopped(server.url, server.serve_forever, server.close, open_browser)


def _exchange(run_dir: Path, annotator: str, sample: int | None, fmt: str | None,
              out: Path | None, file: Path | None, label: bool) -> None:
    from snapaudit.cli._common import check_output_path
    from snapaudit.names import NAME_RULE, is_name

    if fmt is not None and file is not None:
        raise ConfigError("--export and --import are separate runs; give one")
    if label:
        raise ConfigError("--label serves the page; --export / --import need no server")
    if fmt is not None:
        if out is None:
            raise ConfigError("--export needs --out FILE")
        check_output_path(out, "--out")
        from snapaudit.run.after.label_exchange import export_tasks

        kind: Literal["labelstudio", "argilla"] = (
            "labelstudio" if fmt == "labelstudio" else "argilla")
        n = export_tasks(run_dir, kind, out, sample=sample)
        click.echo(f"wrote {n} tasks ({fmt}) to {out}")
        return
    assert file is not None
    if sample is not None or out is not None:
        raise ConfigError("--import takes the sample from the file; drop --sample / --out")
    if not is_name(annotator):
        raise ConfigError(f"--annotator {annotator!r} {NAME_RULE}")
    from snapaudit.run.after.label_exchange import import_annotations

    n = import_annotations(run_dir, file, annotator)
    click.echo(f"imported {n} questions from {file} as judge human:{annotator} (locked)")
    from snapaudit.review.refresh import ResultsUpdater

    updater = ResultsUpdater(run_dir)  # what the page does after a lock
    updater.request()
    updater.wait()  # waits out a folder another command holds, a while
    updater.close()
    state = updater.state()
    click.echo(f"results.json not updated: {state['error']}" if state["error"] else
               f"updated {run_dir / 'results.json'} and the report")
