"""The page in a real headless Chromium: hostile strings run no script; figures render."""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from snapaudit.report.build import write_report

pytestmark = pytest.mark.browser
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium(exe: str, profile: Path, *args: str) -> str:
    done = subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def test_hostile_page_runs_no_injected_script(hostile_run: Path, chromium: str,
                                              tmp_path: Path) -> None:
    html = write_report(hostile_run).html
    dom = _chromium(chromium, tmp_path / "profile", "--virtual-time-budget=2000", "--dump-dom",
                    html.as_uri())
    assert "pwned" in dom  # the hostile text is shown, as text
    assert "<title>pwned" not in dom and "<title>Snapshot Compatibility Audit" in dom
    assert "<img" not in dom
    assert dom.count("<script") == 2
    assert 'id="drill" data-ready="1"' in dom  # the page's own script ran (CSP hash ok)


def _png_pixels(path: Path) -> tuple[int, int, bytes]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


@pytest.mark.slow
def test_screenshot_shows_the_figures(run_dir: Path, chromium: str, tmp_path: Path) -> None:
    html = write_report(run_dir).html
    png = tmp_path / "report.png"
    _chromium(chromium, tmp_path / "profile", f"--screenshot={png}", "--window-size=1280,2000",
              html.as_uri())
    width, height, raw = _png_pixels(png)
    assert (width, height) == (1280, 2000)
    assert png.stat().st_size > 40_000
    # Not blank: many distinct byte values and a large share of non-white bytes.
    assert len(set(raw)) > 100
    assert sum(1 for b in raw[::97] if b < 200) > len(raw[::97]) // 50
