"""A retrieved document without a stable id stops a LangChain pipeline before its LLM is
called, and stops the run at its first attempt (retrying cannot give it an id): no paid
call is made for a pipeline whose ids are missing."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.frameworks import require_frameworks
from tests.helpers.cli import snapaudit
from tests.helpers.ledger_view import query
from tests.helpers.protocol import init_python_template

require_frameworks()

PIPELINE = '''
import warnings
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnableLambda

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.retrievers import BM25Retriever

from snapaudit.adapters.langchain import langchain_target, rag_chain

CALLS = Path(__file__).with_name("llm_calls.txt")
TEXTS = ["Paris is the capital of France", "Jupiter is the largest planet"]


def paid_llm(prompt, seed=None):
    with open(CALLS, "a") as f:
        f.write("one paid call\\n")
    return "Paris"


def build(index="v1"):
    docs = [Document(page_content=t) for t in TEXTS]  # no id=: Document.id is None
    retriever = BM25Retriever.from_documents(docs, k=1)
    return rag_chain(retriever, PromptTemplate.from_template("{context} {question}"),
                     RunnableLambda(paid_llm))


answer = langchain_target(build)
'''


def test_a_missing_document_id_costs_no_model_call(tmp_path: Path) -> None:
    proto = init_python_template(tmp_path, PIPELINE)
    out = snapaudit("run", str(proto), "--run-dir", "run", "--progress", "silent",
                    cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "the target raised DocIdError: LangChain Document.id is None" in out.stderr
    assert "not retried" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "llm_calls.txt").exists()  # stopped before the LLM
    outcomes = query(tmp_path / "run" / "ledger.sqlite",
                     "SELECT outcome, COUNT(*) FROM attempts GROUP BY outcome ORDER BY 1")
    # not retried: the calls already in flight ([run] concurrency = 4) end, nothing after
    assert set(dict(outcomes)) <= {"error", "interrupted"}, outcomes
    assert 1 <= dict(outcomes)["error"] <= 4
