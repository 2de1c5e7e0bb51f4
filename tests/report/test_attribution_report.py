"""The report's attribution view: the caused document (id, URL, ranks, rendered text on
demand) beside the old and new answers, with the document's text made inert."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.report.build import write_report
from snapaudit.run.after.attribution_run import attribute_run
from snapaudit.run.engine import run_protocol_file
from tests.fakes.llm_server import FakeLLMServer
from tests.helpers.attribution import attribution_protocol, attribution_world, evidence_responder
from tests.helpers.cli import exit_code

HOSTILE = " <img src=x onerror=alert(1)> [link](https://evil.example)"


@pytest.mark.slow
def test_report_shows_the_caused_document_beside_the_answers(tmp_path: Path) -> None:
    corpus, planted = attribution_world(tmp_path, extra=HOSTILE)
    with FakeLLMServer(responder=evidence_responder) as srv:
        proto = attribution_protocol(tmp_path, corpus, srv.openai_base_url,
                                     'kind = "rule"\nname = "rule"')
        run_dir = tmp_path / "run"
        run_protocol_file(proto, run_dir, [], SilentProgress())
        before = write_report(run_dir)
        assert "Why did the answer change" not in before.html.read_text()
        assert exit_code(["attribute", str(run_dir), "--progress", "silent"]) == 0
    page = (run_dir / "report.html").read_text()  # attribute rewrote the existing report
    section = page[page.index('<section id="attribution">'):]
    section = section[:section.index("</section>")]
    assert f"<b><bdi>{planted}</bdi></b> <bdi>https://x/{planted}</bdi>" in section
    assert "in: rank 1; out: <bdi>skyB3</bdi> (rank 2)" in section  # it took the plant's place
    assert "<details><summary>rendered text</summary><pre><bdi>" in section
    assert "PLANTED the sky colour is green &lt;img src=x onerror=alert(1)&gt;" in section
    assert "<img" not in section
    assert "<td><bdi>caused</bdi> (<bdi>1.00</bdi>)</td>" in section
    assert "<td><bdi>blue</bdi> / <bdi>blue</bdi></td><td><bdi>green</bdi> / " in section
    md = (run_dir / "report.md").read_text()
    assert "- verdict: caused (agreement 1.00)" in md
    line = next(x for x in md.splitlines() if x.startswith(f"- document {planted} "))
    assert f"https://x/{planted}" in line and line.endswith(": in rank 1; out: skyB3 (rank 2); "
                                                          "text (report.html)")


@pytest.mark.slow
def test_a_run_without_attribution_has_no_view(tmp_path: Path) -> None:
    corpus, _ = attribution_world(tmp_path)
    with FakeLLMServer(responder=evidence_responder) as srv:
        proto = attribution_protocol(tmp_path, corpus, srv.openai_base_url, 'kind = "none"')
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        paths = write_report(tmp_path / "run")
        assert 'id="attribution"' not in paths.html.read_text()
        assert "Why did the answer change" not in paths.markdown.read_text()
        attribute_run(tmp_path / "run", SilentProgress())
    paths = write_report(tmp_path / "run")
    assert 'id="attribution"' in paths.html.read_text()
