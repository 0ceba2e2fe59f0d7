"""Faults a provider can serve, as httpx transports wrapping the replay transport.

Each fault is a function from the replayed (real-format) response to what the faulty provider
sends instead, or raises what a broken network raises. Body mutations know JSON, CSV, XML and
HTML; a fault that has nothing to change in a source's bodies returns None and the case skips
(the closing note counts the sources each fault was exercised on).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

LOGIN_PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
    b'<form action="/login" method="post"><input name="user"><input type="password" name="password">'
    b"<button>Sign in</button></form></body></html>"
)
EVIL_HOST = "login.attacker.example"
OVERSIZED_LIMIT = 64 * 1024  # the source's limit, lowered for the case so the body stays small


@dataclass(frozen=True)
class Fault:
    name: str
    # (request, replayed response, how many times this URL was asked) -> response to serve
    serve: Callable[[httpx.Request, httpx.Response, int], httpx.Response]
    tolerated: bool  # the source must load as before (ok, same rows); else fail and keep them
    # Whether the fault changes anything in these bodies (False: the case does not apply).
    applies: Callable[[list[bytes]], bool] = lambda bodies: True


class FaultTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, fault: Fault):
        self._inner = inner
        self._fault = fault
        self._asked: dict[str, int] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        key = f"{request.method} {request.url}"
        self._asked[key] = self._asked.get(key, 0) + 1
        if self._fault.name in ("connect-timeout", "read-timeout"):
            error = httpx.ConnectTimeout if self._fault.name == "connect-timeout" else httpx.ReadTimeout
            raise error("timed out (injected)", request=request)
        response = self._inner.handle_request(request)
        response.read()
        return self._fault.serve(request, response, self._asked[key])


def _with_body(response: httpx.Response, body: bytes, content_type: str | None = None) -> httpx.Response:
    headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")}
    if content_type:
        headers["content-type"] = content_type
    return httpx.Response(response.status_code, headers=headers, content=body, extensions=response.extensions)


def _kind(body: bytes) -> str:
    text = body.lstrip()[:200].lower()
    if text[:1] in (b"{", b"[") or text.startswith(b"callback("):
        return "json"
    if text.startswith(b"<?xml") or text.startswith(b"<gesmes"):
        return "xml"
    if text.startswith(b"<!doctype") or text.startswith(b"<html"):
        return "html"
    return "csv" if b"," in text else "other"


def _json_parts(body: bytes) -> tuple[bytes, Any, bytes] | None:
    """(prefix, document, suffix): JSONP such as `callback({...});` keeps its wrapper."""
    match = re.match(rb"^(\s*[A-Za-z_$][\w$]*\s*\()(.*)(\)\s*;?\s*)$", body, re.S)
    prefix, core, suffix = (match.group(1), match.group(2), match.group(3)) if match else (b"", body, b"")
    try:
        return prefix, json.loads(core), suffix
    except (ValueError, UnicodeDecodeError):
        return None


def _map_json(body: bytes, change: Callable[[Any, bool], Any]) -> bytes | None:
    parts = _json_parts(body)
    if parts is None:
        return None
    prefix, doc, suffix = parts
    return prefix + json.dumps(change(doc, False)).encode() + suffix


def _rename_keys(value: Any, in_list: bool) -> Any:
    if isinstance(value, dict):
        return {f"{k}_renamed": _rename_keys(v, False) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_keys(v, True) for v in value]
    return value


def _add_field(value: Any, in_list: bool) -> Any:
    """An unknown field on every record (a dict in a list) and on the document itself."""
    if isinstance(value, dict):
        out = {k: _add_field(v, False) for k, v in value.items()}
        return {**out, "gpucat_fault_extra": "x"} if in_list else out
    if isinstance(value, list):
        return [_add_field(v, True) for v in value]
    return value


def _csv_edit(body: bytes, rename: bool) -> bytes | None:
    """Rename the header's cells, or add a column to the header and every row as wide as it.

    Line by line, so the rest of the file keeps its bytes (quoting, preamble, line ends).
    """
    lines = body.decode("utf-8").splitlines(keepends=True)
    widths = [len(next(csv.reader([line.rstrip("\r\n")]), [])) for line in lines]
    width = max(widths, default=0)
    if width < 2:
        return None
    header = widths.index(width)
    out = []
    for i, (line, n) in enumerate(zip(lines, widths, strict=True)):
        text, end = line.rstrip("\r\n"), line[len(line.rstrip("\r\n")):]
        if rename and i == header:
            text = re.sub(r'("?)([^,"]+)("?)(?=,|$)', r"\1\2 renamed\3", text)
        elif not rename and n == width:
            text += ',"gpucat_fault_extra"' if i == header else ',"x"'
        out.append(text + end)
    return "".join(out).encode()


_JSON_SCRIPT = re.compile(rb'(<script[^>]*type="application/json"[^>]*>)(.*?)(</script>)', re.S | re.I)


def _html_edit(body: bytes, what: str) -> bytes:
    """HTML drift: renamed header cells, class names and embedded-JSON keys; or an extra column,
    an extra attribute on every classed element, and extra keys in embedded JSON."""

    def script(match: re.Match[bytes]) -> bytes:
        changed = _map_json(match.group(2), _rename_keys if what == "rename" else _add_field)
        return match.group(1) + (changed if changed is not None else match.group(2)) + match.group(3)

    body = _JSON_SCRIPT.sub(script, body)
    if what == "rename":
        body = re.sub(rb"(<th\b[^>]*>)(.*?)(</th>)", rb"\1\2 renamed\3", body, flags=re.S | re.I)
        return re.sub(rb'(\sclass=")([^"]*)(")', lambda m: m.group(1) + b" ".join(c + b"-renamed" for c in m.group(2).split()) + m.group(3), body)

    def row(match: re.Match[bytes]) -> bytes:
        cell = b"<th>gpucat extra</th>" if b"<td" not in match.group(0).lower() else b"<td>x</td>"
        return match.group(0)[: -len(b"</tr>")] + cell + b"</tr>"

    body = re.sub(rb"<tr\b.*?</tr>", row, body, flags=re.S | re.I)
    return re.sub(rb'(\sclass="[^"]*")', rb'\1 data-gpucat-extra="x"', body)


def _xml_edit(body: bytes, what: str) -> bytes:
    """XML drift: every attribute renamed, or an extra attribute on every element with attributes.

    The XML declaration stays as it is: drift is in the document, not in the XML syntax."""
    declaration = re.match(rb"\s*<\?xml.*?\?>", body, re.S)
    if declaration:
        return declaration.group(0) + _xml_edit(body[declaration.end() :], what)
    if what == "rename":
        return re.sub(rb"(\s)([A-Za-z_][\w.-]*)(=[\"'])", rb"\1\2_renamed\3", body)
    return re.sub(rb"<([A-Za-z][\w:.-]*)(\s+[A-Za-z_][\w.-]*=[\"'])", rb'<\1 gpucat_fault_extra="x"\2', body)


def mutate(body: bytes, what: str) -> bytes | None:
    """`rename` or `extra` applied to a body in its own format; None when nothing changes."""
    kind = _kind(body)
    if kind == "json":
        changed = _map_json(body, _rename_keys if what == "rename" else _add_field)
    elif kind == "csv":
        changed = _csv_edit(body, rename=what == "rename")
    elif kind == "html":
        changed = _html_edit(body, what)
    elif kind == "xml":
        changed = _xml_edit(body, what)
    else:
        changed = None
    return changed if changed != body else None


def _mutated(what: str) -> Callable[[httpx.Request, httpx.Response, int], httpx.Response]:
    def serve(request: httpx.Request, response: httpx.Response, n: int) -> httpx.Response:
        changed = mutate(response.content, what)
        return response if changed is None else _with_body(response, changed)

    return serve


def _oversized(request: httpx.Request, response: httpx.Response, n: int) -> httpx.Response:
    # Streamed without Content-Length: the limit must hold while reading, not only on the header.
    chunks = (b" " * 8192 for _ in range(OVERSIZED_LIMIT // 8192 + 2))
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
    return httpx.Response(200, headers=headers, content=chunks, extensions=response.extensions)


FAULTS = [
    Fault("5xx-then-success", lambda q, r, n: httpx.Response(503, content=b"Service Unavailable") if n == 1 else r, tolerated=True),
    Fault("429-retry-after", lambda q, r, n: httpx.Response(429, headers={"Retry-After": "7"}, content=b"slow down") if n == 1 else r, tolerated=True),
    Fault("connect-timeout", lambda q, r, n: r, tolerated=False),
    Fault("read-timeout", lambda q, r, n: r, tolerated=False),
    Fault("truncated-body", lambda q, r, n: _with_body(r, r.content[: len(r.content) // 2]), tolerated=False),
    Fault("empty-body", lambda q, r, n: _with_body(r, b""), tolerated=False),
    Fault("html-login-page", lambda q, r, n: _with_body(r, LOGIN_PAGE, "text/html; charset=utf-8"), tolerated=False),
    Fault("renamed-fields", _mutated("rename"), tolerated=False, applies=lambda bodies: any(mutate(b, "rename") for b in bodies)),
    Fault("unknown-extra-field", _mutated("extra"), tolerated=True, applies=lambda bodies: any(mutate(b, "extra") for b in bodies)),
    Fault("oversized-body", _oversized, tolerated=False),
    Fault("redirect-to-another-host", lambda q, r, n: httpx.Response(302, headers={"Location": f"https://{EVIL_HOST}/login"}), tolerated=False),
]
