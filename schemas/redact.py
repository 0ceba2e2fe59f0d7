"""Keeping secrets out of everything gpucat stores, logs or prints.

Two nets: known secret values (every API-key variable a source declares) are replaced wherever
they appear, and secrets recognizable by name are replaced even when their value is unknown: a
secret query parameter (`api_key=`, `x-api-key=`, `client_secret=`, `X-Amz-Signature=`, ...), the
credentials of a `user:pass@host` URL, and a bearer token.
"""

from __future__ import annotations

import re
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
    """Remove known secret strings, and secrets recognizable by name, from a URL or message."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    text = _SECRET_ASSIGNMENT.sub(lambda m: f"{m.group(1)}={REDACTED}" if m.group(2) != REDACTED else m.group(0), text)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _BEARER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


# A shorter "secret" cannot be told apart from data in a body (a test key "k" is in every word).
MIN_BODY_SECRET_CHARS = 8


def redact_bytes(body: bytes, secrets: tuple[str, ...] = ()) -> bytes:
    """Known secret strings out of a response body (the body's format is otherwise kept)."""
    for secret in secrets:
        if len(secret) >= MIN_BODY_SECRET_CHARS:
            body = body.replace(secret.encode(), REDACTED.encode())
    return body


def redact_url(url: str | httpx.URL, secrets: tuple[str, ...] = ()) -> str:
    """A URL safe to log, store and match on: secret query values and credentials replaced, default port dropped."""
    parts = urlsplit(str(httpx.URL(str(url))))
    if parts.query:
        query = [(k, REDACTED if k.lower() in SECRET_PARAMS else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        parts = parts._replace(query=urlencode(query, safe="$'(),:", quote_via=_quote))
    if "@" in parts.netloc:
        parts = parts._replace(netloc=f"{REDACTED}@{parts.netloc.rpartition('@')[2]}")
    return redact(urlunsplit(parts), secrets)


def _quote(value: str, safe: str = "", encoding: str | None = None, errors: str | None = None) -> str:
    return quote(value, safe=safe)


def match_url(url: str | httpx.URL) -> str:
    """A URL with secret query parameters left out: a keyless replay matches a keyed capture."""
    parts = urlsplit(redact_url(url))
    if parts.query:
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in SECRET_PARAMS]
        parts = parts._replace(query=urlencode(query, safe="$'(),:", quote_via=_quote))
    return urlunsplit(parts)
