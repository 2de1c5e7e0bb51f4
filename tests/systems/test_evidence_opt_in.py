"""Systems that opt in to given evidence (``snapaudit attribute``): a Python target with an
``evidence`` keyword, an HTTP body template with an ``"{evidence}"`` field."""

from __future__ import annotations

from typing import Any

from snapaudit.systems.http import render_body, takes_evidence
from snapaudit.systems.python import PythonCall, accepts_evidence
from tests.fakes.python_systems import flaky, retrieving

VALUES = {"question": "q {x}", "question_id": "q1", "state": "new", "repeat": "2",
          "seed": "9"}


def test_a_python_target_opts_in_by_naming_the_keyword() -> None:
    def keyword_only(call: PythonCall, *, evidence: Any = None) -> str:
        return "x"

    def catch_all(call: PythonCall, **kwargs: Any) -> str:
        return "x"

    assert accepts_evidence(retrieving) and accepts_evidence(keyword_only)
    assert not accepts_evidence(flaky) and not accepts_evidence(catch_all)
    assert not accepts_evidence(len)  # a builtin without evidence


def test_an_evidence_field_receives_the_documents_and_is_null_in_an_audit() -> None:
    template = {"question": "{question}", "ctx": {"docs": "{evidence}"}, "k": ["{repeat}"]}
    docs = [{"id": "d1", "url": "https://x/d1", "text": "t {question}"}]
    assert takes_evidence(template) and not takes_evidence({"question": "{question}"})
    assert render_body(template, VALUES, docs) == {
        "question": "q {x}", "ctx": {"docs": docs}, "k": ["2"]}  # the texts are not templated
    assert render_body(template, VALUES) == {"question": "q {x}", "ctx": {"docs": None},
                                             "k": ["2"]}
    assert render_body({"note": "see {evidence} here"}, VALUES) == {
        "note": "see {evidence} here"}  # only a whole value opts in
