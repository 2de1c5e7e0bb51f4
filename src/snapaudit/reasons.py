"""Why an attempt failed: :class:`FailureReason`, the one vocabulary of failed attempts.

Every :class:`~snapaudit.errors.TransportInvalid` carries one (its ``reason``); the ledger
stores its value (``http_503``). What each reason means for a retry (the HTTP status policy,
the transient reasons) is :mod:`snapaudit.systems.failure`.
"""

from __future__ import annotations

from enum import StrEnum


class FailureReason(StrEnum):
    """Why one attempt failed (the ``reason`` of a ``transport_invalid`` ledger attempt)."""

    # the connection
    TIMEOUT = "timeout"  # no complete response within timeout_s
    CONNECTION = "connection"  # refused, reset or dropped
    # an HTTP status (see classify_status)
    HTTP_408 = "http_408"
    HTTP_409 = "http_409"
    HTTP_425 = "http_425"
    HTTP_429 = "http_429"  # rate limited; retry_after carries Retry-After
    HTTP_500 = "http_500"
    HTTP_502 = "http_502"
    HTTP_503 = "http_503"
    HTTP_504 = "http_504"
    HTTP_529 = "http_529"  # overloaded (Anthropic)
    HTTP_5XX = "http_5xx"  # another server error (501, 505, 520, ...)
    RETRY_AFTER_OVER_CAP = "retry_after_over_cap"  # the server asked to wait too long
    # the body
    RESPONSE_TOO_LARGE = "response_too_large"  # over max_response_bytes (wire or decoded)
    MALFORMED_JSON = "malformed_json"  # a body that is not usable JSON
    MALFORMED_BODY = "malformed_body"  # a corrupt encoding, or JSON without expected fields
    SCHEMA = "schema"  # a reply without the configured answer/doc-id/result paths
    EMPTY_RESPONSE = "empty_response"  # a message without content (e.g. a refusal)
    # the answer
    INVALID_ANSWER = "invalid_answer"
    EMPTY_ANSWER = "empty_answer"
    OVERSIZED_ANSWER = "oversized_answer"
    # in-process systems and generators
    EXCEPTION = "exception"  # a Python system's callable raised
    WORKER_DIED = "worker_died"  # a Python system's worker process crashed (signal named)
    PROMPT_TOO_LONG = "prompt_too_long"
    LOCAL_ERROR = "local_error"
    # provider batches
    BATCH_REQUEST_ERROR = "batch_request_error"  # a request that failed inside its batch
    BATCH_EXPIRED = "batch_expired"
    BATCH_CANCELLED = "batch_cancelled"
    BATCH_FAILED = "batch_failed"
    BATCH_MISSING_RESULT = "batch_missing_result"
    BATCH_FORGOTTEN = "batch_forgotten"  # its batch ended by `snapaudit run --forget-batch`
