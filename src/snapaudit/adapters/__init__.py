"""Adapters from RAG frameworks to Python-system targets (``[system] kind = "python"``).

* :mod:`snapaudit.adapters.langchain`: a LangChain runnable, or a retriever + prompt + LLM
  (extra ``snapaudit[langchain]``).
* :mod:`snapaudit.adapters.llamaindex`: a LlamaIndex query engine, or a retriever + LLM, or
  an agent workflow (:mod:`snapaudit.adapters.llamaindex_agent`; extra
  ``snapaudit[llamaindex]``).
* :mod:`snapaudit.adapters.langgraph`: a LangGraph compiled graph or prebuilt ReAct agent
  (extra ``snapaudit[langgraph]``).
* :mod:`snapaudit.adapters.trajectory`: what the agent adapters share: a tool call as a
  step, the steps in the model's order, an agent's reply with ``steps``.
* :mod:`snapaudit.adapters.common`: what both share: the answer text of a framework's return
  value, stable document ids (refusing ``None``), the per-call seed, one lock per llama.cpp
  model.

The frameworks are imported lazily, when a target is built or called: importing this package
needs neither, and a missing one is a :class:`~snapaudit.errors.ConfigError` naming the extra.
"""
