"""Reading a JSON body: the one place a source says "this is not the JSON I expected".

Errors come out as `_html.page`'s do (`base.shape_error`: what the page is, then what is
wrong), so a source that reads JSON and one that reads HTML fail the same way. Underscore
module: not a source.
"""

from __future__ import annotations

import json
from typing import IO, Any

from gpucat.scrapers.base import shape_error

_KIND = {list: "list", dict: "object", str: "string"}


def document(body: IO[bytes] | bytes | str, what: str) -> Any:
    """The parsed body; `what` names the page in errors."""
    raw = body if isinstance(body, bytes | str) else body.read()
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise shape_error(what, f"not JSON ({exc})") from None


def member(doc: Any, what: str, *path: str, kind: type = list) -> Any:
    """The value at `path` (object keys) in `doc`, which must be a `kind`; the document itself with no path."""
    value = doc
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if not isinstance(value, kind):
        expected, got = _KIND.get(kind, kind.__name__), type(value).__name__
        raise shape_error(what, f"lacks {'.'.join(path)} (a JSON {expected}; got {got})" if path else f"not a JSON {expected} (got {got})")
    return value


def page(body: IO[bytes] | bytes | str, what: str, *path: str, kind: type = list) -> Any:
    """`member(document(body, what), what, *path, kind=kind)`: the part of a JSON page a parser reads."""
    return member(document(body, what), what, *path, kind=kind)
