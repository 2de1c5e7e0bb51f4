"""The page and the JSON views, without a browser: the CSP's hashes match what is served,
the script never parses HTML, and a real run's change items carry the word diff."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from snapaudit.review.data import ReviewData, open_library_session
from snapaudit.review.page import CSP, CSS, JS, page_html
from tests.review.conftest import build_run


def _sha(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_the_csp_allows_exactly_the_served_script_and_style() -> None:
    page = page_html("tok", "label", "alice")
    scripts = re.findall(r"<script>(.*?)</script>", page, re.DOTALL)
    styles = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    assert scripts == [JS] and styles == [CSS]
    assert f"script-src '{_sha(JS)}'" in CSP and f"style-src '{_sha(CSS)}'" in CSP
    assert CSP.startswith("default-src 'none'; ") and "unsafe" not in CSP
    assert 'name="review-token" content="tok"' in page


def test_the_script_never_parses_html_or_evaluates_text() -> None:
    for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                   "new Function", "setAttribute('on", "setAttribute('style", "href"):
        assert banned not in JS, banned
    assert JS.count("textContent=") >= 3


def test_a_hostile_annotator_name_cannot_reach_the_page_unescaped() -> None:
    # the server only serves names that pass the name rule; the page escapes regardless
    page = page_html('"><script>x</script>', "change", "<b>")
    assert "<script>x" not in page and "&lt;b&gt;" in page


def test_change_items_of_a_real_run_carry_the_word_diff(tmp_path: Path) -> None:
    run = build_run(tmp_path / "world", target="long_answers")
    data = ReviewData(lambda: open_library_session(run, "ida", None), mode="change",
                      annotator="ida")
    try:
        items = {i["question_id"]: i for i in data.items()["items"]}
    finally:
        data.close()
    assert sorted(items) == ["q000", "q001"]  # the other questions did not change
    item = items["q001"]
    assert [d for d in item["diff"] if d[0] != "="] == [
        ["-", "northern"], ["+", "western"], ["-", "three"], ["+", "four"]]
    assert item["diff"][0] == ["=", "The river rises in the"]
    assert item["old"][0]["count"] == 2 and len(item["new"]) == 1
    assert item["gold"] == ["answer q001"]
