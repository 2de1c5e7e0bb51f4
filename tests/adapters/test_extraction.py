"""The answer text and document ids the adapters take from real framework objects (no model)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from snapaudit.adapters.common import (
    DocIdError,
    answer_text,
    doc_id,
    doc_ids,
    doc_text,
    require,
    result,
)
from snapaudit.errors import ConfigError
from snapaudit.hashing import sha256_text
from snapaudit.systems.python import PythonCall, to_outcome
from tests.adapters.frameworks import LcBM25, require_frameworks

require_frameworks()  # before the frameworks' imports: skips where they are absent
from langchain_core.documents import Document  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from llama_index.core.base.llms.types import (  # noqa: E402
    ChatMessage,
    ChatResponse,
    CompletionResponse,
)
from llama_index.core.base.response.schema import Response  # noqa: E402
from llama_index.core.schema import NodeWithScore, TextNode  # noqa: E402


def _call(seed: int = 11, question: str = "capital of australia") -> PythonCall:
    return PythonCall(question=question, question_id="q1", state="old", repeat=1, seed=seed,
                      attempt=1)


def test_the_answer_comes_from_str_messages_responses_and_mappings() -> None:
    node = NodeWithScore(node=TextNode(text="t", id_="n1"), score=1.0)
    assert answer_text("Canberra") == "Canberra"
    assert answer_text(AIMessage(content="Canberra")) == "Canberra"
    assert answer_text(AIMessage(content=[{"type": "text", "text": "Can"}, "berra",
                                          {"type": "image_url", "image_url": "x"}])) == \
        "Canberra"
    assert answer_text(Response(response="Canberra", source_nodes=[node])) == "Canberra"
    assert answer_text(CompletionResponse(text="Canberra")) == "Canberra"
    assert answer_text(ChatResponse(message=ChatMessage(role="assistant",
                                                        content="Canberra"))) == "Canberra"
    assert answer_text({"answer": AIMessage(content="Canberra"), "context": []}) == "Canberra"
    with pytest.raises(TypeError, match=r"llama_index\.Response\.response is None"):
        answer_text(Response(response=None))
    with pytest.raises(TypeError, match=r"cannot take an answer from builtins\.int"):
        answer_text(42)


def test_document_ids_from_langchain_and_llamaindex_objects() -> None:
    assert doc_id(Document(page_content="x", id="p1")) == "p1"
    assert doc_id(Document(page_content="x", metadata={"doc_id": 7}), "doc_id") == "7"
    assert doc_id(NodeWithScore(node=TextNode(text="x", id_="n1"), score=0.5)) == "n1"
    node = TextNode(text="x", id_="n1", metadata={"source": "s9"})
    assert doc_id(NodeWithScore(node=node, score=0.5), "source") == "s9"
    assert doc_id(TextNode(text="x", id_="n2")) == "n2"
    assert doc_ids(["a", 3]) == ["a", "3"]


def test_document_texts_are_hashed_into_the_evidence() -> None:
    """The adapters return each document's text; the system keeps only its SHA-256."""
    assert doc_text(Document(page_content="x y", id="p1")) == "x y"
    assert doc_text(NodeWithScore(node=TextNode(text="z", id_="n1"), score=0.5)) == "z"
    assert doc_text("p1") is None  # a bare id has no text
    out = result("A", [Document(page_content="old text", id="p1")], None)
    assert out == {"answer": "A", "doc_ids": ["p1"], "doc_texts": ["old text"]}
    assert "doc_texts" not in result("A", ["p1"], None)
    outcome = to_outcome(out, 0.0)
    assert outcome.doc_hashes == (sha256_text("old text"),)


def test_a_missing_id_is_refused_naming_the_type_and_the_fix() -> None:
    with pytest.raises(DocIdError) as info:
        doc_id(Document(page_content="x"))
    assert str(info.value) == (
        "LangChain Document.id is None: set Document(id=...) or pass id_key='...' naming a "
        "metadata key that holds a stable id")
    with pytest.raises(DocIdError, match=r"^langchain_core\.Document\.metadata\['doc_id'\] "
                                         r"is None: put a stable id under 'doc_id'"):
        doc_id(Document(page_content="x", metadata={}), "doc_id")
    with pytest.raises(DocIdError, match=r"llama_index\.TextNode\.metadata\['src'\] is True"):
        doc_id(NodeWithScore(node=TextNode(text="x", metadata={"src": True}), score=0.1),
               "src")
    with pytest.raises(DocIdError, match=r"cannot take a document id from builtins\.float"):
        doc_id(1.5)
    assert isinstance(DocIdError("x"), ConfigError)


def test_a_missing_framework_names_the_extra() -> None:
    with pytest.raises(ConfigError, match=r"pip install 'snapaudit\[langchain\]'"):
        require("langchain_core_not_there", "langchain")


def _echo_llm(prompt: Any, seed: int | None = None) -> str:
    """An LLM stand-in whose answer is the seed it was bound to."""
    return f"seed {seed}"


def test_langchain_target_binds_the_seed_and_collects_the_retrieved_ids() -> None:
    from langchain_core.prompts import PromptTemplate
    from langchain_core.runnables import RunnableLambda

    from snapaudit.adapters.langchain import langchain_target, rag_chain

    docs = [Document(page_content="Canberra is the capital of Australia", id="p1"),
            Document(page_content="Everest is the highest mountain", id="p2"),
            Document(page_content="Au is the symbol of gold", id="p3"),
            Document(page_content="The capital of Australia is Canberra since 1913", id="p4")]
    built: list[str] = []

    def build(index: str, k: int = 1) -> Any:
        built.append(index)
        retriever = LcBM25.from_documents(docs if index == "v2" else docs[:3], k=k)
        prompt = PromptTemplate.from_template("{context}\n{question}")
        return rag_chain(retriever, prompt, RunnableLambda(_echo_llm))

    target = langchain_target(build)
    canberra = ["Canberra is the capital of Australia"]
    assert target(_call(11), index="v1") == {"answer": "seed 11", "doc_ids": ["p1"],
                                              "doc_texts": canberra}
    assert target(_call(12), index="v1")["answer"] == "seed 12"
    assert target(_call(5, "gold symbol"), index="v2") == {
        "answer": "seed 5", "doc_ids": ["p3"], "doc_texts": ["Au is the symbol of gold"]}
    assert len(target(_call(5), index="v2", k=2)["doc_ids"]) == 2
    assert built == ["v1", "v2", "v2"]  # once per distinct kwargs
    atarget = langchain_target(build, asynchronous=True)
    assert asyncio.iscoroutinefunction(atarget)
    assert asyncio.run(atarget(_call(13), index="v1")) == \
        {"answer": "seed 13", "doc_ids": ["p1"], "doc_texts": canberra}

    def no_ids(index: str) -> Any:
        retriever = LcBM25.from_documents([Document(page_content="Canberra")], k=1)
        return rag_chain(retriever, PromptTemplate.from_template("{context}{question}"),
                         RunnableLambda(_echo_llm))

    with pytest.raises(DocIdError, match=r"^LangChain Document\.id is None"):
        langchain_target(no_ids)(_call(), index="v1")
    by_key = langchain_target(lambda: LcBM25.from_documents(
        [Document(page_content="Canberra", metadata={"doc_id": "m1"})], k=1)
        | RunnableLambda(lambda d: {"answer": "Canberra", "context": d}), id_key="doc_id")
    assert by_key(_call()) == {"answer": "Canberra", "doc_ids": ["m1"],
                               "doc_texts": ["Canberra"]}


def test_llamaindex_target_passes_the_seed_to_the_llm_and_returns_node_ids() -> None:
    from llama_index.core.base.llms.types import LLMMetadata
    from llama_index.core.llms.custom import CustomLLM
    from llama_index.retrievers.bm25 import BM25Retriever

    from snapaudit.adapters.llamaindex import llamaindex_target, query_engine

    class EchoLLM(CustomLLM):  # type: ignore[misc]
        """An LLM stand-in answering with the seed it was called with."""

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata()

        def complete(self, prompt: str, formatted: bool = False,
                     **kwargs: Any) -> CompletionResponse:
            return CompletionResponse(text=f"seed {kwargs.get('seed')}")

        def stream_complete(self, prompt: str, formatted: bool = False,
                            **kwargs: Any) -> Any:
            yield self.complete(prompt, formatted, **kwargs)

    nodes = [TextNode(text="Canberra is the capital of Australia", id_="p1"),
             TextNode(text="Everest is the highest mountain", id_="p2"),
             TextNode(text="Au is the symbol of gold", id_="p3")]

    def build(k: int = 1) -> Any:
        retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k)
        return query_engine(retriever, EchoLLM())

    target = llamaindex_target(build)
    canberra = ["Canberra is the capital of Australia"]
    assert target(_call(21)) == {"answer": "seed 21", "doc_ids": ["p1"],
                                 "doc_texts": canberra}
    assert target(_call(22), k=2)["answer"] == "seed 22"
    atarget = llamaindex_target(build, asynchronous=True)
    assert asyncio.run(atarget(_call(23))) == {"answer": "seed 23", "doc_ids": ["p1"],
                                               "doc_texts": canberra}
