"""Headless Chromium driven the way a person drives it, over the DevTools protocol (CDP).

:class:`Browser` starts Chromium with ``--remote-debugging-pipe`` (CDP messages as JSON
separated by NUL bytes on file descriptors 3 and 4; no port, no websocket library).
:class:`Page` sends keys (``Input.dispatchKeyEvent``) and clicks (``Input.dispatchMouseEvent``)
and reads the DOM with ``Runtime.evaluate`` to assert; it never changes the page by script.
Exceptions thrown in the page and console messages (CSP violations among them) are kept
in :attr:`Page.errors`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--no-default-browser-check", "--remote-debugging-pipe"]

# key -> (code, windowsVirtualKeyCode, text)
SPECIAL = {"ArrowDown": ("ArrowDown", 40, ""), "ArrowUp": ("ArrowUp", 38, ""),
           "ArrowRight": ("ArrowRight", 39, ""), "ArrowLeft": ("ArrowLeft", 37, ""),
           "Enter": ("Enter", 13, "\r"), "Escape": ("Escape", 27, ""),
           "/": ("Slash", 191, "/"), " ": ("Space", 32, " ")}


class CdpError(AssertionError):
    pass


class Browser:
    def __init__(self, exe: str, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # fd 3 = what Chromium reads, fd 4 = what it writes (set up in a small Python
        # trampoline: no shell, any fd numbers)
        boot = (f"import os,sys; os.dup2({to_child_r},3); os.dup2({from_child_w},4); "
                "os.execv(sys.argv[1], sys.argv[1:])")
        profile.mkdir(parents=True, exist_ok=True)
        self.log = profile / "chromium.log"  # Chromium's own stderr, for a failing test
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", boot, exe, *FLAGS, f"--user-data-dir={profile}",
                 "about:blank"],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=log)
        os.close(to_child_r)
        os.close(from_child_w)
        self._next = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._replies: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._replies[-1] = {"error": {"message": "browser closed the pipe"}}
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self._cond:
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        with self._cond:
            self._next += 1
            mid = self._next
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params or {}}
        if session is not None:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self._replies:
                if -1 in self._replies:
                    raise CdpError(f"{method}: the browser closed the pipe")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CdpError(f"{method}: no reply in {timeout} s")
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise CdpError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def page(self, url: str, width: int = 1280, height: int = 900) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target,
                                                      "flatten": True})["sessionId"]
        page = Page(self, session)
        page.call("Runtime.enable")
        page.call("Log.enable")
        page.call("Page.enable")
        page.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1,
                                                         "mobile": False})
        page.goto(url)
        return page

    def close(self) -> None:
        with contextlib.suppress(CdpError):
            self.send("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        self._reader.join(timeout=5)
        os.close(self._from_child)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    @property
    def errors(self) -> list[str]:
        """Exceptions thrown in the page and console errors (CSP violations among them)."""
        out = []
        with self.browser._cond:
            events = list(self.browser.events)
        for e in events:
            if e.get("sessionId") != self.session:
                continue
            if e["method"] == "Runtime.exceptionThrown":
                out.append(json.dumps(e["params"]["exceptionDetails"])[:500])
            elif e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error":
                out.append(e["params"]["entry"].get("text", ""))
        return out

    def goto(self, url: str) -> None:
        """Navigate; return once the new document exists (not the old one unloading)."""
        self._anew(lambda: self.call("Page.navigate", {"url": url}))

    def reload(self) -> None:
        self._anew(lambda: self.call("Page.reload", {"ignoreCache": True}))

    def _anew(self, go: Callable[[], object]) -> None:
        before = self.eval("performance.timeOrigin")
        go()
        self.wait(f"performance.timeOrigin!=={json.dumps(before)}&&document.body!==null")

    def eval(self, expression: str) -> Any:
        """The value of ``expression`` in the page (read the DOM with it; change nothing)."""
        reply = self.call("Runtime.evaluate", {"expression": expression,
                                               "returnByValue": True})
        if "exceptionDetails" in reply:
            raise CdpError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait(self, expression: str, timeout: float = 20.0) -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        value: Any = None
        while time.monotonic() < deadline:
            try:
                value = self.eval(expression)
            except CdpError:
                value = None  # the page is navigating
            if value:
                return value
            time.sleep(0.05)
        raise CdpError(f"waited {timeout} s for {expression} (last {value!r}); "
                       f"page errors: {self.errors}")

    def key(self, key: str) -> None:
        """One key press: keyDown (with its text, so typing reaches inputs) and keyUp."""
        if key in SPECIAL:
            code, vk, text = SPECIAL[key]
        elif len(key) == 1 and key.isalpha():
            code, vk, text = f"Key{key.upper()}", ord(key.upper()), key
        elif len(key) == 1 and key.isdigit():
            code, vk, text = f"Digit{key}", ord(key), key
        else:
            raise ValueError(f"no key {key!r} in this helper")
        down: dict[str, Any] = {"type": "keyDown" if text else "rawKeyDown", "key": key,
                                "code": code, "windowsVirtualKeyCode": vk,
                                "nativeVirtualKeyCode": vk}
        if text:
            down.update(text=text, unmodifiedText=text)
        self.call("Input.dispatchKeyEvent", down)
        self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": code,
                                             "windowsVirtualKeyCode": vk,
                                             "nativeVirtualKeyCode": vk})

    def keys(self, sequence: str) -> None:
        for k in sequence:
            self.key(k)

    def type(self, text: str) -> None:
        for ch in text:
            self.key(ch)

    def click(self, selector: str) -> None:
        """A mouse click at the centre of the first element ``selector`` matches (it must be
        in the viewport: the helper does not scroll)."""
        box = self.wait(f"(function(){{var e=document.querySelector({json.dumps(selector)});"
                        "if(!e){return null;}"
                        "var r=e.getBoundingClientRect();"
                        "return r.width>0?[r.left+r.width/2,r.top+r.height/2]:null;})()")
        x, y = box
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y,
                                                   "button": "left", "clickCount": 1})
