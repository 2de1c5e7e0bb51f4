"""The one vocabulary of failed attempts: :class:`FailureReason` and its HTTP status policy.

Every :class:`~snapaudit.errors.TransportInvalid` carries one of these reasons (a
``StrEnum``: the ledger stores its value, e.g. ``http_503``), whichever call failed: an HTTP
system (:mod:`snapaudit.systems.http`), a generator or judge backend, a batch API call or a
hosted retriever all go through the one client in :mod:`snapaudit.systems.transport`, so
one HTTP status gives one reason and one retry decision everywhere.

**HTTP status policy** (:func:`classify_status`): 429, 408, 409, 425 and every 5xx are
retryable (``http_<code>``; a 5xx without a member of its own is ``http_5xx``); every other
4xx means the request or the configuration is wrong and is fatal (404:
:class:`~snapaudit.errors.NotFoundError`, the rest :class:`~snapaudit.errors.BackendError`),
never retried. :data:`TRANSIENT` reasons (timeouts, dropped connections, 408/425/429,
502/503/504/529, a Retry-After over the cap, an expired or cancelled batch request) say a
service is briefly unavailable: they never make a stage fail fast
(:mod:`snapaudit.run.execution.failures`).
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


R = FailureReason
RETRYABLE_4XX = frozenset({408, 409, 425, 429})
_BY_STATUS = {408: R.HTTP_408, 409: R.HTTP_409, 425: R.HTTP_425, 429: R.HTTP_429,
              500: R.HTTP_500, 502: R.HTTP_502, 503: R.HTTP_503, 504: R.HTTP_504,
              529: R.HTTP_529}

TRANSIENT: frozenset[str] = frozenset({
    R.TIMEOUT, R.CONNECTION, R.HTTP_408, R.HTTP_425, R.HTTP_429, R.HTTP_502, R.HTTP_503,
    R.HTTP_504, R.HTTP_529, R.RETRY_AFTER_OVER_CAP, R.BATCH_EXPIRED, R.BATCH_CANCELLED})


def classify_status(status: int) -> FailureReason | None:
    """The retryable reason of an HTTP error status; None when the status is fatal (a 4xx
    other than 408/409/425/429) or not an error."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if 500 <= status <= 599:
        return R.HTTP_5XX
    return None


def is_transient(reason: str) -> bool:
    """Whether ``reason`` says the service is briefly unavailable (never fail fast on it)."""
    return reason in TRANSIENT
