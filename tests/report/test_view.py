"""``snapaudit view``: the report on localhost, URL printed, Ctrl-C stops it."""

from __future__ import annotations

import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.cli import cli_popen

REPO = Path(__file__).resolve().parents[2]


def test_view_serves_only_the_report_and_stops_on_ctrl_c(run_dir: Path) -> None:
    proc = cli_popen("view", str(run_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[0].startswith("INCOMPATIBLE: ")
        assert lines[1].startswith("SMALL SAMPLE: 12 questions")
        assert "(Ctrl-C to stop)" in lines[2]
        url = lines[2].split(" at ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url, timeout=10) as reply:
            page = reply.read().decode("utf-8")
            assert reply.headers["Content-Type"].startswith("text/html")
        assert page == (run_dir / "report.html").read_text(encoding="utf-8")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url + "results.json", timeout=10)
        assert err.value.code == 404
        err.value.close()
        proc.send_signal(signal.SIGINT)
        out, errors = proc.communicate(timeout=90)
    finally:  # reap it and close its pipes here, even on failure: a Popen left to the
        # garbage collector warns (ResourceWarning) inside whichever test runs next
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    assert proc.returncode == 0 and "stopped" in out and "Traceback" not in errors
