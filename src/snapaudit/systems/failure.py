"""The one vocabulary of failed attempts, :class:`FailureReason` (defined in
:mod:`snapaudit.reasons`, below the errors), and its HTTP status policy.

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

from snapaudit.reasons import FailureReason as FailureReason

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
