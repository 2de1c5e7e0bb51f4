"""Label Studio and Argilla: the sample out as pair tasks, finished annotations back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from snapaudit.errors import ConfigError
from snapaudit.run.after.label_exchange import export_tasks, import_annotations
from snapaudit.run.after.review import ReviewSession
from snapaudit.stats.normalize import normalize_nq
from tests.helpers.review import copy_run


@pytest.fixture
def run(built_review_run: Path, tmp_path: Path) -> Path:
    return copy_run(built_review_run, tmp_path)


def _label(task: dict[str, Any]) -> str:
    """A person's answer: same when the normalized texts match, unsure on pair A|C."""
    if task["pair"] == "A|C":
        return "unsure"
    return "same" if normalize_nq(task["answer_a"]) == normalize_nq(task["answer_b"]) \
        else "different"


def _labelstudio_done(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The export as Label Studio writes it once every task is annotated."""
    return [{"id": i, "data": t["data"], "annotations": [{
        "id": 100 + i, "was_cancelled": False, "completed_by": 1,
        "result": [{"id": f"r{i}", "from_name": "label", "to_name": "answer_a",
                    "type": "choices", "origin": "manual",
                    "value": {"choices": [_label(t["data"])]}}]}]}
        for i, t in enumerate(tasks, start=1)]


def _saved(run: Path, annotator: str, sample: int) -> dict[str, Any]:
    with ReviewSession.open(run, annotator, sample=sample) as s:
        assert s.progress().labels_locked
        return {i.question_id: i.saved for i in s.label_items()}


def _expected(tasks: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for t in tasks:
        out.setdefault(t["question_id"], {})[t["pair"]] = _label(t)
    return out


def test_a_label_studio_export_re_imports_to_the_same_labels(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks.json"
    assert export_tasks(run, "labelstudio", out, sample=3) == 3 * 6
    tasks = json.loads(out.read_text())
    config = (tmp_path / "tasks.labeling.xml").read_text()
    assert '<Choices name="label" toName="answer_a"' in config and "$answer_b" in config
    assert set(tasks[0]["data"]) == {"question_id", "pair", "sample", "question", "answer_a",
                                     "answer_b"}
    done = tmp_path / "done.json"
    done.write_text(json.dumps(_labelstudio_done(tasks)))
    assert import_annotations(run, done, "ls") == 3
    assert _saved(run, "ls", 3) == _expected([t["data"] for t in tasks])
    minimal = tmp_path / "min.json"  # Label Studio's JSON-MIN export
    minimal.write_text(json.dumps([{**t["data"], "label": _label(t["data"])} for t in tasks]))
    assert import_annotations(run, minimal, "ls-min") == 3
    assert _saved(run, "ls-min", 3) == _saved(run, "ls", 3)


def test_an_argilla_export_re_imports_to_the_same_labels(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    assert export_tasks(run, "argilla", out, sample=2) == 12
    records = [json.loads(x) for x in out.read_text().splitlines()]
    settings = json.loads((tmp_path / "records.settings.json").read_text())
    assert [q["name"] for q in settings["questions"]] == ["label"]
    assert set(records[0]["fields"]) == {"question", "answer_a", "answer_b"}
    flat = [{**r["fields"], **r["metadata"]} for r in records]
    nested = tmp_path / "nested.jsonl"
    nested.write_text("".join(json.dumps({**r, "responses": {"label": [
        {"value": _label(f), "user_id": "u1", "status": "submitted"}]}}) + "\n"
        for r, f in zip(records, flat, strict=True)))
    assert import_annotations(run, nested, "arg") == 2
    assert _saved(run, "arg", 2) == _expected(flat)
    flattened = tmp_path / "flat.jsonl"  # records.to_list(flatten=True)
    flattened.write_text("".join(json.dumps({
        "id": r["id"], **r["fields"], "metadata": r["metadata"],
        "label.responses": [_label(f)], "label.responses.users": ["u1"],
        "label.responses.status": ["submitted"]}) + "\n"
        for r, f in zip(records, flat, strict=True)))
    assert import_annotations(run, flattened, "arg-flat") == 2
    assert _saved(run, "arg-flat", 2) == _expected(flat)


def test_bad_annotation_files_are_refused_naming_the_task(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    export_tasks(run, "argilla", out, sample=2)
    records = [json.loads(x) for x in out.read_text().splitlines()]

    def answered(r: dict[str, Any], value: str = "same") -> dict[str, Any]:
        return {**r, "responses": {"label": [{"value": value, "status": "submitted"}]}}

    def refused(rows: list[dict[str, Any]], message: str) -> None:
        bad = tmp_path / "bad.jsonl"
        bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with pytest.raises(ConfigError, match=message):
            import_annotations(run, bad, "bad")

    full = [answered(r) for r in records]
    refused([*full, full[0]], re.escape(f"line 13: question {records[0]['metadata']['question_id']}"
                                        f" pair A|B is given twice (first at line 1)"))
    refused(full[1:], "lacks the pair\\(s\\) A\\|B")
    unknown = {**full[0], "metadata": {**full[0]["metadata"], "pair": "A|Z"}}
    refused([unknown, *full[1:]], re.escape("line 1: question") + ".* has no pair 'A\\|Z'")
    refused([records[0], *full[1:]], "line 1: expected exactly one finished answer, found 0")
    refused([answered(records[0], "maybe"), *full[1:]], "line 1: label 'maybe'")
    stranger = {**full[0], "metadata": {**full[0]["metadata"], "question_id": "nope"}}
    refused([stranger], "line 1: question 'nope' is not in the label sample")
    with ReviewSession.open(run, "bad", sample=2) as s:
        assert s.progress().labelled == 0  # nothing was saved
