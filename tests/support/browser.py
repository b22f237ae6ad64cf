"""A headless Chromium driven over the DevTools protocol, for tests that look at HTML reports.

    with Browser.start() as browser:          # raises BrowserMissing when chromium is not installed
        visit = browser.open(path, width=1280)
        visit.console_errors, visit.requests, visit.dialogs, visit.evaluate("..."), visit.screenshot()

The protocol client is websocket-client (a test dependency) plus request/response bookkeeping; the
browser is Debian's `chromium`, started with a fresh profile, no network services and no sandbox (the
tests may run as root). Every request the page makes, every console message at error level, every
uncaught exception and every JavaScript dialog is recorded per visit.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
         "--remote-debugging-port=0", "--remote-allow-origins=*")


class BrowserMissing(RuntimeError):
    pass


def find_chromium() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class Visit:
    browser: Browser
    session: str
    url: str
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, session=self.session, **params)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"evaluate failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, full_page: bool = True) -> bytes:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            metrics = self.send("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 12000),
                              "scale": 1}
        return base64.b64decode(self.send("Page.captureScreenshot", **params)["data"])


class Browser:
    def __init__(self, process: subprocess.Popen[bytes], profile: str, ws_url: str) -> None:
        self.process = process
        self.profile = profile
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self._ids = itertools.count(1)
        self._visits: dict[str, Visit] = {}

    @classmethod
    def start(cls, timeout: float = 30.0) -> Browser:
        binary = find_chromium()
        if binary is None:
            raise BrowserMissing("chromium is not installed (apt-get install chromium)")
        profile = tempfile.mkdtemp(prefix="kw-chromium-")
        process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.exists() or len(port_file.read_text().splitlines()) < 2:
            if process.poll() is not None:
                err = process.stderr.read().decode(errors="replace") if process.stderr else ""
                shutil.rmtree(profile, ignore_errors=True)
                raise RuntimeError(f"chromium exited with {process.returncode}: {err[-2000:]}")
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                shutil.rmtree(profile, ignore_errors=True)
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        return cls(process, profile, f"ws://127.0.0.1:{int(port)}{path}")

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.ws.send(json.dumps({"id": next(self._ids), "method": "Browser.close"}))
        except Exception:  # noqa: BLE001 - the browser may be gone already
            pass
        try:
            self.ws.close()
        finally:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self.process.stderr:
                self.process.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    # -- protocol ------------------------------------------------------------------------------------
    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = self._receive()
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def wait_for(self, session: str, event: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                message = self._receive()
            except websocket.WebSocketTimeoutException:
                break
            finally:
                self.ws.settimeout(30)
            if message.get("method") == event and message.get("sessionId") == session:
                return message.get("params", {})
        raise TimeoutError(f"no {event} within {timeout}s")

    def drain(self, seconds: float) -> None:
        """Read events for a while (late console messages, requests after load)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                self._receive()
            except websocket.WebSocketTimeoutException:
                break
            finally:
                self.ws.settimeout(30)

    def _receive(self) -> dict[str, Any]:
        message = json.loads(self.ws.recv())
        visit = self._visits.get(message.get("sessionId", ""))
        if visit is not None and "method" in message:
            self._record(visit, message["method"], message.get("params", {}))
        return message

    def _record(self, visit: Visit, method: str, params: dict[str, Any]) -> None:
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if url != visit.url:
                visit.requests.append(url)
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
            visit.console_errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                                 for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            visit.console_errors.append(json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
            visit.console_errors.append(f"{params['entry'].get('source')}: {params['entry'].get('text')}")
        elif method == "Page.javascriptDialogOpening":
            visit.dialogs.append(f"{params.get('type')}: {params.get('message')}")
            self.ws.send(json.dumps({"id": next(self._ids), "method": "Page.handleJavaScriptDialog",
                                     "params": {"accept": False}, "sessionId": visit.session}))

    # -- pages ---------------------------------------------------------------------------------------
    def open(self, path: str | Path, width: int = 1280, height: int = 900, dark: bool = False,
             javascript: bool = True, settle: float = 0.3) -> Visit:
        """Load a local file in a fresh tab and wait for its load event."""
        url = Path(path).resolve().as_uri()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        visit = Visit(self, session, url)
        self._visits[session] = visit
        for domain in ("Page", "Runtime", "Log", "Network"):
            visit.send(f"{domain}.enable")
        visit.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                   mobile=width < 600)
        visit.send("Emulation.setEmulatedMedia", media="screen",
                   features=[{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}])
        if not javascript:
            visit.send("Emulation.setScriptExecutionDisabled", value=True)
        visit.send("Page.navigate", url=url)
        self.wait_for(session, "Page.loadEventFired")
        self.drain(settle)
        return visit
