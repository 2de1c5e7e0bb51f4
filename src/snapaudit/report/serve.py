"""``snapaudit view``: serve a run's report on localhost (loopback only, read-only).

Only ``/`` (report.html) and ``/report.md`` are served; nothing else of the run directory
is reachable. The page is the same self-contained file ``snapaudit report`` writes.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from snapaudit.errors import ConfigError


class ReportServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, html: Path, markdown: Path, host: str, port: int):
        self.files = {"/": (html, "text/html; charset=utf-8"),
                      "/report.html": (html, "text/html; charset=utf-8"),
                      "/report.md": (markdown, "text/markdown; charset=utf-8")}
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"


class _Handler(BaseHTTPRequestHandler):
    server: ReportServer

    def do_GET(self) -> None:
        entry = self.server.files.get(self.path.split("?", 1)[0])
        if entry is None or not entry[0].is_file():
            self.send_error(404, "only the report is served here")
            return
        body = entry[0].read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", entry[1])
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None  # library code never prints


def make_server(html: Path, markdown: Path, port: int = 0,
                host: str = "127.0.0.1") -> ReportServer:
    """A server on ``host:port`` (port 0: the system picks a free one); call
    ``serve_forever()`` and ``shutdown()``."""
    try:
        return ReportServer(html, markdown, host, port)
    except OSError as exc:
        raise ConfigError(f"--port {port}: cannot listen on {host}:{port} ({exc.strerror})"
                          ) from None

