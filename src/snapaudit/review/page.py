"""The review page: one HTML document with the report's look, one script allowed by hash.

The Content-Security-Policy (sent as a header and, less ``frame-ancestors``, in a
``<meta>``) allows nothing but the page's own inline style and script (each by its
SHA-256) and ``fetch`` to this server (``connect-src 'self'``): no other script, no
image, no frame, no form target, no network.
The script (``static/review.js``) builds every element itself and puts every string it
receives into ``textContent`` (inside a ``<bdi>``); it has no ``innerHTML`` and no inline
handlers. The token and the mode reach the script in ``<meta>`` elements.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape
from importlib.resources import files

from snapaudit.report.html import _CSS as REPORT_CSS

_STATIC = files("snapaudit.review").joinpath("static")
JS = _STATIC.joinpath("review.js").read_text(encoding="utf-8")
CSS = REPORT_CSS + _STATIC.joinpath("review.css").read_text(encoding="utf-8")


def _sha(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


META_CSP = ("default-src 'none'; "
            f"script-src '{_sha(JS)}'; style-src '{_sha(CSS)}'; connect-src 'self'; "
            "img-src 'none'; base-uri 'none'; form-action 'none'")
CSP = META_CSP + "; frame-ancestors 'none'"  # the header only: a <meta> cannot carry it

KEYS = (
    ("j / ↓ / →", "next question (label mode: next pair)"),
    ("k / ↑ / ←", "previous question (label mode: previous pair)"),
    ("s  d  u", "label the current pair same / different / unsure"),
    ("1 … 9", "label mode: put the next ungrouped answer in group n; once every answer "
            "has a group, the pair labels follow (same group: same)"),
    ("r  i  n  c", "mark the change regression / improvement / neutral / can't tell"),
    ("e", "change review: write a note (Enter saves it with the marked decision)"),
    ("L  L", "blind labels: lock my labels (press twice); results.json and the report follow"),
    ("/", "search questions and answers: Enter goes to the first match, Esc back; "
          "either clears the search"),
    ("Esc", "leave the note field; clear the search"),
    ("h", "show or hide these keys"),
)


def page_html(token: str, mode: str, annotator: str) -> str:
    title = "blind labels" if mode == "label" else "change review"
    keys = "".join(f"<tr><td><kbd>{escape(k)}</kbd></td><td>{escape(v)}</td></tr>"
                   for k, v in KEYS)
    finish = ('<p id="finish-row"><button id="finish" type="button">Done: lock my labels (L)'
              "</button></p>" if mode == "label" else "")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(META_CSP)}">'
        '<meta name="referrer" content="no-referrer">'
        f'<meta name="review-token" content="{escape(token)}">'
        f'<meta name="review-mode" content="{escape(mode)}">'
        f"<title>snapaudit review: {escape(title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>snapaudit review: {escape(title)}</h1>'
        f'<span class="tag">annotator {escape(annotator)}</span>'
        '<div id="progress" class="verdict none">loading…</div>'
        '<input id="search" type="search" placeholder="search ( / )" aria-label="search">'
        '<button id="help-btn" type="button">keys ( h )</button>'
        '<span id="status" role="status"></span>'
        '<span id="results" role="status"></span></header>'
        f'<aside id="help" hidden><table>{keys}</table></aside>'
        '<div id="layout"><nav id="list" aria-label="questions"></nav>'
        '<main id="item"></main></div>'
        f"{finish}<script>{JS}</script></body></html>\n"
    )
