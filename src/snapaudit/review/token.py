"""The per-session secret every request of the review app must carry.

The token is drawn with :func:`secrets.token_urlsafe` when a server starts and printed once
in its URL (``?token=``). The page sends it back in the ``X-Review-Token`` header; the server
also sets it as a cookie (named after the port, so two servers on one host keep their own),
so a reload of a URL without the query still works. Comparisons use
:func:`hmac.compare_digest`.
"""

from __future__ import annotations

import hmac
import secrets
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs, urlsplit

HEADER = "X-Review-Token"


class SessionToken:
    """One server's token."""

    def __init__(self, value: str | None = None) -> None:
        self.value = value if value is not None else secrets.token_urlsafe(32)

    def matches(self, candidate: str | None) -> bool:
        if not candidate:
            return False
        return hmac.compare_digest(candidate.encode("utf-8", "replace"),
                                   self.value.encode("utf-8"))

    def cookie_name(self, port: int) -> str:
        return f"snapaudit_review_{port}"

    def set_cookie(self, port: int) -> str:
        """The ``Set-Cookie`` value: not readable by script, never sent cross-site."""
        return (f"{self.cookie_name(port)}={self.value}; Path=/; HttpOnly; SameSite=Strict; "
                "Max-Age=86400")

    def carried(self, path: str, header: str | None, cookie: str | None, port: int,
                *, query_ok: bool) -> bool:
        """Whether a request carries this token: in the header, the cookie, or (only where
        ``query_ok``: the page itself) the URL's ``?token=``."""
        if self.matches(header):
            return True
        if cookie:
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(cookie)
            except CookieError:
                jar = SimpleCookie()
            morsel = jar.get(self.cookie_name(port))
            if morsel is not None and self.matches(morsel.value):
                return True
        if query_ok:
            values = parse_qs(urlsplit(path).query).get("token", [])
            return any(self.matches(v) for v in values[:1])
        return False
