"""llama-cpp-python's own OpenAI-compatible server on 127.0.0.1, for demos and tests.

``LlamaServer()`` starts ``python -m llama_cpp.server`` on the embedded SmolLM2 GGUF (or any
GGUF) on a free loopback port and waits until ``/v1/models`` answers; use its ``base_url``
with ``[generator] backend = "openai"`` and ``response_format = "json_object_schema"`` (the
dialect that server understands; ``"auto"`` finds it with one refused probe). Needs the
``server`` extra (``pip install 'snapaudit[server]'``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType

from snapaudit.errors import BackendError

SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context",
                  "pydantic_settings")
DIALECT = "json_object_schema"


def server_available() -> str | None:
    """None when the server extra is installed, else what is missing."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    return ("the llama.cpp server needs " + ", ".join(missing)
            + " (pip install 'snapaudit[server]')") if missing else None


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """A ``llama_cpp.server`` child process on 127.0.0.1 (a context manager)."""

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = 2048,
                 n_threads: int = 1, startup_s: float = 120.0, port: int = 0):
        if model_path is None:
            from snapaudit.testbed.generate.local import default_model_path

            model_path = default_model_path()
        self.model_path = Path(model_path)
        self.n_ctx, self.n_threads, self.startup_s = n_ctx, n_threads, startup_s
        self.port = port
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        problem = server_available()
        if problem:
            raise BackendError(problem)
        self.port = self.port or _free_port()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
             "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
             "--n_threads", str(self.n_threads), "--verbose", "False"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = (self._proc.stderr.read() if self._proc.stderr else b"")[-2000:]
                raise BackendError("llama_cpp.server exited: " + err.decode(errors="replace"))
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2):
                    return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise BackendError(f"llama_cpp.server did not answer within {self.startup_s:g} s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc is not None and self._proc.stderr is not None:
            self._proc.stderr.close()
        self._proc = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
