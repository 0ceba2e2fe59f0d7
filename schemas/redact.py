"""Keeping secrets out of everything gpucat stores, logs or prints."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import httpx

# Query parameters whose values are secrets wherever they appear.
SECRET_PARAMS = frozenset({"api_key", "apikey", "key", "token", "access_token", "signature", "sig", "password", "secret"})
REDACTED = "REDACTED"


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove any known secret strings from a URL or message."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def redact_url(url: str | httpx.URL, secrets: tuple[str, ...] = ()) -> str:
    """A URL safe to log, store and match on: secret query values replaced, default port dropped."""
    parts = urlsplit(str(httpx.URL(str(url))))
    if parts.query:
        query = [(k, REDACTED if k.lower() in SECRET_PARAMS else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        parts = parts._replace(query=urlencode(query, safe="$'(),:", quote_via=_quote))
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
