"""A headless Chromium (Debian's package) driven over the DevTools protocol, for report tests.

Started with its own --user-data-dir, no proxy reachable and every host name unresolvable, and
the page's network emulated offline: a report that needs anything beyond its own file shows it
as a failed request or a console error.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BINARIES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    return next((path for name in BINARIES if (path := shutil.which(name))), None)


@dataclass
class PageRun:
    errors: list[str] = field(default_factory=list)  # console errors, uncaught exceptions, failed loads
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    evaluated: Any = None
    screenshot: bytes = b""


def load_page(binary: str, page: Path, profile: Path, *, evaluate: str, settle_s: float = 2.0, timeout_s: float = 60.0) -> PageRun:
    """Open `page`, wait for load plus `settle_s`, evaluate `evaluate`, take a full-page screenshot."""
    from websockets.sync.client import connect

    args = [
        binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
        f"--user-data-dir={profile}", "--remote-debugging-port=0", "--proxy-server=127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--window-size=1280,1600", "about:blank",
    ]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not start (exit {proc.poll()})")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with connect(f"ws://127.0.0.1:{port}{port_file.read_text().split()[1]}", max_size=None, open_timeout=timeout_s) as ws:
            return _drive(ws, page, evaluate, settle_s, deadline)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _drive(ws: Any, page: Path, evaluate: str, settle_s: float, deadline: float) -> PageRun:
    ids = itertools.count(1)
    run = PageRun()
    session: str | None = None
    loaded = False

    def send(method: str, params: dict | None = None) -> dict:
        nonlocal loaded
        msg_id = next(ids)
        message = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        ws.send(json.dumps(message))
        while True:
            reply = json.loads(ws.recv(timeout=max(1.0, deadline - time.monotonic())))
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            loaded |= _event(reply, run)

    target = send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        send(f"{domain}.enable")
    send("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    send("Page.navigate", {"url": page.resolve().as_uri()})
    while not loaded:
        if time.monotonic() > deadline:
            raise RuntimeError("the page did not finish loading")
        loaded |= _event(json.loads(ws.recv(timeout=max(1.0, deadline - time.monotonic()))), run)
    end = time.monotonic() + settle_s
    while time.monotonic() < end:  # late console errors (charts draw after load)
        try:
            _event(json.loads(ws.recv(timeout=end - time.monotonic())), run)
        except TimeoutError:
            break
    result = send("Runtime.evaluate", {"expression": evaluate, "returnByValue": True})
    run.evaluated = result.get("result", {}).get("value")
    metrics = send("Page.getLayoutMetrics")["cssContentSize"]
    clip = {"x": 0, "y": 0, "width": metrics["width"], "height": min(metrics["height"], 8000), "scale": 1}
    shot = send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip})
    run.screenshot = base64.b64decode(shot["data"])
    return run


def _event(message: dict, run: PageRun) -> bool:
    """Record what matters from one DevTools event; True when the page's load event fired."""
    method, params = message.get("method"), message.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        run.errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
    elif method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        run.errors.append("exception: " + str(details.get("exception", {}).get("description") or details.get("text")))
    elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        run.errors.append("log: " + params["entry"].get("text", ""))
    elif method == "Network.requestWillBeSent":
        run.requests.append(params.get("request", {}).get("url", ""))
    elif method == "Network.loadingFailed":
        run.errors.append(f"request failed: {params.get('errorText')}")
    return method == "Page.loadEventFired"
