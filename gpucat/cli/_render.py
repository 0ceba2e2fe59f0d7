"""Human-readable tables and values for the terminal (scripts use --json or --format csv).

A table fits the terminal ($COLUMNS, else the terminal's width; 200 when piped): numbers are
right-aligned and never cut, text cells that do not fit end in an ellipsis (the whole value is in
--json / --format csv), and columns that still do not fit are left off with a note on stderr.
Each command names its columns once (`Col`), a compact default set, and takes `--columns`.
"""

from __future__ import annotations

import builtins
import csv
import json
import math
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

import typer

from gpucat.formats import money, printable
from gpucat.suggest import check_names

PIPED_WIDTH = 200  # piped output gets a wide table rather than an 80-column default
GAP = "  "
ELLIPSIS = "…"

Kind = Literal["text", "money", "count", "gb", "num", "time", "age"]
NUMERIC: frozenset[str] = frozenset({"money", "count", "gb", "num", "age"})

# JSON keys that hold counts: whole numbers print as integers even where the column is DOUBLE
# (gpu_count is, for fractional slices such as 0.5 of a GPU, which stay floats).
COUNT_KEYS = frozenset({"gpu_count", "gpus_total", "nodes", "available_count", "vcpus", "gpus", "pages",
                        "rows_fetched", "rows_valid", "rows_rejected", "rows"})  # fmt: skip


@dataclass(frozen=True)
class Col:
    """One column a command can show: its --columns name, header, kind and how to read it."""

    name: str
    header: str = ""
    kind: Kind = "text"
    get: Callable[[Mapping[str, Any]], Any] | None = None  # default: record[name]
    shrink: bool = True  # False for short keys a reader must see whole (a GPU model, a status)

    def value(self, record: Mapping[str, Any]) -> Any:
        return self.get(record) if self.get else record.get(self.name)

    @property
    def title(self) -> str:
        return self.header or self.name


ColumnsOption = Annotated[
    str | None,
    typer.Option(
        "--columns", "-c", show_default=False, metavar="NAMES",
        help="Columns to show, comma-separated, or 'all' (an unknown name lists them).",
    ),
]  # fmt: skip


def choose(columns: Sequence[Col], default: Sequence[str], chosen: str | None) -> list[Col]:
    """The columns --columns names (in its order), the default set without it; unknown names fail."""
    by_name = {c.name: c for c in columns}
    if not chosen:
        return [by_name[n] for n in default]
    names = [n.strip() for n in chosen.split(",") if n.strip()]
    if names == ["all"]:
        return list(columns)
    check_names("column", names, by_name, show_all=True)
    return [by_name[n] for n in names]


# --- values -------------------------------------------------------------------------------


def count(value: float | None) -> str:
    if value is None:
        return ""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def gb(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, int):
        return f"{value:,}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}" if abs(value) < 1 else f"{value:,.2f}"


def age(seconds: float | None) -> str:
    if seconds is None:
        return ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def fmt(value: Any, kind: Kind = "text") -> str:
    if value is None:
        return ""
    if isinstance(value, str):  # already formatted by the caller (e.g. "?" or ">=7.69")
        return printable(" ".join(value.split()))
    if kind == "money":
        return money(value)
    if kind == "count":
        return count(value)
    if kind == "gb":
        return gb(value)
    if kind == "age":
        return age(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return num(value)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%MZ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v) for v in value)
    return printable(" ".join(str(value).split()))  # one line per row: newlines and tabs become spaces


# --- layout -------------------------------------------------------------------------------


def width() -> int:
    """$COLUMNS when set (as shells and tests set it), else the terminal's width; wide when piped."""
    return prose_width() or PIPED_WIDTH


def prose_width() -> int | None:
    """The width prose wraps at: $COLUMNS or the terminal's; None (no wrapping) when piped."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def cell_len(text: str) -> int:
    """The terminal columns `text` takes, as rich counts them: printable ASCII (most of a table)
    takes one column a character, so rich's tables of wide and zero-width characters load only
    for other text."""
    if text.isascii() and text.isprintable():
        return len(text)
    from rich.cells import cell_len as rich_cell_len

    return rich_cell_len(text)


def truncate(text: str, limit: int) -> str:
    if cell_len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS[:limit]
    out = ""
    for ch in text:
        if cell_len(out + ch) > limit - 1:
            break
        out += ch
    return out.rstrip() + ELLIPSIS


def layout(headers: Sequence[str], cells: Sequence[Sequence[str]], fixed: Sequence[bool], limit: int) -> tuple[list[int], int]:
    """Column widths that fit `limit`, and how many leading columns are shown.

    Fixed columns (numbers, keys) keep their full width; the others give way, widest first, down
    to their header's width (at least 6); if that is not enough, trailing columns are left off.
    """
    natural = [max([cell_len(h)] + [cell_len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    floor_ = [n if fixed[i] else min(n, max(6, cell_len(headers[i]))) for i, n in enumerate(natural)]
    widths = list(natural)
    shown = len(widths)

    def total() -> int:
        return sum(widths[:shown]) + len(GAP) * (shown - 1)

    while shown > 1:
        while total() > limit:
            candidates = [i for i in range(shown) if widths[i] > floor_[i]]
            if not candidates:
                break
            widest = max(candidates, key=lambda i: (widths[i], i))
            widths[widest] -= 1
        if total() <= limit:
            break
        widths = list(natural)  # leave off the last column and lay the rest out afresh
        shown -= 1
    return widths[:shown], shown


def render(columns: Sequence[Col], records: Sequence[Mapping[str, Any]], *, limit: int | None = None) -> tuple[list[str], list[str]]:
    """The table as lines (header, rule, rows), and the names of columns left off for width."""
    limit = limit or width()
    headers = [printable(c.title) for c in columns]
    numeric = [c.kind in NUMERIC for c in columns]
    cells = [[fmt(c.value(r), c.kind) for c in columns] for r in records]
    widths, shown = layout(headers, cells, [n or not c.shrink for n, c in zip(numeric, columns, strict=True)], limit)

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, w in enumerate(widths):
            text = truncate(values[i], w)
            pad = " " * (w - cell_len(text))
            parts.append(pad + text if numeric[i] else text + pad)
        return GAP.join(parts).rstrip()

    lines = [line(headers), GAP.join("─" * w for w in widths)]
    lines.extend(line(row) for row in cells)
    return lines, [c.name for c in columns[shown:]]


def echo_wrapped(text: str, *, err: bool = False) -> None:
    """Prose that wraps between words at the terminal's width, never inside one (piped: one line)."""
    limit = prose_width()
    text = printable(text)
    lines = [text] if limit is None else textwrap.wrap(text, width=limit, break_long_words=False, break_on_hyphens=False,
                                                       subsequent_indent="  ")  # fmt: skip
    typer.echo("\n".join(lines).replace("\u00a0", " "), err=err)


def echo_text(text: str) -> None:
    """A block of lines, each wrapped between words at the table width with its own indent kept
    (a "  - " bullet continues under its text). Piped, the text is written as it is."""
    limit = prose_width()
    if limit is None:
        typer.echo(text)
        return
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        hang = indent + ("  " if stripped.startswith("- ") else "")
        columns = [m.end() for m in re.finditer(r"\S {2,}(?=\S)", line)]  # a table row: hang under its last column
        if columns and columns[-1] <= limit // 2:
            hang = " " * columns[-1]
        out.extend(textwrap.wrap(line, width=limit, break_long_words=False, break_on_hyphens=False,
                                 subsequent_indent=hang, drop_whitespace=True) or [""])  # fmt: skip
    typer.echo("\n".join(out))


def print_records(columns: Sequence[Col], records: Sequence[Mapping[str, Any]], title: str | None = None) -> None:
    """Print a table that fits the terminal; a note on stderr names any column left off."""
    limit = width()
    lines, hidden = render(columns, records, limit=limit)
    styled = [("italic", truncate(printable(title), limit))] if title else []
    styled += [("bold", lines[0]), ("dim", lines[1]), *(("", row) for row in lines[2:])]
    _print_styled(styled, limit=limit)
    if hidden:
        _print_styled([("dim", f"(left off to fit {limit} columns: {', '.join(hidden)}; see --columns)")], err=True)


def _print_styled(lines: Sequence[tuple[str, str]], *, limit: int | None = None, err: bool = False) -> None:
    """Lines of text, each in its style where the stream shows styles (rich's Console); elsewhere
    (piped, a file) the text alone, written as rich would write it, without importing rich."""
    stream = sys.stderr if err else sys.stdout
    if not styles_shown(stream):
        stream.write("".join(f"{text}\n" for _, text in lines))
        stream.flush()  # as rich does, so stdout and stderr keep their order in one pipe
        return
    from rich.console import Console
    from rich.text import Text

    out = Console(width=limit, stderr=err, highlight=False, soft_wrap=True)
    for style, text in lines:
        out.print(Text(text, style=style))


def styles_shown(stream: Any) -> bool:
    """Whether rich's Console would write styles to `stream`: a terminal, or one the environment
    calls so (TTY_COMPATIBLE, FORCE_COLOR), or a Jupyter kernel (rich.console.Console.is_terminal
    and its color system)."""
    if hasattr(builtins, "get_ipython"):
        return True  # IPython or Jupyter: leave the choice to rich
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "1"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream: rich says not a terminal
        return False


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    """An ad-hoc table (e.g. `gpucat sql`): kinds guessed from names and values."""
    cols = [Col(name, name, _guess_kind(name, [row[i] for row in rows]), _getter(i)) for i, name in enumerate(columns)]
    print_records(cols, [dict(enumerate(row)) for row in rows], title=title)  # type: ignore[arg-type]


def _getter(i: int) -> Callable[[Mapping[Any, Any]], Any]:
    return lambda record: record[i]


def _guess_kind(name: str, values: Sequence[Any]) -> Kind:
    present = [v for v in values if v is not None]
    if not present or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "text"
    lowered = name.lower()
    if lowered.startswith("usd") or "$" in lowered or "_usd" in lowered:
        return "money"
    if lowered in COUNT_KEYS or lowered.endswith("_count"):
        return "count"
    return "num"


# --- scripts ------------------------------------------------------------------------------


def jsonable(record: Mapping[str, Any]) -> dict[str, Any]:
    """Counts that are whole numbers as integers (`gpu_count: 1`, a 0.5 slice stays 0.5)."""
    return {key: _json_value(key, value) for key, value in record.items()}


def _json_value(key: str, value: Any) -> Any:
    if (key in COUNT_KEYS or key.endswith("_count")) and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def print_csv(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """CSV rows written as they come (`rows` may be a stream)."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        values = [_json_value(c, v) for c, v in zip(columns, row, strict=True)]
        writer.writerow(["" if v is None else (v.isoformat() if isinstance(v, datetime) else v) for v in values])


def print_json_records(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A JSON array of records written as they come; strict JSON (`strict_json`)."""
    sys.stdout.write("[")
    first = True
    for row in rows:
        record = json.dumps(strict_json(jsonable(dict(zip(columns, row, strict=True)))), default=str, indent=2, allow_nan=False)
        sys.stdout.write(("\n" if first else ",\n") + textwrap.indent(record, "  "))
        first = False
    sys.stdout.write("]\n" if first else "\n]\n")


def strict_json(value: Any) -> Any:
    """What JSON can say: NaN and infinities as null, DECIMALs as numbers, inside lists and maps too."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, Mapping):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value
