"""The start-up and shut-down every loopback fake shares: an aiohttp app on 127.0.0.1 (a free
port), served from its own thread and event loop, usable as a context manager. A server that
was stopped starts again on the same port (a real restart: clients see refused connections
in between)."""

from __future__ import annotations

import asyncio
import threading
from typing import Self

from aiohttp import web


class LoopbackServer:
    """Subclasses add their routes in :meth:`routes` and call ``super().__init__()``."""

    client_max_size = 1024**2  # aiohttp's default cap on a request body

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None  # set when the server begins to stop
        self.port = 0

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def start(self) -> Self:
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def serve() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start")
        return self

    async def _start(self) -> None:
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=self.client_max_size)
        self.routes(app)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1,
                                    access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)  # 0 the first time
        await site.start()
        sockets = site._server.sockets if site._server else []  # type: ignore[union-attr]
        self.port = sockets[0].getsockname()[1]

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
        self._loop = None

    async def _stop(self) -> None:
        if self._stopping is not None:
            self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
