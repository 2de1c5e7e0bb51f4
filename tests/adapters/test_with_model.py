"""The adapters on real pipelines with the embedded SmolLM2 model: BM25 over two index
versions, a prompt, a llama.cpp LLM; answers, stable ids, the seed, sync and async."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from snapaudit.adapters.common import DocIdError
from snapaudit.systems.python import PythonCall
from tests.adapters.frameworks import LcBM25, require_frameworks

require_frameworks()
from langchain_core.documents import Document  # noqa: E402
from langchain_core.prompts import PromptTemplate  # noqa: E402
from llama_index.core.schema import TextNode  # noqa: E402
from llama_index.retrievers.bm25 import BM25Retriever  # noqa: E402

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]

PASSAGES = {"p1": "The capital of Australia is Canberra.",
            "p2": "Mount Everest is the highest mountain above sea level.",
            "p3": "The chemical symbol for gold is Au."}
NEWER = {"p4": "Since 2024 the capital of the region is Northport."}
V2 = {**PASSAGES, **NEWER}
CHATML = ("<|im_start|>user\nPassages:\n{context}\n\nQuestion: {question}<|im_end|>\n"
          "<|im_start|>assistant\n")


def _call(seed: int, question: str = "What is the capital of Australia?") -> PythonCall:
    return PythonCall(question=question, question_id="q1", state="old", repeat=1, seed=seed,
                      attempt=1)


def _passages(index: str) -> dict[str, str]:
    return V2 if index == "v2" else PASSAGES


def _check(target: Callable[..., Any], atarget: Callable[..., Any]) -> None:
    """Answers and ids of one adapter's targets (sync and async over the same pipelines)."""
    first = target(_call(7), index="v1")
    assert isinstance(first["answer"], str) and first["answer"].strip()
    assert first["doc_ids"][0] == "p1" and set(first["doc_ids"]) <= set(PASSAGES)
    target(_call(3, "What is the chemical symbol for gold?"), index="v1")  # another prompt
    assert target(_call(7), index="v1") == first  # the same seed: the same answer
    assert asyncio.run(atarget(_call(7), index="v1")) == first
    story = "Tell a short story about mountains."
    answers = {target(_call(seed, story), index="v1")["answer"] for seed in (1, 2, 3)}
    assert len(answers) > 1  # the seed reaches the sampler
    newer = target(_call(7, "What is the capital of the region since 2024?"), index="v2")
    assert newer["doc_ids"][0] == "p4"
    assert "p1" in target(_call(7), index="v2", k=3)["doc_ids"]  # the same id in both indexes


@pytest.fixture(scope="module")
def lc_llm(smollm2_path: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.llms import LlamaCpp
    return LlamaCpp(model_path=str(smollm2_path), n_ctx=512, n_batch=256, max_tokens=8,
                    temperature=1.0, stop=["<|im_end|>"], seed=0, verbose=False)


def test_langchain_bm25_prompt_llamacpp(lc_llm: Any) -> None:
    from snapaudit.adapters.langchain import langchain_target, rag_chain

    def build(index: str, k: int = 2, ids: bool = True) -> Any:
        docs = [Document(page_content=t, id=i if ids else None)
                for i, t in _passages(index).items()]
        return rag_chain(LcBM25.from_documents(docs, k=k),
                         PromptTemplate.from_template(CHATML), lc_llm)

    _check(langchain_target(build), langchain_target(build, asynchronous=True))
    with pytest.raises(DocIdError, match=r"^LangChain Document\.id is None: set "
                                         r"Document\(id=\.\.\.\) or pass id_key="):
        langchain_target(build)(_call(7), index="v1", ids=False)


@pytest.fixture(scope="module")
def li_llm(smollm2_path: Path) -> Any:
    from llama_index.llms.llama_cpp import LlamaCPP

    return LlamaCPP(model_path=str(smollm2_path), temperature=1.0, max_new_tokens=8,
                    context_window=1024, generate_kwargs={"stop": ["<|im_end|>"]},
                    completion_to_prompt=lambda p: f"<|im_start|>user\n{p}<|im_end|>\n"
                                                   "<|im_start|>assistant\n",
                    verbose=False)


def test_llamaindex_bm25_query_engine_llamacpp(li_llm: Any) -> None:
    from llama_index.core import PromptTemplate as QaTemplate

    from snapaudit.adapters.llamaindex import llamaindex_target, query_engine

    qa = QaTemplate("Passages:\n{context_str}\n\nQuestion: {query_str}")

    def build(index: str, k: int = 2, ids: bool = True) -> Any:
        nodes = [TextNode(text=t, id_=i) if ids else TextNode(text=t)
                 for i, t in _passages(index).items()]
        return query_engine(BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k),
                            li_llm, text_qa_template=qa)

    _check(llamaindex_target(build), llamaindex_target(build, asynchronous=True))
    v1 = llamaindex_target(build)(_call(7), index="v1", ids=False)["doc_ids"]
    v2 = llamaindex_target(build)(_call(7), index="v2", ids=False)["doc_ids"]
    assert len(v1[0]) == 36 and not set(v1) & set(v2)  # random UUIDs, new per build


def test_a_bare_llama_cpp_model_is_seeded_and_locked(smollm2_path: Path) -> None:
    from llama_cpp import Llama

    from snapaudit.adapters.common import model_lock, seed_scope
    from snapaudit.adapters.llamaindex import seeded_llm

    model = Llama(model_path=str(smollm2_path), n_ctx=256, verbose=False)
    llm = seeded_llm(model, generate_kwargs={"temperature": 1.0}, max_tokens=8)
    prompt = "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n"

    def draw(seed: int) -> str:
        with seed_scope(seed):
            return str(llm.complete(prompt, formatted=True).text)

    first = draw(5)
    draw(6)
    assert draw(5) == first
    assert model_lock(model) is model_lock(model)
    assert llm.metadata.context_window == 256


def test_a_langgraph_graph_on_a_seeded_llama_cpp_chat_model(smollm2_path: Path) -> None:
    """A compiled graph whose one node calls ``seeded_chat_model(ChatLlamaCpp)``: the call's
    seed reaches llama.cpp (the same seed, the same answer, whatever ran before), and a graph
    that calls no tool returns an empty trajectory."""
    pytest.importorskip("langgraph.graph", reason="langgraph not installed "
                        "(pip install -e '.[langgraph]')")
    from langchain_community.chat_models import ChatLlamaCpp
    from langgraph.graph import START, MessagesState, StateGraph

    from snapaudit.adapters.langgraph import langgraph_target, seeded_chat_model

    model = seeded_chat_model(ChatLlamaCpp(model_path=str(smollm2_path), n_ctx=256,
                                           max_tokens=8, temperature=1.0, seed=0,
                                           verbose=False))

    def build() -> Any:
        graph = StateGraph(MessagesState)
        graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
        graph.add_edge(START, "model")
        return graph.compile()

    target = langgraph_target(build)
    story = "Tell a short story about mountains."
    first = target(_call(5, story))
    assert first["steps"] == [] and first["doc_ids"] == []
    target(_call(6, "Name a colour."))
    assert target(_call(5, story)) == first
    assert len({target(_call(seed, story))["answer"] for seed in (1, 2, 3)}) > 1
