"""Answers that launch: `fit`/`cost --format sky|dstack` print the chosen configuration as the
tool's own task spec, with names from the reviewed table schemas/reference/launch_names.csv.

The field names checked here are the tools' documented ones:
- SkyPilot task YAML: skypilot-org/skypilot docs/source/reference/yaml-spec.rst
  @ 0048bbf65901f55a87659d043c60004aa7f38ab7: `name`, `num_nodes`, `resources` with `infra`
  ("<cloud>/<region>/<zone> (region and zone are optional)"), `accelerators` ("Format:
  <name>:<count> (or simply <name>, short for a count of 1)"), `use_spot`, `disk_size` (integer GB).
- dstack task: dstackai/dstack docs/docs/concepts/tasks.md @ 0219c0bbbd1e7e7499ba93951c55143b22c7c83e:
  `type: task`, `name`, `nodes`, `resources.gpu` (e.g. `A100:2`, `A100:40GB:2`), `resources.disk`
  (an exact value or a range such as `24GB..`), `spot_policy` ("It accepts spot, on-demand, and
  auto"), `backends`, `regions`.
"""

from __future__ import annotations

import csv
import json
import math
import re

import pytest
import yaml
from typer.testing import CliRunner

import gpucat
from gpucat import launch
from gpucat.cli import app
from gpucat.cost.sizes import kept_on_disk_gb
from gpucat.memory import TrainingRequest
from gpucat.schemas.reference import gpu_models
from gpucat.scrapers import all_sources
from tests.test_first_run import YEAR_ON

SKY_FIELDS = {"name", "num_nodes", "resources"}
SKY_RESOURCES = {"infra", "accelerators", "use_spot", "disk_size"}
DSTACK_FIELDS = {"type", "name", "nodes", "resources", "spot_policy", "backends", "regions"}
DSTACK_RESOURCES = {"gpu", "disk"}
# The SkyPilot syntax for one accelerator type: <name>:<count> or <name> (yaml-spec.rst).
SKY_ACCELERATORS = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9 .\-]*?)(?::(?P<count>[1-9]\d*))?$")
# dstack's gpu spec: NAME[:MEMORY]:COUNT (tasks.md: A100:2, A100:40GB:2).
DSTACK_GPU = re.compile(r"^(?P<name>[A-Za-z0-9]+)(?::(?P<memory>\d+GB))?:(?P<count>[1-9]\d*)$")
# Canonical accelerator names in SkyPilot's catalog (skypilot-org/skypilot-catalog
# catalogs/v8/common/accelerators.csv @ 001ca549aad50db24c5670b5438bea0573a2b6c0, GPU rows).
SKY_CATALOG = {
    "A10", "A100", "A100-80GB", "A100-80GB-SXM", "A10G", "A30", "A40", "A4000", "A6000", "A800", "B200", "GH200", "GTX1660S",
    "Gaudi HL-205", "H100", "H100-MEGA", "H100-NVL", "H100-NVLINK", "H100-SXM", "H200", "H200-SXM", "K80", "L4", "L40", "L40S",
    "M4000", "M60", "MI300X", "P100", "P4", "P4000", "RTX3060", "RTX3070", "RTX3080", "RTX3090", "RTX4000-Ada", "RTX4090",
    "RTX5060", "RTX5090", "RTX6000", "RTX6000-Ada", "RTX6000Ada", "RTXA4000", "RTXA4500", "RTXA5000", "RTXA6000", "RTXPRO6000S",
    "RTXPRO6000WS", "Radeon MI25", "Radeon Pro V520", "T4", "T4g", "V100", "V100-32GB",
}  # fmt: skip
# dstack's backend names (dstackai/dstack src/dstack/_internal/core/models/backends/base.py
# @ f49b02d43c01ecfb08873d2ffe632a331653cc4a, BackendType values).
DSTACK_BACKENDS = {"amddevcloud", "aws", "azure", "cloudrift", "cudo", "datacrunch", "digitalocean", "dstack", "gcp", "hotaisle",
                   "kubernetes", "lambda", "local", "remote", "nebius", "oci", "runpod", "tensordock", "vastai", "verda", "vultr"}  # fmt: skip
JOB = ["--model", "llama-3.1-8b", "--method", "qlora"]
ENV = {"GPUCAT_NOW": YEAR_ON.isoformat()}


def run(*args: str, db, ok: bool = True):
    result = CliRunner().invoke(app, [*args, "--db", str(db)], env=ENV)
    assert (result.exit_code == 0) == ok, result.output
    return result


def table_rows() -> list[dict[str, str]]:
    with launch.LAUNCH_NAMES_CSV.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_the_table_names_known_cards_and_providers_and_cites_each_name():
    providers = {s.provider for s in all_sources().values() if "offers" in s.tables}
    problems = []
    for row in table_rows():
        known = gpu_models() if row["kind"] == "gpu" else providers
        if row["gpucat"] not in known:
            problems.append(f"unknown {row['kind']} {row['gpucat']}")
        if row["name"] and not row["source"]:
            problems.append(f"{row['tool']} {row['gpucat']}: a name without a source")
        if not row["name"] and not row["note"]:
            problems.append(f"{row['tool']} {row['gpucat']}: cannot target, without saying why")
        if row["tool"] == "sky" and row["kind"] == "gpu" and row["name"] not in SKY_CATALOG:
            problems.append(f"sky {row['name']} is not in SkyPilot's catalog")
        if row["tool"] == "dstack" and row["kind"] == "cloud" and row["name"] and row["name"] not in DSTACK_BACKENDS:
            problems.append(f"dstack backend {row['name']} is not a BackendType")
    assert problems == []
    # Every provider gpucat scrapes is decided for both tools: a name, or a reason it has none.
    for tool in launch.FORMATS:
        assert {r["gpucat"] for r in table_rows() if r["tool"] == tool and r["kind"] == "cloud"} == providers


def cost_rows(db, *extra: str) -> list[dict]:
    return json.loads(run("cost", *JOB, "--tokens", "100M", "--json", *extra, db=db).stdout)


def disk_gb() -> float:
    request = TrainingRequest(model="llama-3.1-8b", method="qlora", sharding="fsdp")
    arch = request.arch()
    return kept_on_disk_gb(arch, request.settings(arch), 1e8)


def expected_name(tool: str, gpu_model: str, provider: str) -> str:
    names = launch.launch_names().gpus
    return names.get((tool, gpu_model, provider)) or names[(tool, gpu_model, "")]


@pytest.mark.parametrize("pick", [1, 2])
def test_cost_format_sky_is_a_skypilot_task(catalog_db, pick):
    ranked = cost_rows(catalog_db, "--both")
    row = ranked[pick - 1]
    done = run("cost", *JOB, "--tokens", "100M", "--both", "--format", "sky", "--pick", str(pick), db=catalog_db)
    task = yaml.safe_load(done.stdout)
    assert set(task) <= SKY_FIELDS and set(task["resources"]) <= SKY_RESOURCES
    accelerators = SKY_ACCELERATORS.match(task["resources"]["accelerators"])
    assert accelerators, task["resources"]["accelerators"]
    cloud, regions, _ = launch.launch_names().clouds[("sky", row["provider"])]
    nodes = row["nodes"]
    assert task == {
        "name": "llama-3-1-8b-qlora",
        **({"num_nodes": nodes} if nodes > 1 else {}),
        "resources": {
            "infra": cloud + (f"/{row['region']}" if regions and row["region"] != "global" else ""),
            "accelerators": f"{expected_name('sky', row['gpu_model'], row['provider'])}:{row['gpus'] // nodes}",
            "use_spot": row["market"] == "spot",
            "disk_size": max(256, math.ceil(disk_gb())),
        },
    }
    assert accelerators["name"] in SKY_CATALOG


def test_cost_format_dstack_is_a_dstack_task(catalog_db):
    row = cost_rows(catalog_db, "--provider", "aws", "--spot")[0]
    done = run("cost", *JOB, "--tokens", "100M", "--provider", "aws", "--spot", "--format", "dstack", db=catalog_db)
    task = yaml.safe_load(done.stdout)
    assert set(task) <= DSTACK_FIELDS and set(task["resources"]) <= DSTACK_RESOURCES
    gpu = DSTACK_GPU.match(task["resources"]["gpu"])
    assert gpu, task["resources"]["gpu"]
    assert task == {
        "type": "task",
        "name": "llama-3-1-8b-qlora",
        "resources": {"gpu": f"{expected_name('dstack', row['gpu_model'], 'aws')}:{row['gpus']}", "disk": f"{math.ceil(disk_gb())}GB.."},
        "spot_policy": "spot",
        "backends": ["aws"],
        "regions": [row["region"]],
    }
    assert set(task["backends"]) <= DSTACK_BACKENDS


def test_fit_format_takes_the_cheapest_configuration_and_multi_node_counts(catalog_db):
    """A full fine-tune of a 70B model on AWS needs several 8-GPU nodes: `num_nodes`/`nodes` and
    the GPUs per node, not the total."""
    args = ["fit", "--model", "llama-3.1-70b", "--method", "full", "--precision", "bf16-mixed", "--provider", "aws"]
    first = json.loads(run(*args, "--json", db=catalog_db).stdout)["offers"][0]
    sky = yaml.safe_load(run(*args, "--format", "sky", db=catalog_db).stdout)
    dstack = yaml.safe_load(run(*args, "--format", "dstack", db=catalog_db).stdout)
    per_node = int(first["gpu_count"])
    assert first["nodes"] > 1
    assert (sky["num_nodes"], sky["resources"]["accelerators"]) == (first["nodes"], f"{expected_name('sky', first['gpu_model'], 'aws')}:{per_node}")
    assert (dstack["nodes"], dstack["resources"]["gpu"]) == (first["nodes"], f"{expected_name('dstack', first['gpu_model'], '')}:{per_node}")
    assert sky["resources"]["infra"] == f"aws/{first['region']}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--provider", "crusoe", "--format", "sky"], "error: SkyPilot cannot target crusoe"),
        (["--provider", "scaleway", "--format", "dstack"], "error: dstack cannot target scaleway"),
        (["--format", "sky", "--pick", "999"], "error: --pick 999: the answer has"),
        (["--format", "kubernetes"], "error: --format must be one of sky, dstack"),
        (["--format", "sky", "--json"], "error: --format excludes --json"),
    ],
)
def test_what_cannot_launch_is_one_line_and_no_spec(catalog_db, args, message):
    done = run("cost", *JOB, "--tokens", "100M", "--top", "999", *args, db=catalog_db, ok=False)
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(message), done.stderr


def test_the_api_returns_the_same_spec(catalog_db, monkeypatch):
    monkeypatch.setenv("GPUCAT_DB", str(catalog_db))
    monkeypatch.setenv("GPUCAT_NOW", YEAR_ON.isoformat())
    for tool in launch.FORMATS:
        cli = run("cost", *JOB, "--tokens", "100M", "--format", tool, "--pick", "3", db=catalog_db).stdout
        assert gpucat.cost(model="llama-3.1-8b", method="qlora", tokens="100M", format=tool, pick=3) == cli
        cli = run("fit", *JOB, "--format", tool, db=catalog_db).stdout
        assert gpucat.fit(model="llama-3.1-8b", method="qlora", format=tool) == cli


@pytest.mark.parametrize(
    ("gpu_count", "message"), [(0.5, "a 0.5-GPU slice"), (1.0, None)],
)
def test_a_fractional_gpu_is_refused(gpu_count, message):
    target = launch.Target(provider="runpod", region="global", market="on_demand", gpu_model="L4", gpus_per_node=gpu_count,
                           nodes=1, disk_gb=10)  # fmt: skip
    if message is None:
        assert yaml.safe_load(launch.spec(target, "sky", "x"))["resources"]["accelerators"] == "L4:1"
    else:
        with pytest.raises(launch.CannotLaunch, match=message):
            launch.spec(target, "sky", "x")
