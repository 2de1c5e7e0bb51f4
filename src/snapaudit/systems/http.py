"""A deployed RAG service as a system: one HTTP endpoint per state.

The request body is the protocol's ``body_template`` with ``{question}``,
``{question_id}``, ``{state}``, ``{repeat}`` and ``{seed}`` substituted in its string
values (one pass, so a question containing braces is sent verbatim). The answer and the
optional document ids are read from the JSON reply by dotted paths (``a.b.0.c``). A field
whose whole value is ``"{evidence}"`` opts in to given evidence: ``snapaudit attribute`` puts
the counterfactual documents there (a list of ``{"id", "url", "text"}``), an audit ``null``
(the service retrieves itself).
With ``steps_path`` the reply's list there is the agent's trajectory: each item's
``step_tool``, ``step_input``, ``step_doc_ids`` and ``step_output`` paths (default ``tool``,
``input``, ``doc_ids``, ``output``) give a step (:mod:`snapaudit.tables.steps`).
A conversation's ``turns`` go in the body (a field whose whole value is ``"{turns}"``, else a
top-level ``turns``); its reply gives one answer per turn at ``turn_answers_path`` (default
``turn_answers``; ``answer_path`` may then be absent, else it must be the last).
An API key is read from the environment variable the protocol names, at call time; it is
never part of :meth:`HttpSystem.spec`, the ledger, logs or reports.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.systems.base import (
    AnswerCall,
    AnswerOutcome,
    reply_steps,
    reply_turns,
    text_hashes,
)
from snapaudit.systems.config import HttpSystemConfig, RunConfig
from snapaudit.systems.failure import R
from snapaudit.systems.redact import Secrets
from snapaudit.systems.replicas import ReplicaPool, call_replica
from snapaudit.systems.transport import HttpEndpoint
from snapaudit.tables.records import Step

_VAR = re.compile(r"\{(question|question_id|state|repeat|seed)\}")
_MISSING = object()
EVIDENCE = "{evidence}"
TURNS = "{turns}"


def render_body(template: Any, values: dict[str, str], evidence: Any = None,
                turns: list[str] | None = None) -> Any:
    """Substitute template variables in every string value of a JSON-like template; a value
    that is exactly ``"{evidence}"`` becomes ``evidence``, one exactly ``"{turns}"``
    becomes ``turns``."""
    if template == EVIDENCE:
        return evidence
    if template == TURNS:
        return turns
    if isinstance(template, str):
        return _VAR.sub(lambda m: values[m.group(1)], template)
    if isinstance(template, dict):
        return {k: render_body(v, values, evidence, turns) for k, v in template.items()}
    if isinstance(template, list):
        return [render_body(v, values, evidence, turns) for v in template]
    return template


def request_body(template: Any, values: dict[str, str], evidence: Any,
                 turns: tuple[str, ...] | None) -> Any:
    """The rendered body of one call; a conversation's ``turns`` (a list of strings) go in
    the template's fields whose whole value is ``"{turns}"``, else in a top-level ``turns``
    field (a single-turn question: unchanged, a ``"{turns}"`` field null)."""
    listed = None if turns is None else list(turns)
    body = render_body(template, values, evidence, listed)
    if listed is None or _has(template, TURNS):
        return body
    return {**body, "turns": listed}


def _has(template: Any, marker: str) -> bool:
    if template == marker:
        return True
    if isinstance(template, dict):
        return any(_has(v, marker) for v in template.values())
    return isinstance(template, list) and any(_has(v, marker) for v in template)


def takes_evidence(template: Any) -> bool:
    """Whether a body template has an ``"{evidence}"`` field."""
    return _has(template, EVIDENCE)


def lookup(obj: Any, path: str) -> Any:
    """Follow a dotted path (dict keys, list indexes); ``_MISSING`` when absent."""
    node = obj
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


class HttpSystem:
    """One state's endpoint."""

    def __init__(self, state: str, config: HttpSystemConfig, run: RunConfig,
                 pool: ReplicaPool | None = None, secrets: Secrets | None = None):
        self.state = state
        self.config = config
        self.accepts_evidence = takes_evidence(config.body_template)
        # the run's secrets (its auth token is added when first read), else its own
        self.secrets = secrets if secrets is not None else Secrets()
        self.endpoint = HttpEndpoint(config.url, concurrency=run.concurrency,
                                     timeout_s=run.timeout_s,
                                     rate_limit_per_s=run.rate_limit_per_s,
                                     max_response_bytes=run.max_response_bytes,
                                     secrets=self.secrets)
        # the run's pool of this endpoint ([run] replicas: other URLs serving it), else its own
        self.pool = pool if pool is not None else ReplicaPool([config.url])
        self._replicas = {url: self.endpoint if url == config.url else HttpEndpoint(
            url, concurrency=run.concurrency, timeout_s=run.timeout_s,
            rate_limit_per_s=run.rate_limit_per_s, max_response_bytes=run.max_response_bytes,
            secrets=self.secrets) for url in self.pool.urls}

    def spec(self) -> dict[str, Any]:
        data: dict[str, Any] = self.config.model_dump(mode="json")
        data["kind"] = "http"
        return data

    def _headers(self) -> dict[str, str]:
        headers = dict(self.config.headers)
        auth = self.config.auth
        if auth is not None:
            secret = os.environ.get(auth.env)
            if not secret:
                raise ConfigError(f"environment variable {auth.env} (systems.{self.state}.auth."
                                  "env) is not set")
            self.secrets.add(secret)
            headers[auth.header] = auth.prefix + secret
        return headers

    def check_credentials(self) -> None:
        self._headers()

    async def answer(self, call: AnswerCall) -> AnswerOutcome:
        values = {"question": call.question, "question_id": call.question_id,
                  "state": call.state, "repeat": str(call.repeat), "seed": str(call.seed)}
        docs = ([{"id": i, "url": u, "text": t} for i, u, t in call.evidence.documents]
                if call.evidence is not None and self.accepts_evidence else None)
        body = request_body(self.config.body_template, values, docs, call.turns)
        start = time.monotonic()
        headers = self._headers()
        replica, reply = await call_replica(
            self.pool, lambda url: self._replicas[url].call_json(self.config.method, body,
                                                                 headers))
        latency = time.monotonic() - start
        answer, turn_answers = self._answers(reply, call.turns)
        ids = self._doc_ids(reply)
        texts = (None if self.config.doc_texts_path is None
                 else lookup(reply, self.config.doc_texts_path))
        return AnswerOutcome(answer=answer, doc_ids=ids, latency_s=latency,
                             meta={"replica": replica} if replica else {},
                             doc_hashes=text_hashes(ids, None if texts is _MISSING else texts),
                             steps=self._steps(reply), turn_answers=turn_answers)

    def _answers(self, reply: Any, turns: tuple[str, ...] | None
                 ) -> tuple[str, tuple[str, ...] | None]:
        """(the final answer, the turn answers of a conversation) of a reply."""
        cfg = self.config
        answer = lookup(reply, cfg.answer_path)
        found = None if turns is None else lookup(reply, cfg.turn_answers_path)
        if found is not None and found is not _MISSING:  # the last; an answer must equal it
            return reply_turns(None if answer is _MISSING else answer, found, turns)
        if not isinstance(answer, str):
            raise TransportInvalid(R.SCHEMA, detail=f"no string at '{cfg.answer_path}'")
        return reply_turns(answer, None, turns)

    def _steps(self, reply: Any) -> tuple[Step, ...] | None:
        cfg = self.config
        if cfg.steps_path is None:
            return None
        found = lookup(reply, cfg.steps_path)
        if found is _MISSING or found is None:
            return None
        if not isinstance(found, list):
            raise TransportInvalid(R.SCHEMA, detail=f"'{cfg.steps_path}' is not a list of steps")
        paths = {"tool": cfg.step_tool, "input": cfg.step_input, "doc_ids": cfg.step_doc_ids,
                 "output": cfg.step_output}
        items = [{k: v for k, p in paths.items()
                  if p and (v := lookup(item, p)) is not _MISSING}  # "": not read
                 for item in found]
        return reply_steps(items)

    def _doc_ids(self, reply: Any) -> tuple[str, ...] | None:
        if self.config.doc_ids_path is None:
            return None
        found = lookup(reply, self.config.doc_ids_path)
        if found is _MISSING or found is None:
            return None
        if not isinstance(found, list) or not all(isinstance(d, str | int) for d in found):
            raise TransportInvalid(R.SCHEMA, detail=f"'{self.config.doc_ids_path}' is not a "
                                   "list of ids")
        return tuple(str(d) for d in found)

    async def aclose(self) -> None:
        for endpoint in self._replicas.values():
            await endpoint.aclose()
