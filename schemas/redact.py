"""Keeping secrets out of everything gpucat stores, logs or prints.

Two nets: known secret values (every API-key variable a source declares) are replaced wherever
they appear, and secrets recognizable by name are replaced even when their value is unknown: a
secret query parameter (`api_key=`, `x-api-key=`, `client_secret=`, `X-Amz-Signature=`, ...), the
credentials of a `user:pass@host` URL, and a bearer token.
"""

from __future__ import annotations

import base64
import functools
import re
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import httpx

# Query parameters whose values are secrets wherever they appear (compared lower-case).
SECRET_PARAMS = frozenset(
    {
        "api_key", "apikey", "api-key", "x-api-key", "key", "token", "access_token", "access-token", "auth", "auth_token",
        "client_secret", "client-secret", "signature", "sig", "password", "passwd", "secret",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential",
    }
)  # fmt: skip
REDACTED = "REDACTED"

# `name=value` for a secret name, in free text (a message quoting a URL or a form body).
_SECRET_ASSIGNMENT = re.compile(
    r"(?i)(?<![\w-])(" + "|".join(re.escape(p) for p in sorted(SECRET_PARAMS, key=len, reverse=True)) + r")=([^&\s\"'<>]+)"
)
# `scheme://user:password@` (or a lone token as the user) in a URL.
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"'<>]+@")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove known secret strings (in every form `secret_patterns` knows), and secrets
    recognizable by name, from a URL, a message or a decoded value."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
            for pattern in secret_patterns(secret):
                text = pattern.sub(REDACTED, text)
    text = _SECRET_ASSIGNMENT.sub(lambda m: f"{m.group(1)}={REDACTED}" if m.group(2) != REDACTED else m.group(0), text)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _BEARER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


# A shorter "secret" cannot be told apart from data in a body (a test key "k" is in every word).
MIN_BODY_SECRET_CHARS = 8


def redact_bytes(body: bytes, secrets: tuple[str, ...] = ()) -> bytes:
    """Known secret strings out of a response body, in every form `secret_patterns` knows (the
    body's format is otherwise kept)."""
    for secret in secrets:
        if len(secret) >= MIN_BODY_SECRET_CHARS:
            body = body.replace(secret.encode(), REDACTED.encode())
            for pattern in secret_patterns(secret):
                body = re.compile(pattern.pattern.encode(), pattern.flags & ~re.UNICODE).sub(REDACTED.encode(), body)
    return body


def redact_value(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """`redact` over every string of a decoded document (a parsed row: dicts, lists, strings)."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v, secrets) for v in value)
    return value


@functools.lru_cache(maxsize=64)
def secret_patterns(secret: str) -> tuple[re.Pattern[str], ...]:
    """The forms a provider echoes a key in, as patterns (all ASCII, so they also work on bytes):

    - any letter case, with any of its characters written as a JSON escape (`\\u002d`, `\\/`)
      or percent-encoded (`%2D`, `%2d`): one pattern covers the raw key, `sk\\u002dSECRET`,
      `sk%2DSECRET` and `SK-SECRET`;
    - base64 (standard and URL-safe): the part of the encoding that depends on the key alone, at
      each of the three alignments a key can start at inside a longer encoded string
      (`Basic base64(user:key)`), so it is found wherever it sits.
    """
    if len(secret) < MIN_BODY_SECRET_CHARS:
        return ()
    chars = []
    for ch in secret:
        options = [re.escape(ch)]
        if ord(ch) < 0x80:
            options += [f"\\\\u{ord(ch):04x}", f"%{ord(ch):02x}"] + (["\\\\/"] if ch == "/" else [])
        chars.append("(?:" + "|".join(options) + ")")
    patterns = [re.compile("".join(chars), re.IGNORECASE | re.ASCII)]
    raw = secret.encode()
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        lead = (offset * 8 + 5) // 6  # characters that mix the preceding bytes in
        tail = (len(raw) + offset) % 3  # a partial last group depends on what follows
        core = encoded[lead : len(encoded) - (4 if tail else 0)]
        if len(core) >= MIN_BODY_SECRET_CHARS:
            cores.update({core, core.replace("+", "-").replace("/", "_")})
    patterns += [re.compile(re.escape(core), re.ASCII) for core in sorted(cores)]
    return tuple(patterns)


def redact_url(url: str | httpx.URL, secrets: tuple[str, ...] = ()) -> str:
    """A URL safe to log, store and match on: secret query values and credentials replaced, default port dropped."""
    parts = urlsplit(str(httpx.URL(str(url))))
    if parts.query:
        query = [(k, REDACTED if k.lower() in SECRET_PARAMS else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        parts = parts._replace(query=urlencode(query, safe="$'(),:", quote_via=_quote))
    if "@" in parts.netloc:
        parts = parts._replace(netloc=f"{REDACTED}@{parts.netloc.rpartition('@')[2]}")
    return redact(urlunsplit(parts), secrets)


def _quote(value: str | bytes, safe: str | bytes = "", encoding: str | None = None, errors: str | None = None) -> str:
    return quote(value, safe=safe)


def match_url(url: str | httpx.URL) -> str:
    """A URL with secret query parameters left out: a keyless replay matches a keyed capture."""
    parts = urlsplit(redact_url(url))
    if parts.query:
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in SECRET_PARAMS]
        parts = parts._replace(query=urlencode(query, safe="$'(),:", quote_via=_quote))
    return urlunsplit(parts)
