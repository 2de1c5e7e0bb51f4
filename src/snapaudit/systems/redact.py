"""Secrets never reach a record or a message: masking, safe excerpts of response bodies.

Every API key snapaudit reads from the environment is registered in the :class:`Secrets` of
the run that reads it (``RunResources.secrets``), never in this module: two runs in one
process share none. Each client masks its own; the run masks all of its secrets in what it
records and raises. :func:`redact` masks the secrets it is given and anything that
looks like a credential (``Bearer <token>``, ``sk-...`` keys, long hex or base64 runs),
removes terminal escape sequences and shows every other control or bidi character as an
escape. A response body is never stored or shown verbatim: :func:`body_excerpt` keeps its
length, a SHA-256 prefix and a short redacted excerpt. The ledger redacts every error it
stores and the CLI every error it prints, so a key a service echoes back stays out of the
ledger, the exported artifact, the report and the terminal.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator

MASK = "[REDACTED]"
EXCERPT_CHARS = 80
MESSAGE_CHARS = 160  # with a hint, within the 300 characters a failing run quotes
_MESSAGE_BODY_BYTES = 65536  # larger error bodies are only described
_MIN_SECRET = 6

_LOOKALIKES = (
    re.compile(r"(?i)\b(bearer|basic|token)(\s+|[=:]\s*)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)\b(api[_-]?key|x-api-key|secret|password)([\"']?\s*[=:]\s*[\"']?)"
               r"[^\s\"',;&]{6,}"),
    re.compile(r"\b(?:sk|pk|rk|ak)-[A-Za-z0-9_-]{8,}"),
    re.compile(r"\b[0-9a-fA-F]{32,}\b"),
    re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{40,}={0,2}"),
)
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")
# CSI, OSC (terminated by BEL or ST), other two-byte ESC sequences.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                      r"|\x9b[0-?]*[ -/]*[@-~]|\x1b[@-_]?")


class Secrets:
    """The secrets one run read from its environment (API keys, auth tokens): added by what
    reads them, masked wherever the run passes them (an iterable of the values added so far;
    threads may add while others read)."""

    def __init__(self, *values: str | None) -> None:
        self._lock = threading.Lock()
        self._values: frozenset[str] = frozenset()
        for value in values:
            self.add(value)

    def add(self, value: str | None) -> None:
        """Mask ``value`` from now on (a value under 6 characters is too common to mask)."""
        if value and len(value) >= _MIN_SECRET:
            with self._lock:
                self._values = self._values | {value}

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)  # a snapshot: the set is replaced, never changed

    def __len__(self) -> int:
        return len(self._values)


def _mask_lookalike(match: re.Match[str]) -> str:
    if not match.groups() and not (_DIGIT.search(match[0]) and _LETTER.search(match[0])):
        return match[0]  # a long word or a run of one kind of character, not a key
    groups = [g for g in match.groups() if g is not None]
    return "".join(groups) + MASK if groups else MASK


def mask_secrets(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with the secrets ``extra`` and credential look-alikes masked."""
    return _mask_lookalikes(_mask_known(text, extra))


def _mask_known(text: str, extra: Iterable[str]) -> str:
    known = sorted({s for s in extra if s}, key=len, reverse=True)
    for secret in known:
        text = text.replace(secret, MASK)
    return text


def _mask_lookalikes(text: str) -> str:
    for pattern in _LOOKALIKES:
        text = pattern.sub(_mask_lookalike, text)
    return text


def visible(text: str, keep: str = "") -> str:
    """Terminal escape sequences removed; other control, format (bidi), private-use and
    line-separator characters (except those in ``keep``) shown as ``\\xNN``/``\\uNNNN``."""
    text = _ESCAPES.sub("", text)
    return "".join(c if c in keep else _show(c) for c in text)


def _show(char: str) -> str:
    if unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """What may be stored of ``text``: the secrets ``extra`` and look-alikes masked, escapes
    removed."""
    return visible(mask_secrets(text, extra), keep="\n\t")


def redact_message(text: str, extra: Iterable[str] = ()) -> str:
    """What may be printed of an error message: the secrets ``extra`` masked, escapes removed
    (hashes and ids in the message stay readable; the clients and the run masked their
    secrets when they built it)."""
    return visible(_mask_known(text, extra), keep="\n\t")


def server_message(raw: bytes, extra: Iterable[str] = ()) -> str | None:
    """The server's own words in an error body (``error.message``, ``error`` as a string,
    ``detail`` or ``message`` of a JSON object), redacted, on one line, at most
    :data:`MESSAGE_CHARS` characters; None when the body has none."""
    if not raw.lstrip().startswith(b"{") or len(raw) > _MESSAGE_BODY_BYTES:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    error = value.get("error")
    found = next((m for m in (error.get("message") if isinstance(error, dict) else error,
                              value.get("detail"), value.get("message"))
                  if isinstance(m, str) and m.strip()), None)
    if found is None:
        return None
    text = redact(" ".join(_mask_known(found, extra).split()), extra)
    return text[:MESSAGE_CHARS] + ("..." if len(text) > MESSAGE_CHARS else "")


def body_excerpt(raw: bytes, extra: Iterable[str] = ()) -> str:
    """``N bytes, sha256 PREFIX, starts 'EXCERPT'``: a body described, never copied; when
    the body carries the server's own message (:func:`server_message`) it comes first:
    ``server says 'MESSAGE'; N bytes, ...``."""
    said = server_message(raw, extra)
    prefix = f"server says '{said}'; " if said is not None else ""
    digest = hashlib.sha256(raw).hexdigest()[:16]
    # Known secrets are masked in the whole text before it is cut (a secret cut in two
    # would escape the mask); look-alikes only near the excerpt (linear in the body).
    text = _mask_known(raw.decode("utf-8", "replace"), extra)
    head = _mask_lookalikes(text[:EXCERPT_CHARS + 512])
    shown = visible(head[:EXCERPT_CHARS])
    more = "..." if len(head) > EXCERPT_CHARS else ""
    return f"{prefix}{len(raw)} bytes, sha256 {digest}, starts '{shown}{more}'"
