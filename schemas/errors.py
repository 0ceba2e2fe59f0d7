"""Typed errors. The CLI turns any `GpucatError` into one line on stderr and a non-zero exit.

Kinds matter to the pipeline: a `TransientFetchError` may be retried, a `ParseError` never is,
and a `MissingApiKey` makes a source `skipped` rather than `failed`.
"""

from __future__ import annotations

from collections.abc import Mapping


class GpucatError(Exception):
    """Base of every expected failure; its message is what the user sees."""

    exit_code = 1


class UserInputError(GpucatError):
    """Bad input from the user: an unknown value, a missing file, a malformed config."""

    exit_code = 2


class Quantity:
    """A setting as an error message names it: `key` is its name in code (`seq_len`), `words` how
    a sentence says it (`sequence length`). Formats as its words."""

    def __init__(self, key: str, words: str):
        self.key, self.words = key, words

    def __format__(self, spec: str) -> str:
        return format(self.words, spec)

    def __repr__(self) -> str:
        return f"Quantity({self.key!r}, {self.words!r})"


class SettingError(UserInputError):
    """A setting with a bad value, or settings that cannot go together. The library's message names
    each setting by its quantity ("sequence length"); an interface that has its own names for them
    (the command line's flags) asks `spelled` for the same message in those names.

        SettingError("{q} must be a positive integer, got {value!r}", q=Quantity("seq_len", "sequence length"), value=0)
    """

    def __init__(self, template: str, **parts: object):
        self.template, self.parts = template, parts
        super().__init__(template.format(**parts))

    def __reduce__(self) -> tuple[object, ...]:
        return _setting_error, (self.template, self.parts)

    @property
    def keys(self) -> list[str]:
        """The settings the message names, by their names in code."""
        return [p.key for p in self.parts.values() if isinstance(p, Quantity)]

    def spelled(self, names: Mapping[str, str]) -> str:
        """The message with each setting named as `names` (key -> name) says; the rest in words."""
        return self.template.format(**{k: names.get(p.key, p.words) if isinstance(p, Quantity) else p
                                       for k, p in self.parts.items()})


def _setting_error(template: str, parts: dict[str, object]) -> SettingError:
    return SettingError(template, **parts)


class DatabaseMissing(GpucatError):
    """The DuckDB file does not exist yet."""


class DatabaseBusy(GpucatError):
    """Another process held the DuckDB file longer than this one would wait."""


class QueryError(GpucatError):
    """SQL the user gave failed in DuckDB."""


class SourceError(GpucatError):
    """A source could not produce trustworthy data; the source fails, the others go on."""


class MissingApiKey(SourceError):
    """The environment variable holding a required API key is unset: the source is skipped."""

    def __init__(self, env_var: str):
        super().__init__(f"{env_var} is not set")
        self.env_var = env_var


class PrimaryLoaded(SourceError):
    """A fallback source whose primary has data of its own: the fallback is skipped, not fetched."""

    def __init__(self, primary: str, status: str):
        super().__init__(f"fallback of {primary}, whose last run is {status}: one source per provider's offers")
        self.primary = primary


class FetchError(SourceError):
    """An HTTP exchange failed in a way that retrying will not fix (4xx, refused redirect, size)."""


class TransientFetchError(FetchError):
    """Connection error, timeout, 5xx or 429 that outlived the retry budget."""


class DisallowedHost(FetchError):
    """A request (or a redirect) tried to reach a host the source did not declare."""


class ResponseTooLarge(FetchError):
    """A response body exceeded the source's size limit."""


class ReplayMiss(FetchError):
    """Replay mode found no captured response for a request."""


class ParseError(SourceError):
    """A payload is not in the shape its parser expects (truncated, renamed fields)."""


class BatchRejected(SourceError):
    """Batch-level checks failed (zero rows, row count collapse); previous data stays current."""


class UnknownModel(SettingError):
    """A model name is neither in model_archs nor fetchable; the message says how to give its
    config instead, naming that setting as a `SettingError` does."""
