"""Answers that launch: the chosen configuration as a SkyPilot or dstack task spec (YAML).

`fit --format sky|dstack` and `cost --format sky|dstack` (and the API's `format=`) print, for the
row `--pick N` (1: the cheapest), what the tool needs to rent the same thing: the accelerator in
the tool's own name and `NAME:COUNT` form, the cloud or backend, the region where the tool uses the
provider's own region ids, spot or on-demand, and a disk that holds the job's data.

Names go through one reviewed table, `schemas/reference/launch_names.csv`, whose every row cites
where the name comes from (SkyPilot's catalog and cloud registry, dstack's BackendType and
gpuhunt's GPU list). A provider or card the table has no name for is refused with one line (the
tool would reject or misplace a guessed spec).

The field names are the tools' documented ones:
- SkyPilot task YAML (docs/source/reference/yaml-spec.rst): `name`, `num_nodes`, `resources`
  with `infra` (`<cloud>/<region>`), `accelerators` (`<name>:<count>`), `use_spot`, `disk_size`
  (integer GB). SkyPilot's default OS disk is 256 GB (sky/resources.py DEFAULT_DISK_SIZE_GB): a
  smaller need keeps the default.
- dstack task (docs/docs/concepts/tasks.md): `type: task`, `name`, `nodes`, `resources` with `gpu`
  (`NAME[:MEMORY]:COUNT`) and `disk` (a range such as `120GB..`), `spot_policy` (`spot`,
  `on-demand`, `auto`), `backends`, `regions`.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpucat.schemas.errors import GpucatError, UserInputError
from gpucat.schemas.reference import REFERENCE_DIR

LAUNCH_NAMES_CSV = REFERENCE_DIR / "launch_names.csv"
FORMATS = ("sky", "dstack")
TOOLS = {"sky": "SkyPilot", "dstack": "dstack"}
SKY_DEFAULT_DISK_GB = 256  # sky/resources.py DEFAULT_DISK_SIZE_GB


class CannotLaunch(GpucatError):
    """The tool cannot target this configuration (no cloud/backend or GPU name for it)."""


@dataclass(frozen=True)
class Target:
    """What a spec needs from one configuration, whichever command chose it."""

    provider: str
    region: str
    market: str
    gpu_model: str
    gpus_per_node: float
    nodes: int
    disk_gb: float  # what the job keeps on the instance's disk


@dataclass(frozen=True)
class Names:
    gpus: dict[tuple[str, str, str], str]  # (tool, gpu_model, provider or "") -> name
    clouds: dict[tuple[str, str], tuple[str, bool, str]]  # (tool, provider) -> (name or "", regions, note)


@cache
def launch_names() -> Names:
    gpus: dict[tuple[str, str, str], str] = {}
    clouds: dict[tuple[str, str], tuple[str, bool, str]] = {}
    with LAUNCH_NAMES_CSV.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["kind"] == "gpu":
                gpus[(row["tool"], row["gpucat"], row["provider"])] = row["name"]
            else:
                clouds[(row["tool"], row["gpucat"])] = (row["name"], row["regions"] == "true", row["note"])
    return Names(gpus, clouds)


def picked(rows: Sequence[Any], pick: int) -> Any:
    """Row `pick` (1-based) of an answer ranked cheapest first."""
    if pick < 1:
        raise UserInputError(f"--pick must be at least 1, got {pick}")
    if not rows:
        raise UserInputError("no configuration to launch: the answer is empty")
    if pick > len(rows):
        raise UserInputError(f"--pick {pick}: the answer has {len(rows)} configuration{'s' if len(rows) > 1 else ''}")
    return rows[pick - 1]


def spec(target: Target, tool: str, name: str) -> str:
    """The task spec of `tool` for `target`, as YAML text; CannotLaunch where the tool has no names."""
    if tool not in FORMATS:
        raise UserInputError(f"--format must be one of {', '.join(FORMATS)}, got {tool!r}")
    names = launch_names()
    label = TOOLS[tool]
    cloud, regions, note = names.clouds.get((tool, target.provider), ("", False, ""))
    if not cloud:
        raise CannotLaunch(f"{label} cannot target {target.provider}" + (f": {note}" if note else "") + "; no spec printed")
    gpu = names.gpus.get((tool, target.gpu_model, target.provider)) or names.gpus.get((tool, target.gpu_model, ""))
    if not gpu:
        raise CannotLaunch(f"{label} has no reviewed name for {target.gpu_model} (schemas/reference/launch_names.csv); no spec printed")
    if target.gpus_per_node < 1 or target.gpus_per_node != int(target.gpus_per_node):
        raise CannotLaunch(f"{label} rents whole GPUs; this offer is a {target.gpus_per_node:g}-GPU slice; no spec printed")
    count = int(target.gpus_per_node)
    region = target.region if regions and target.region not in ("", "global") else None
    job = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpucat-job"
    need_gb = math.ceil(target.disk_gb)
    q = json.dumps  # a JSON string is a YAML double-quoted scalar
    head = f"# gpucat: {target.provider} {target.gpu_model} x{count}" + (f" x {target.nodes} nodes" if target.nodes > 1 else "")
    head += f", {target.market.replace('_', '-')}" + (f", {target.region}" if target.region else "") + f"; the job keeps {need_gb} GB on disk"
    if tool == "sky":
        lines = [head, f"name: {q(job)}"]
        if target.nodes > 1:
            lines.append(f"num_nodes: {target.nodes}")
        lines += ["resources:", f"  infra: {q(cloud + (f'/{region}' if region else ''))}",
                  f"  accelerators: {q(f'{gpu}:{count}')}", f"  use_spot: {'true' if target.market == 'spot' else 'false'}",
                  f"  disk_size: {max(SKY_DEFAULT_DISK_GB, need_gb)}"]  # fmt: skip
    else:
        lines = [head, "type: task", f"name: {q(job)}"]
        if target.nodes > 1:
            lines.append(f"nodes: {target.nodes}")
        lines += ["resources:", f"  gpu: {q(f'{gpu}:{count}')}", f"  disk: {q(f'{max(need_gb, 1)}GB..')}",
                  f"spot_policy: {'spot' if target.market == 'spot' else 'on-demand'}", "backends:", f"  - {q(cloud)}"]  # fmt: skip
        if region:
            lines += ["regions:", f"  - {q(region)}"]
    return "\n".join(lines) + "\n"


def fit_target(row: Any, disk_gb: float) -> Target:
    """A `gpucat fit` row (FitRow or its dict): GPUs per instance and instances."""
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
    return Target(provider=get("provider"), region=get("region") or "", market=get("market"), gpu_model=get("gpu_model"),
                  gpus_per_node=float(get("gpu_count")), nodes=int(get("nodes")), disk_gb=disk_gb)  # fmt: skip


def cost_target(row: Any, disk_gb: float) -> Target:
    """A `gpucat cost` row (CostRow): its GPUs are the configuration's total."""
    nodes = max(int(row.nodes), 1)
    return Target(provider=row.provider, region=row.region or "", market=row.market, gpu_model=row.gpu_model,
                  gpus_per_node=row.gpus / nodes, nodes=nodes, disk_gb=disk_gb)  # fmt: skip

