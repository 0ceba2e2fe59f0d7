"""`gpucat report`: one self-contained HTML file comparing offers across providers.

Charts are plotly figures; plotly.js is inlined once in the page, so the file opens offline (no
CDN, no fetches). Sections: the on-demand and spot $/GPU-hour spread per GPU model (each dot is a
provider's cheapest offer), $/GB of VRAM, availability by provider, the cheapest price over time
from `offer_versions`, and, when a job is given, the configurations it fits on, ranked by hourly
price as a chart and a table (and, given the training tokens, what the whole job costs on each,
from gpucat.cost). The data behind each section is a named query in warehouse/sql.
"""

from __future__ import annotations

import html
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb

from gpucat.formats import money, printable
from gpucat.schemas.errors import UserInputError
from gpucat.warehouse.db import query_sql

MARKETS = ("on_demand", "spot")
MARKET_COLOURS = {"on_demand": "#1f77b4", "spot": "#ff7f0e"}
STOCK_COLOURS = {"available": "#2ca02c", "unavailable": "#d62728", "unknown": "#9e9e9e", "limited": "#bcbd22"}
HISTORY_MODELS = 12  # lines in the history chart: the models with the most offers
WINDOW_DAYS = 90  # how far back the history chart reaches (`gpucat report --window-days`)


@dataclass(frozen=True)
class Job:
    """A fine-tuning job for the report's fit section: what `gpucat fit` ranks, as rows."""

    title: str
    needs: str
    rows: list[dict[str, Any]]
    cost_note: str
    costs: list[Any] = field(default_factory=list)  # gpucat.cost CostRow, cheapest job first


@dataclass(frozen=True)
class ReportData:
    generated_at: datetime
    spread: list[dict[str, Any]]
    availability: list[dict[str, Any]]
    history: list[dict[str, Any]]
    job: Job | None = None
    notes: list[str] = field(default_factory=list)
    include_stale: bool = False
    replay: str | None = None  # the banner when the data was replayed from a capture (gpucat.freshness.DataAge.label)
    stale_note: str | None = None  # which stale sources the page left out (or kept)
    window_days: float = WINDOW_DAYS  # the history chart's reach back from generated_at


def _records(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    cursor = con.execute(query_sql(name), params or {})
    columns = [d[0] for d in cursor.description or []]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def price_spread(con: duckdb.DuckDBPyConnection, *, include_stale: bool = False) -> list[dict[str, Any]]:
    """The report's spread alone (what `headline` reads): the refresh flow's artifact needs no more."""
    return _records(con, "report_spread", {"include_stale": include_stale})


def collect(con: duckdb.DuckDBPyConnection, job: Job | None = None, now: datetime | None = None, *,
            include_stale: bool = False, window_days: float = WINDOW_DAYS) -> ReportData:
    """The page's data. Stale offers are left out unless `include_stale`, by the rule `offers`,
    `fit` and `cost` follow (gpucat.freshness); a replay is named in a banner with its age. The
    price history covers the `window_days` before `now`, for the models the chart shows."""
    from gpucat.freshness import data_age, left_out_note, stale_sources

    if not window_days > 0:
        raise UserInputError(f"--window-days must be positive, got {window_days:g}")
    generated_at = now or datetime.now(UTC)
    fresh = {"include_stale": include_stale}
    spread = price_spread(con, include_stale=include_stale)
    window = {"models": history_models(spread), "since": generated_at - timedelta(days=window_days), "until": generated_at}
    return ReportData(
        generated_at=generated_at,
        spread=spread,
        availability=_records(con, "report_availability", fresh),
        history=_records(con, "report_history", window),
        job=job,
        include_stale=include_stale,
        replay=data_age(con).label(),
        stale_note=left_out_note(stale_sources(con), include_stale),
        window_days=window_days,
    )


def history_models(spread: Sequence[Mapping[str, Any]]) -> list[str]:
    """The GPU models the history chart draws: the HISTORY_MODELS with the most current offers."""
    offers: dict[str, int] = defaultdict(int)
    for row in spread:
        offers[row["gpu_model"]] += row["offers"]
    return sorted(offers, key=lambda m: (-offers[m], m))[:HISTORY_MODELS]


# --- the headline: one row per GPU model ---------------------------------------------------


def headline(spread: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per GPU model: memory, cheapest on-demand and spot $/GPU-hour (and who), providers, $/GB."""
    by_model: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in spread:
        by_model[row["gpu_model"]].append(row)
    out = []
    for model, rows in by_model.items():
        entry: dict[str, Any] = {"gpu_model": model, "gpu_memory_gb": rows[0]["gpu_memory_gb"],
                                 "providers": len({r["provider"] for r in rows})}  # fmt: skip
        for market in MARKETS:
            priced = [r for r in rows if r["market"] == market]
            best = min(priced, key=lambda r: r["usd_per_gpu_hour"], default=None)
            entry[f"{market}_usd_per_gpu_hour"] = best["usd_per_gpu_hour"] if best else None
            entry[f"{market}_provider"] = best["provider"] if best else None
            entry[f"{market}_median"] = statistics.median(r["usd_per_gpu_hour"] for r in priced) if priced else None
        cheapest = entry["on_demand_usd_per_gpu_hour"]
        entry["on_demand_usd_per_gb_vram_hour"] = cheapest / entry["gpu_memory_gb"] if cheapest else None
        out.append(entry)
    return sorted(out, key=lambda e: (e["on_demand_usd_per_gpu_hour"] or e["spot_usd_per_gpu_hour"] or 0, e["gpu_model"]))


def headline_markdown(rows: Sequence[Mapping[str, Any]], width: int = 30) -> str:
    """The headline as Markdown (a Prefect artifact): a bar per model, cheapest on-demand $/GPU-h."""
    priced = [r for r in rows if r["on_demand_usd_per_gpu_hour"]]
    top = max((r["on_demand_usd_per_gpu_hour"] for r in priced), default=1.0)
    lines = ["| GPU | GB | cheapest on-demand $/GPU-h | | spot | providers |", "|---|--:|--:|---|--:|--:|"]
    for r in priced:
        bar = "█" * max(1, round(width * r["on_demand_usd_per_gpu_hour"] / top))
        spot = f"{r['spot_usd_per_gpu_hour']:.2f}" if r["spot_usd_per_gpu_hour"] else ""
        lines.append(f"| {r['gpu_model']} | {r['gpu_memory_gb']:g} | {r['on_demand_usd_per_gpu_hour']:.2f} "
                     f"({r['on_demand_provider']}) | `{bar}` | {spot} | {r['providers']} |")  # fmt: skip
    return "\n".join(lines) + "\n"


# --- charts --------------------------------------------------------------------------------


def _model_order(spread: Sequence[Mapping[str, Any]]) -> list[str]:
    """GPU models by median $/GPU-hour across providers, cheapest first."""
    prices: dict[str, list[float]] = defaultdict(list)
    for row in spread:
        prices[row["gpu_model"]].append(row["usd_per_gpu_hour"])
    return sorted(prices, key=lambda m: (statistics.median(prices[m]), m))


def spread_figure(spread: Sequence[Mapping[str, Any]]) -> Any:
    import plotly.graph_objects as go

    order = _model_order(spread)
    fig = go.Figure()
    for market in MARKETS:
        rows = [r for r in spread if r["market"] == market]
        fig.add_trace(go.Box(
            x=[r["gpu_model"] for r in rows], y=[r["usd_per_gpu_hour"] for r in rows], name=market.replace("_", "-"),
            boxpoints="all", jitter=0.4, pointpos=0, marker={"color": MARKET_COLOURS[market], "size": 5},
            text=[f"{r['provider']}: {r['instance_type']} ({r['region']})" for r in rows],
            hovertemplate="%{x}<br>$%{y:.3f}/GPU-h<br>%{text}<extra>" + market + "</extra>",
        ))  # fmt: skip
    fig.update_layout(boxmode="group", yaxis={"type": "log", "title": "USD per GPU-hour (log)"},
                      xaxis={"categoryorder": "array", "categoryarray": order, "tickangle": -45},
                      legend={"orientation": "h", "y": -0.35}, margin={"t": 30, "b": 140})  # fmt: skip
    return fig


def vram_figure(spread: Sequence[Mapping[str, Any]]) -> Any:
    import plotly.graph_objects as go

    order = _model_order(spread)
    fig = go.Figure()
    for market in MARKETS:
        best: dict[str, Mapping[str, Any]] = {}
        for row in spread:
            kept = best.get(row["gpu_model"])
            if row["market"] == market and (kept is None or row["usd_per_gb_vram_hour"] < kept["usd_per_gb_vram_hour"]):
                best[row["gpu_model"]] = row
        models = [m for m in order if m in best]
        fig.add_trace(go.Bar(
            x=models, y=[best[m]["usd_per_gb_vram_hour"] for m in models], name=market.replace("_", "-"),
            marker={"color": MARKET_COLOURS[market]}, text=[best[m]["provider"] for m in models], textposition="none",
            hovertemplate="%{x}<br>$%{y:.4f} per GB-hour<br>%{text}<extra>" + market + "</extra>",
        ))  # fmt: skip
    fig.update_layout(barmode="group", yaxis={"title": "cheapest USD per GB of GPU memory per hour"},
                      xaxis={"tickangle": -45}, legend={"orientation": "h", "y": -0.35}, margin={"t": 30, "b": 140})  # fmt: skip
    return fig


def availability_figure(availability: Sequence[Mapping[str, Any]]) -> Any:
    import plotly.graph_objects as go

    providers = sorted({r["provider"] for r in availability})
    known = list(STOCK_COLOURS)
    states = sorted({r["availability"] for r in availability}, key=lambda s: (known.index(s) if s in known else len(known), s))
    counts = {(r["provider"], r["availability"]): r["offers"] for r in availability}
    fig = go.Figure()
    for state in states:
        fig.add_trace(go.Bar(x=providers, y=[counts.get((p, state), 0) for p in providers], name=state,
                             marker={"color": STOCK_COLOURS.get(state, "#8c564b")}))  # fmt: skip
    fig.update_layout(barmode="stack", yaxis={"title": "current offers"}, legend={"orientation": "h"}, margin={"t": 30})
    return fig


def history_figure(history: Sequence[Mapping[str, Any]], spread: Sequence[Mapping[str, Any]]) -> Any:
    """A step line per shown model and market; a None price (no offer then) breaks the line."""
    import plotly.graph_objects as go

    lines: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for row in history:
        lines[(row["gpu_model"], row["market"])].append(row)
    fig = go.Figure()
    for model in sorted(history_models(spread)):
        for market in MARKETS:
            rows = lines.get((model, market))
            if rows:
                fig.add_trace(go.Scatter(
                    x=[r["at"].isoformat() for r in rows], y=[r["usd_per_gpu_hour"] for r in rows],
                    name=f"{model} {market.replace('_', '-')}", mode="lines+markers", line={"shape": "hv"},
                    hovertemplate="%{x}<br>$%{y:.3f}/GPU-h<extra>" + f"{model} {market}" + "</extra>",
                ))  # fmt: skip
    fig.update_layout(yaxis={"type": "log", "title": "cheapest USD per GPU-hour (log)"}, margin={"t": 30})
    return fig


def fit_figure(rows: Sequence[Mapping[str, Any]]) -> Any:
    import plotly.graph_objects as go

    labels = [f"{i + 1}. {r['provider']} {r['gpus_total']:g}× {r['gpu_model']} {r['market']}" for i, r in enumerate(rows)]
    fig = go.Figure(go.Bar(
        y=labels, x=[r["usd_per_hour_total"] for r in rows], orientation="h",
        marker={"color": ["#ff7f0e" if r["fit"] == "tight" else "#2ca02c" for r in rows]},
        text=[f"{r['fit']}, stock {r['availability']}" for r in rows],
        hovertemplate="%{y}<br>$%{x:.2f}/h<br>%{text}<extra></extra>",
    ))  # fmt: skip
    fig.update_layout(xaxis={"title": "USD per hour, whole configuration"}, yaxis={"autorange": "reversed"},
                      height=max(300, 22 * len(rows) + 120), margin={"t": 30, "l": 10})  # fmt: skip
    return fig


# --- the page ------------------------------------------------------------------------------

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; color: #222; background: #fff; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.2rem; margin-top: 2.2rem; }
p.lead, p.note { color: #555; } .chart { min-height: 420px; }
table { border-collapse: collapse; font-size: .85rem; margin-top: .6rem; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #e3e3e3; text-align: left; white-space: nowrap; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f5f5f5; position: sticky; top: 0; } .scroll { overflow-x: auto; max-width: 100%; }
p.banner { background: #fff4e5; border-left: 4px solid #ff9800; padding: .5rem .8rem; }
"""


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool]) -> str:
    head = "".join(f'<th class="{"n" if n else ""}">{html.escape(printable(h))}</th>' for h, n in zip(headers, numeric, strict=True))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"n" if n else ""}">{html.escape("" if v is None else printable(str(v)))}</td>'
                         for v, n in zip(row, numeric, strict=True)) + "</tr>"
        for row in rows
    )  # fmt: skip
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _chart(fig: Any, div_id: str) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, default_height=460,
                       config={"displaylogo": False, "responsive": True})  # fmt: skip


def render_html(data: ReportData) -> str:
    """The whole page as one string: inline CSS, inline plotly.js, every chart and table."""
    from plotly.offline import get_plotlyjs

    heads = headline(data.spread)
    head_table = _table(
        ["GPU", "GB", "on-demand $/GPU-h", "from", "median", "spot $/GPU-h", "from", "providers", "$/GB-h"],
        [[h["gpu_model"], f"{h['gpu_memory_gb']:g}", money(h["on_demand_usd_per_gpu_hour"]), h["on_demand_provider"],
          money(h["on_demand_median"]), money(h["spot_usd_per_gpu_hour"]), h["spot_provider"], h["providers"],
          money(h["on_demand_usd_per_gb_vram_hour"])] for h in heads],
        [False, True, True, False, True, True, False, True, True],
    )  # fmt: skip
    sections = [
        ("spread", "$/GPU-hour across providers, per GPU model",
         "Each dot is one provider's cheapest offer for that GPU and market; boxes show the spread.",
         _chart(spread_figure(data.spread), "chart-spread")),
        ("vram", "$ per GB of GPU memory",
         "The cheapest offer's hourly price divided by the card's memory (GB = 10^9 bytes).",
         _chart(vram_figure(data.spread), "chart-vram")),
        ("availability", "Availability by provider",
         "Offers by reported stock. Providers that publish no stock (AWS, Azure, most list prices) are unknown, "
         "not unavailable.", _chart(availability_figure(data.availability), "chart-availability")),
        ("history", "Price history",
         f"The cheapest $/GPU-hour over the last {data.window_days:g} days from offer_versions, for the {HISTORY_MODELS} GPU "
         "models with the most offers; a point marks each change of the cheapest price.",
         _chart(history_figure(data.history, data.spread), "chart-history")),
    ]  # fmt: skip
    if data.job is not None:
        job = data.job
        rows = job.rows
        fit_table = _table(
            ["#", "provider", "GPU", "GPUs", "nodes", "need GB", "GB/gpu", "fit", "$/h", "market", "stock", "region", "instance"],
            [[i + 1, r["provider"], r["gpu_model"], f"{r['gpus_total']:g}", r["nodes"], f"{r['need_gb_per_gpu']:.1f}",
              f"{r['gpu_memory_gb']:g}", r["fit"], money(r["usd_per_hour_total"]), r["market"], r["availability"],
              r["region"], r["instance_type"]] for i, r in enumerate(rows)],
            [True, False, False, True, True, True, True, False, True, False, False, False, False],
        )  # fmt: skip
        empty = "No current offer fits this job" + ("; stale offers were left out (--include-stale keeps them)." if data.stale_note and not data.include_stale else ".")
        body = (_chart(fit_figure(rows), "chart-fit") + fit_table) if rows else f"<p>{html.escape(empty)}</p>"
        if job.costs:
            body += ("<h3>What the whole job costs</h3>" + _chart(cost_figure(job.costs), "chart-cost")
                     + _cost_table(job.costs))  # fmt: skip
        legend = "Green: fits; orange: tight (the estimate's error band reaches past the usable memory)."
        sections.append(("fit", f"Where {job.title} fits", f"{job.needs} {job.cost_note} {legend}", body))
    nav = " · ".join(f'<a href="#{key}">{html.escape(title)}</a>' for key, title, _, _ in sections)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>gpucat report</title>",
        f"<style>{STYLE}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>',
        "</head><body>",
        "<h1>gpucat: rented GPU prices across providers</h1>",
        *([f'<p class="banner" id="replay"><strong>{html.escape(data.replay[0].upper() + data.replay[1:])}.</strong> '
           "The prices are as that capture recorded them, not today's market; freshness is judged as of each "
           "capture.</p>"] if data.replay else []),
        f'<p class="lead">{len({r["provider"] for r in data.spread})} providers, {len(heads)} GPU models, '
        f"{sum(r['offers'] for r in data.spread)} {'offers (stale ones included)' if data.include_stale else 'current offers'}; "
        f"generated {data.generated_at:%Y-%m-%d %H:%M} UTC. USD; GB = 10^9 bytes.</p>",
        *([f'<p class="note">{html.escape(data.stale_note)}.</p>'] if data.stale_note else []),
        f"<p>{nav} · <a href=\"#headline\">table</a></p>",
    ]
    for key, title, lead, body in sections:
        parts.append(f'<section id="{key}"><h2>{html.escape(title)}</h2><p class="note">{html.escape(lead)}</p>{body}</section>')
    parts.append(f'<section id="headline"><h2>Cheapest per GPU model</h2>{head_table}</section>')
    parts.append("</body></html>")
    return "\n".join(parts)


def fit_job(con: duckdb.DuckDBPyConnection, arch: Any, settings: Any, *, limit: int = 25,
            costs: Sequence[Any] = (), tokens: float | None = None, include_stale: bool = False) -> Job:
    """The job's section: `gpucat fit`'s ranking by hourly price, and `costs` (gpucat.cost's CostRows
    for `tokens` training tokens, computed by the caller) ranked by what the whole job costs."""
    from gpucat.fit import FitOptions, fit

    result = fit(con, arch, settings, FitOptions(limit=limit, include_stale=include_stale))
    needs = ", ".join(f"{n} GPU{'s' if n > 1 else ''}: {e.per_gpu_gb:.1f} GB" for n, e in result.estimates.items())
    if tokens:
        cost_note = (f"The job-cost ranking prices {tokens:,.0f} training tokens on each configuration (gpucat cost's "
                     "defaults: one epoch, 30 min spot checkpoints, 7 days' storage); a total marked >= leaves out a "
                     "term the provider does not publish.")  # fmt: skip
    else:
        cost_note = "Ranked by hourly price; give --tokens for the ranking by what the whole job costs."
    return Job(title=f"{arch.name} ({settings.method}, {settings.sharding})", needs=f"Memory per GPU: {needs}.",
               rows=result.rows, cost_note=cost_note, costs=list(costs))  # fmt: skip


def cost_figure(costs: Sequence[Any]) -> Any:
    """The job's total cost per configuration, stacked by part (compute, storage, egress, spot)."""
    import plotly.graph_objects as go

    labels = [f"{i + 1}. {c.provider} {c.gpus}× {c.gpu_model} {c.market}" for i, c in enumerate(costs)]
    parts = (("compute", "compute_usd", "#1f77b4"), ("storage", "storage_usd", "#9467bd"),
             ("egress", "egress_usd", "#8c564b"), ("spot overhead", "spot_overhead_usd", "#ff7f0e"))  # fmt: skip
    fig = go.Figure()
    for name, attr, colour in parts:
        fig.add_trace(go.Bar(y=labels, x=[getattr(c, attr) or 0.0 for c in costs], name=name, orientation="h",
                             marker={"color": colour}, hovertemplate="%{y}<br>" + name + ": $%{x:.2f}<extra></extra>"))  # fmt: skip
    fig.update_layout(barmode="stack", xaxis={"title": "USD for the whole job"}, yaxis={"autorange": "reversed"},
                      legend={"orientation": "h"}, height=max(300, 22 * len(costs) + 140), margin={"t": 30, "l": 10})  # fmt: skip
    return fig


def _cost_table(costs: Sequence[Any]) -> str:
    return _table(
        ["#", "provider", "GPUs", "market", "hours", "compute $", "storage $", "egress $", "spot $", "total $", "stock", "offer"],
        [[i + 1, c.provider, f"{c.gpus}× {c.gpu_model}", c.market, f"{c.hours:,.2f}", money(c.compute_usd),
          "?" if c.storage_usd is None else money(c.storage_usd), "?" if c.egress_usd is None else money(c.egress_usd),
          money(c.spot_overhead_usd), (">=" if c.unknown else "") + money(c.total_usd), c.availability, c.offer_id]
         for i, c in enumerate(costs)],
        [True, False, False, False, True, True, True, True, True, True, False, False],
    )  # fmt: skip


def write_report(path: Any, data: ReportData) -> Any:
    """Write the page atomically: a reader never sees half a file."""
    from pathlib import Path

    from gpucat.outfile import write_atomic

    return write_atomic(Path(path), render_html(data).encode("utf-8"))
