"""`gpucat memory` (peak GPU memory of a fine-tuning run) and `gpucat models` (the model table).

The training options come from `gpucat/cli/_train_options.py`, shared with `fit` and `cost`.
The memory package is imported inside the commands to keep `gpucat --help` fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from gpucat.cli._app import app
from gpucat.cli._common import echo_json, handle_errors
from gpucat.cli._train_options import model_of, training_options

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]


@app.command("memory")
@handle_errors
@training_options(gpus=True, default_sharding="fsdp")
def memory(  # type: ignore[no-untyped-def]
    training,
    metric: Annotated[str, typer.Option(
        "--metric", help="nvidia-smi | reserved | allocated (torch.cuda.max_memory_*).",
    )] = "nvidia-smi",
    as_json: JsonOption = False,
) -> None:
    """Estimate the peak memory per GPU of a fine-tuning run, component by component.

    Lists what is allocated at the peak moment (GB = 10^9 bytes), host RAM for offloaded state, and the assumptions.
    """
    from gpucat.memory import estimate_memory
    from gpucat.schemas.errors import UserInputError

    if metric not in ("nvidia-smi", "reserved", "allocated"):
        raise UserInputError(f"--metric must be one of nvidia-smi, reserved, allocated, got {metric!r}")
    arch = model_of(training)
    estimate = estimate_memory(arch, training.settings(arch))
    if as_json:
        value, low, high = estimate.in_metric(metric)
        echo_json({**estimate.to_dict(), "metric": metric, "metric_gb": value, "metric_gb_low": low, "metric_gb_high": high})
    else:
        from gpucat.cli._render import echo_text
        from gpucat.memory.report import format_estimate

        echo_text(format_estimate(arch, estimate, metric))


@app.command("models")
@handle_errors
def models(
    query: Annotated[str | None, typer.Argument(
        show_default=False, help="Show only models whose repo id, alias or family contains this text (any case).",
    )] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of rows instead of a table.")] = False,
) -> None:
    """List the model architectures gpucat knows (the model_archs table)."""
    from dataclasses import asdict

    from gpucat.cli._render import print_table
    from gpucat.memory import load_model_archs

    rows = load_model_archs()
    if query:
        q = query.lower()
        rows = tuple(a for a in rows if q in a.name.lower() or q in a.alias.lower() or q in a.family.lower())
        if not rows:
            from gpucat.schemas.errors import UserInputError
            from gpucat.suggest import nearest

            names = [n for a in load_model_archs() for n in (a.alias, a.name)]
            hint = nearest(query, names)
            raise UserInputError(f"no model matches {query!r}" + (f"; did you mean {' or '.join(map(repr, hint))}?" if hint else ""))
    if as_json:
        echo_json([asdict(a) for a in rows])
        return
    columns = ("alias", "repo id", "params (B)", "layers", "hidden", "heads", "kv heads", "vocab", "experts", "type")
    print_table(columns, [
        (a.alias, a.name, round(a.params / 1e9, 2), a.n_layers + a.n_encoder_layers, a.hidden_size, a.n_heads,
         a.n_kv_heads, a.vocab_size, f"{a.n_active_experts} of {a.n_experts}" if a.is_moe else "", a.arch_type)
        for a in rows
    ])
