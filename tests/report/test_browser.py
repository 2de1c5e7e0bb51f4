"""The page in a real headless Chromium: hostile strings run no script; figures render."""

from __future__ import annotations

import base64
import hashlib
import json
import re
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
    assert 'id="cmp" data-ready="1"' in dom  # the page's own script ran (CSP hash ok)


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


# Measures the page as laid out and writes the numbers into the DOM for --dump-dom.
MEASURE = """
(function(){
  var out={viewport:window.innerWidth,page:document.documentElement.scrollWidth,cells:0,
           minCell:1e9,clipped:[],axes:0,unlabelled:0,figures:0};
  document.querySelectorAll('#cmp th, #cmp td').forEach(function(c){
    var w=c.getBoundingClientRect().width; out.cells++;
    if(w<out.minCell){out.minCell=w;}
    if(c.scrollWidth>c.clientWidth+1){out.clipped.push(c.textContent.slice(0,40));}
  });
  document.querySelectorAll('figure svg').forEach(function(svg){
    out.figures++;
    svg.querySelectorAll('g.axis').forEach(function(g){
      out.axes++;
      var t=g.querySelector('text.axis-label');
      if(!t||!t.textContent.trim()||t.getBBox().width<=0){out.unlabelled++;}
    });
  });
  var pre=document.createElement('pre'); pre.id='geom';
  pre.textContent=JSON.stringify(out); document.body.appendChild(pre);
})();
"""


def _measuring_copy(html: Path, out: Path) -> Path:
    """The report plus the measuring script, its hash added to the page's CSP."""
    digest = base64.b64encode(hashlib.sha256(MEASURE.encode()).digest()).decode()
    page = html.read_text(encoding="utf-8")
    page = page.replace("script-src '", f"script-src 'sha256-{digest}' '", 1)
    page = page.replace("</body>", f"<script>{MEASURE}</script></body>")
    out.write_text(page, encoding="utf-8")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 1920])
def test_comparison_view_geometry(run_dir: Path, chromium: str, tmp_path: Path,
                                  width: int) -> None:
    html = write_report(run_dir).html
    probe = _measuring_copy(html, tmp_path / "probe.html")
    dom = _chromium(chromium, tmp_path / "profile", f"--window-size={width},1400",
                    "--virtual-time-budget=3000", "--dump-dom", probe.as_uri())
    found = re.search(r'<pre id="geom">(.*?)</pre>', dom)
    assert found is not None, dom[-2000:]
    geom = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    print(f"width {width}: {geom}")  # the measured numbers, shown with -s
    assert geom["viewport"] == width
    assert geom["cells"] >= 6 * 2  # a header and at least one question row
    assert geom["minCell"] >= 120, geom
    assert geom["clipped"] == [], geom
    assert geom["page"] <= geom["viewport"], geom  # no horizontal overflow
    assert geom["figures"] >= 4 and geom["axes"] >= 2 * geom["figures"]
    assert geom["unlabelled"] == 0, geom
    shot = tmp_path / f"report-{width}.png"
    _chromium(chromium, tmp_path / "profile", f"--screenshot={shot}",
              f"--window-size={width},5000", html.as_uri())
    assert _png_pixels(shot)[:2] == (width, 5000)
