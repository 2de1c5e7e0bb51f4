"""``response_format = "auto"``: find the structured-output dialect a server accepts and
honours, with one small probe call per dialect, before the run writes anything.

The dialects are tried in :data:`PROBE_ORDER`; the first whose reply parses as the
requested JSON answer object (``{"answer": ...}``) wins, and ``text`` (nothing requested,
the bare-answer parser) is the last resort. A connection error or a timeout stops the probe
(the server, not the dialect, is the problem); a missing key is the preflight's message.
"""

from __future__ import annotations

from collections.abc import Callable

from snapaudit.errors import BackendError, SnapauditError, TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.testbed.generate.base import GenerationRequest
from snapaudit.testbed.generate.config import OpenAIGeneratorConfig
from snapaudit.testbed.prompt import (
    ANSWER_SCHEMA,
    SYSTEM_PROMPT,
    parse_answer,
    parse_bare_answer,
    user_message,
)

PROBE_ORDER = ("json_schema", "json_object_schema", "guided_json", "ollama_format", "text")
PROBE_QUESTION = "What is the capital of France?"
_FATAL = (R.CONNECTION, R.TIMEOUT)


def probe_request(dialect: str, max_tokens: int) -> GenerationRequest:
    """The one request a probe sends in ``dialect`` (fixed prompt, seed 0)."""
    return GenerationRequest(system=SYSTEM_PROMPT, user=user_message(PROBE_QUESTION, None),
                             seed=0, json_schema=None if dialect == "text" else ANSWER_SCHEMA,
                             max_tokens=max_tokens)


async def probe_dialect(config: OpenAIGeneratorConfig,
                        tried: Callable[[str, str], None] | None = None) -> str:
    """The first dialect of :data:`PROBE_ORDER` that ``config``'s endpoint accepts and
    honours; BackendError (with what each dialect got) when none does. ``tried(dialect,
    why)`` hears about each dialect that was refused or not honoured."""
    from snapaudit.testbed.generate.openai import OpenAIGenerator

    refused: list[str] = []
    for dialect in PROBE_ORDER:
        generator = OpenAIGenerator(config.model_copy(update={"response_format": dialect}))
        try:
            result = await generator.generate(probe_request(dialect, config.max_tokens))
            (parse_bare_answer if dialect == "text" else parse_answer)(result.text)
            return dialect
        except TransportInvalid as exc:
            if exc.reason in _FATAL:
                raise BackendError(f"generator endpoint {config.base_url}: the "
                                   f"response_format probe failed: {exc}") from None
            why = f"{exc}{': ' + exc.body if exc.body else ''}"
        except SnapauditError as exc:
            why = str(exc)
        finally:
            await generator.aclose()
        refused.append(f"{dialect}: {why}")
        if tried is not None:
            tried(dialect, why)
    raise BackendError(f"generator endpoint {config.base_url} (model {config.model}) honoured "
                       "no response_format dialect; set generator.response_format explicitly. "
                       "What each dialect got:\n  " + "\n  ".join(refused))
