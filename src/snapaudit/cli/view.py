"""``snapaudit view DIR``: serve the report of a run on localhost until Ctrl-C."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.cli._common import serve_until_stopped


@click.command("view")
@click.argument("run_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True,
                                                          path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
@click.option("--open/--no-open", "open_browser", default=False, show_default=True,
              help="Also open the page in the default web browser.")
def command(run_dir: Path, port: int, open_browser: bool) -> None:
    """Write DIR's report and serve it on http://127.0.0.1:PORT/ (Ctrl-C to stop)."""
    from snapaudit.report.build import write_report
    from snapaudit.report.serve import make_server

    paths = write_report(run_dir)
    server = make_server(paths.html, paths.markdown, port)
    click.echo(paths.report.verdict)
    if paths.report.small_sample:
        click.echo(f"{paths.report.small_sample}; treat this verdict as provisional")
    click.echo(f"serving {paths.html} at {server.url}  (Ctrl-C to stop)")
    serve_until_stopped(server.url, server.serve_forever, server.server_close, open_browser)
