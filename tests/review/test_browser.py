"""The review app in a real headless Chromium, driven the way a person drives it: keys and
clicks through the DevTools protocol (tests/helpers/cdp.py); script only reads the DOM.

Each test serves a real run (tests/review/conftest.py: build_run) with ``snapaudit review``
in a child process, as a user starts it."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.helpers.cdp import Browser, Page
from tests.helpers.cli import exit_code
from tests.review.conftest import App, build_run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROGRESS = "document.getElementById('progress').textContent"
CURRENT = "document.getElementById('item').getAttribute('data-qid')"
ANSWERS = ("Array.prototype.map.call(document.querySelectorAll('#item .answer'),"
           "function(e){return [e.getAttribute('data-item'),"
           "e.querySelector('.text').textContent];})")
SHOWN = ("(function(){var o={};Array.prototype.forEach.call("
         "document.querySelectorAll('#item .pairs tr'),function(r){"
         "o[r.getAttribute('data-pair')]=r.getAttribute('data-label');});return o;})()")


def _ready(page: Page) -> None:
    assert page.wait("document.body.getAttribute('data-ready')") == "1", page.errors


def _truth(page: Page) -> dict[str, str]:
    """What a reader of the page decides: the pair is the same when the texts are equal."""
    texts = dict(page.eval(ANSWERS))
    pairs = page.eval("Array.prototype.map.call(document.querySelectorAll('#item .pairs tr'),"
                      "function(r){return r.getAttribute('data-pair');})")
    return {p: "same" if texts[p.split("|")[0]] == texts[p.split("|")[1]] else "different"
            for p in pairs}


def _label_current(page: Page) -> tuple[str, dict[str, str]]:
    """Label the current question pair by pair with s / d (the cursor moves on by itself)."""
    qid = page.wait(CURRENT)
    labels = _truth(page)
    for label in labels.values():
        page.key(label[0])
    return qid, labels


def _group_current(page: Page) -> tuple[str, dict[str, str]]:
    """Label the current question by groups: one digit per answer, in order (equal texts
    share a group); the pair labels follow."""
    qid, labels = page.wait(CURRENT), _truth(page)
    groups: dict[str, int] = {}
    for _, text in page.eval(ANSWERS):
        page.key(str(groups.setdefault(text, len(groups) + 1)))
    return qid, labels


def _wait_saved(page: Page, count: int, total: int) -> None:
    page.wait(f"{PROGRESS}==={json.dumps(f'{count} / {total} labelled')}")


def test_a_reviewer_labels_a_sample_by_keyboard_only_and_a_reload_shows_every_label(
        tmp_path: Path, chromium: str, apps: list[App]) -> None:
    run = build_run(tmp_path / "world")
    app = App(run, "--label", "--sample", "4", "--annotator", "alice")
    apps.append(app)
    with Browser(chromium, tmp_path / "profile") as browser:
        page = browser.page(app.url)
        _ready(page)
        assert page.eval(PROGRESS) == "0 / 4 labelled"
        # only the question and anonymous items: no state name, no gold, no judge
        body = page.eval("document.body.innerText")
        assert "old" not in body.split() and "gold" not in body and "rule" not in body
        page.keys("jk")  # down a pair and back up
        assert page.eval("document.querySelector('#item .pairs tr.cur')"
                         ".getAttribute('data-pair')") == "A|B"
        pressed: dict[str, dict[str, str]] = {}
        for n in range(1, 5):
            qid, labels = (_group_current if n == 3 else _label_current)(page)
            pressed[qid] = labels
            _wait_saved(page, n, 4)
            assert page.eval("location.hash").startswith("#q=")
        assert len(pressed) == 4
        page.reload()
        _ready(page)
        assert page.eval(PROGRESS) == "4 / 4 labelled"
        for qid, labels in pressed.items():
            page.click(f'#list button[data-qid="{qid}"]')
            page.wait(f"{CURRENT}==={json.dumps(qid)}")
            assert page.eval(SHOWN) == labels
            assert page.eval("location.hash") == f"#q={qid}"
        page.click("#finish")
        page.click("#finish")  # a second click locks
        page.wait(f"{PROGRESS}==='4 / 4 labelled (locked)'")
        assert page.errors == []
    assert app.saved() == pressed
    code, out, err = app.stop()
    assert code == 0 and "stopped" in out and "Traceback" not in err


def test_a_deep_link_opens_its_question_and_search_moves_to_a_match(
        tmp_path: Path, chromium: str, apps: list[App]) -> None:
    run = build_run(tmp_path / "world")
    app = App(run, "--annotator", "carol")
    apps.append(app)
    with Browser(chromium, tmp_path / "profile") as browser:
        page = browser.page(app.url + "#q=q004")
        _ready(page)
        assert page.eval(CURRENT) == "q004"
        page.key("j")
        after = page.eval(CURRENT)
        assert after != "q004" and page.eval("location.hash") == f"#q={after}"
        page.key("/")
        assert page.eval("document.activeElement.id") == "search"
        page.type("item 2")
        assert page.eval("document.querySelectorAll('#list button').length") == 1  # filtered
        page.key("Enter")
        page.wait(f"{CURRENT}==='q002'")
        page.key("h")
        assert page.eval("document.getElementById('help').hidden") is False
        assert page.errors == []


def test_two_annotators_labelling_at_once_lose_nothing(tmp_path: Path, chromium: str,
                                                      apps: list[App]) -> None:
    run = build_run(tmp_path / "world")
    alice = App(run, "--label", "--sample", "5", "--annotator", "alice")
    bob = App(run, "--label", "--sample", "5", "--annotator", "bob")
    apps += [alice, bob]
    pressed: dict[str, dict[str, dict[str, str]]] = {"alice": {}, "bob": {}}
    with Browser(chromium, tmp_path / "profile") as browser:
        pages = {"alice": browser.page(alice.url), "bob": browser.page(bob.url)}
        for page in pages.values():
            _ready(page)
        for n in range(1, 6):
            todo = {}
            for who, page in pages.items():
                qid = page.wait(CURRENT)
                todo[who] = (qid, _truth(page))
            # interleave the two annotators' key presses, one key each in turn
            keys = {who: [v[0] for v in labels.values()] for who, (_, labels) in todo.items()}
            for a, b in zip(keys["alice"], keys["bob"], strict=True):
                pages["alice"].key(a)
                pages["bob"].key(b)
            for who, (qid, labels) in todo.items():
                pressed[who][qid] = labels
                _wait_saved(pages[who], n, 5)
        assert all(p.errors == [] for p in pages.values())
    assert alice.saved() == pressed["alice"]
    assert bob.saved() == pressed["bob"]
    # a later session of each annotator sees the same
    for app in (alice, bob):
        assert app.stop()[0] == 0
    again = App(run, "--label", "--sample", "5", "--annotator", "bob")
    apps.append(again)
    assert again.saved() == pressed["bob"]


@pytest.mark.parametrize("frozen", [True, False], ids=["request-in-flight", "at-random"])
def test_a_server_killed_mid_save_and_restarted_loses_no_accepted_label(
        tmp_path: Path, chromium: str, apps: list[App], frozen: bool) -> None:
    """frozen: the server is stopped (SIGSTOP) before the last key, so the save is sent and
    is surely in flight when SIGKILL comes; otherwise SIGKILL follows the last key at once
    (the save may be anywhere: not sent, half done or accepted)."""
    run = build_run(tmp_path / "world")
    args = ("--label", "--sample", "4", "--annotator", "dana")
    first = App(run, *args)
    apps.append(first)
    with Browser(chromium, tmp_path / "profile") as browser:
        page = browser.page(first.url)
        _ready(page)
        accepted: dict[str, dict[str, str]] = {}
        for n in (1, 2):
            qid, labels = _label_current(page)
            accepted[qid] = labels
            _wait_saved(page, n, 4)
        if frozen:
            first.proc.send_signal(signal.SIGSTOP)
        in_flight, labels = _label_current(page)  # the last key sends the save ...
        if frozen:
            page.wait(f"document.getElementById('status').textContent==="
                      f"{json.dumps(f'saving {in_flight}…')}")
        first.proc.send_signal(signal.SIGKILL)  # ... and the server dies under it
        first.proc.wait(timeout=10)
        second = App(run, *args)
        apps.append(second)
        page.goto(second.url)
        _ready(page)
        saved = second.saved()
        assert {q: saved[q] for q in accepted} == accepted
        assert saved[in_flight] in (None, labels)  # all of the question or nothing
        if frozen:
            assert saved[in_flight] is None  # never received: not accepted, labelled again
        print(f"{in_flight} at the kill: {'accepted' if saved[in_flight] else 'not accepted'}")
        done = sum(v is not None for v in saved.values())
        assert page.eval(PROGRESS) == f"{done} / 4 labelled"
        while done < 4:
            qid, labels = _label_current(page)
            accepted[qid] = labels
            done += 1
            _wait_saved(page, done, 4)
        # the save the kill cut off failed as a request, nothing else did
        assert [e for e in page.errors if "net::ERR_" not in e] == [], page.errors
    final = second.saved()
    assert {q: final[q] for q in accepted} == accepted and None not in final.values()


def test_a_request_without_the_token_is_refused(tmp_path: Path, chromium: str,
                                                apps: list[App]) -> None:
    run = build_run(tmp_path / "world")
    app = App(run, "--annotator", "erin")
    apps.append(app)
    with Browser(chromium, tmp_path / "profile") as browser:
        refused = "document.body.innerText.indexOf('token is required')>=0"
        page = browser.page(app.base() + "#q=q001")
        page.wait(refused)
        assert page.eval("document.getElementById('item')") is None
        page = browser.page(app.base() + "?token=" + app.token.value[::-1])
        page.wait(refused)
        assert page.eval("document.scripts.length") == 0
        page = browser.page(app.url)
        _ready(page)  # the right token opens it
        page = browser.page(app.base())  # and its cookie (this port's) opens a reload
        _ready(page)


def test_hostile_answers_stay_inert(tmp_path: Path, chromium: str, apps: list[App]) -> None:
    run = build_run(tmp_path / "world", target="hostile")
    review = App(run, "--annotator", "frank")
    label = App(run, "--label", "--annotator", "frank")
    apps += [review, label]
    inert = ("[typeof window.__pwned, document.title.indexOf('pwned'),"
             " document.querySelectorAll('img,a,iframe,object,embed,strong,em').length,"
             " document.scripts.length, document.body.innerText.indexOf('\\u202e')]")
    item = "document.getElementById('item').textContent"
    shown: list[str] = []
    with Browser(chromium, tmp_path / "profile") as browser:
        page = browser.page(review.url)
        _ready(page)
        n = page.eval("document.querySelectorAll('#list button').length")
        assert n == 6  # every question changed: the new state answers hostile text
        for decision in "rincrn":
            shown.append(page.eval(item))
            page.key(decision)
            page.wait(f"document.getElementById('status').textContent.indexOf("
                      f"'saved '+{CURRENT})===0")
            assert page.eval(inert) == ["undefined", -1, 0, 1, -1]
            page.key("j")
        page.wait(f"{PROGRESS}==='6 / 6 reviewed'")
        page.click("#note")
        page.type("see q3")
        page.key("Enter")
        page.wait("document.querySelector('#item p.saved').textContent.indexOf('see q3')>0")
        assert page.errors == []
        page.reload()
        _ready(page)
        assert page.eval(PROGRESS) == "6 / 6 reviewed"
        assert page.eval("document.querySelectorAll('#list button.done').length") == 6
        page = browser.page(label.url)
        _ready(page)
        for _ in range(6):
            shown.append(page.eval(item))
            assert page.eval(inert) == ["undefined", -1, 0, 1, -1]
            page.keys("jjjjjj")  # past the question's six pairs
        assert page.errors == []
    text = "".join(shown)
    for hostile in ("<script>window.__pwned=1", '<img src=x onerror="window.__pwned=1">',
                    "[click me](javascript:window.__pwned=1) **bold**",
                    "\\u202eevil\\u202c after \\u2066isolate\\u2069 \\x1b[31mred"):
        assert hostile in text  # shown, as text, with the bidi controls written out
    assert "\u202e" not in text
    # the decisions made by keys are what the release gate reads: regressions stand -> 6
    assert exit_code(["report", str(run), "--fail-on", "regressions"]) == 6
    assert "Reviewed regressions" in (run / "report.md").read_text(encoding="utf-8")


def test_long_answers_show_a_word_diff(tmp_path: Path, chromium: str, apps: list[App]) -> None:
    run = build_run(tmp_path / "world", target="long_answers")
    app = App(run, "--annotator", "gina")
    apps.append(app)
    with Browser(chromium, tmp_path / "profile") as browser:
        page = browser.page(app.url + "#q=q001")
        _ready(page)
        assert page.eval(CURRENT) == "q001"
        runs = page.eval("Array.prototype.map.call(document.querySelectorAll('#item .diff del,"
                         "#item .diff ins'),function(e){return e.tagName+':'+e.textContent;})")
        assert runs == ["DEL:northern", "INS:western", "DEL:three", "INS:four"]
        assert page.eval("document.querySelectorAll('#item .cols .answer').length") == 2
        assert page.errors == []


def test_labels_accepted_elsewhere_are_not_overwritten(tmp_path: Path, chromium: str,
                                                      apps: list[App]) -> None:
    from snapaudit.run.after.review import ReviewSession

    run = build_run(tmp_path / "world")
    app = App(run, "--label", "--sample", "3", "--annotator", "ivy")
    apps.append(app)
    with Browser(chromium, tmp_path / "profile") as browser:
        page = browser.page(app.url)
        _ready(page)
        qid = page.eval(CURRENT)
        # meanwhile another window of the same annotator saved this question: all unsure
        with ReviewSession.open(run, "ivy", sample=3) as other:
            item = next(i for i in other.label_items() if i.question_id == qid)
            other.save_labels(qid, dict.fromkeys(item.pairs, "unsure"))
        _label_current(page)
        status = page.wait("document.getElementById('status').className==='err'&&"
                           "document.getElementById('status').textContent")
        assert status.startswith(f"not saved ({qid}): question {qid}: labels of ivy were "
                                 "already accepted and cannot be changed"), status
        # the page then shows what the run holds, without a reload
        page.wait(f"{PROGRESS}==='1 / 3 labelled'")
        assert page.eval(CURRENT) == qid
        assert set(page.eval(SHOWN).values()) == {"unsure"}
        page.reload()
        _ready(page)
        page.click(f'#list button[data-qid="{qid}"]')
        page.wait(f"{CURRENT}==={json.dumps(qid)}")
        assert set(page.eval(SHOWN).values()) == {"unsure"}
        # the 409 of the refused save is the only error the page saw
        assert all("409" in e for e in page.errors), page.errors
