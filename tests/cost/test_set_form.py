"""`job_costs` ranks in set form (cost_*.sql): the same answer as pricing each fitting offer on its own,
and an empty answer explained from the one pass's counts, without asking the catalog again."""

from __future__ import annotations

import hashlib

import duckdb
import pytest
from typer.testing import CliRunner

from gpucat.cli import app
from gpucat.cost.rank import CostOptions, _hardware, _price, _unusable, hardware_time, job_costs
from gpucat.cost.terms import load_terms
from gpucat.cost.throughput import load_factors
from gpucat.fit import FitOptions, fit
from gpucat.memory import TrainSettings, get_model_arch

runner = CliRunner()
CASES = [
    ("llama-3.1-8b", TrainSettings(method="qlora"), CostOptions(tokens=100e6, markets=("on_demand", "spot"), top=1_000_000)),
    ("llama-3.1-8b", TrainSettings(method="lora"), CostOptions(tokens=300e6, epochs=2, markets=("spot",), top=1_000_000, retention_h=0)),
    ("llama-3.1-70b", TrainSettings(method="qlora"),
     CostOptions(tokens=50e6, markets=("on_demand", "spot"), top=1_000_000, eval_tokens=1e6, checkpoint_every_h=2, dataset_gb=30)),
    ("llama-3.1-8b", TrainSettings(method="full", precision="fp16-mixed"),
     CostOptions(tokens=1e9, top=1_000_000, providers=("runpod", "aws", "vast"), available_only=True)),
]  # fmt: skip


def one_by_one(con, arch, settings, options):
    """The reference: `gpucat fit`'s rows, each priced on its own by `job_cost`, then sorted."""
    terms, factors = load_terms(con), load_factors()
    market = options.markets[0] if len(options.markets) == 1 else None
    fitted = fit(con, arch, settings, FitOptions(headroom=options.headroom, max_gpus=options.max_gpus, market=market,
                                                providers=[p.lower() for p in options.providers], available_only=options.available_only,
                                                include_stale=options.include_stale, limit=1_000_000))  # fmt: skip
    rows, missing = [], []
    for row in fitted.rows:
        row["fabric_gbps"] = terms.fabric_gbps.get((row["provider"], row["offer_id"]))  # fit's rows name the fabric only
        reason = _unusable(row, settings, terms)
        hw = None if reason else _hardware(row, settings, terms)
        if hw is None:
            missing.append({"provider": row["provider"], "offer_id": row["offer_id"], "gpu_model": row["gpu_model"],
                            "missing": reason or f"no {settings.precision} TFLOPS figure"})  # fmt: skip
            continue
        timed = hardware_time(hw, arch, settings, options, factors, row["market"] == "spot", row["provider"])
        rows.append(_price(row, timed, options, terms, factors))
    rows.sort(key=lambda r: (r.total_usd, r.hours, r.provider, r.offer_id))
    return rows, missing, len(fitted.rows)


@pytest.mark.parametrize(("model", "settings", "options"), CASES)
def test_set_form_ranks_every_offer_as_pricing_each_on_its_own(catalog_db, model, settings, options):
    con = duckdb.connect(str(catalog_db), read_only=True)
    arch = get_model_arch(model)
    result = job_costs(con, arch, settings, options)
    rows, missing, offers_in = one_by_one(con, arch, settings, options)
    assert result.offers_in == offers_in and result.costed == len(rows) > 0
    assert [r.as_json() | {"near_tie": None} for r in result.rows] == [r.as_json() | {"near_tie": None} for r in rows]
    assert [r.lines for r in result.rows] == [r.lines for r in rows]
    assert result.not_costable == missing


@pytest.mark.parametrize(
    "filters",
    [{}, {"providers": ("runpod",)}, {"markets": ("spot",)}, {"available_only": True}, {"include_stale": True},
     {"providers": ("lambda", "aws"), "markets": ("spot",), "available_only": True}],
)  # fmt: skip
def test_counts_of_the_one_pass_match_asking_again(catalog_db, filters):
    con = duckdb.connect(str(catalog_db), read_only=True)
    arch, settings = get_model_arch("llama-3.1-8b"), TrainSettings(method="qlora")
    base = CostOptions(tokens=100e6, markets=("on_demand", "spot"), providers=("vast",), top=1_000_000)
    counted = job_costs(con, arch, settings, base)
    asked = job_costs(con, arch, settings, CostOptions(**{**base.__dict__, **filters}))
    options = CostOptions(**{**base.__dict__, **filters})
    assert counted.candidates(options) == asked.offers_in
    assert counted.candidates(options, priced_only=True) == asked.costed


def test_empty_answer_names_the_filter_that_emptied_it(cost_db):
    result = runner.invoke(app, ["cost", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M",
                                 "--provider", "lambda", "--spot", "--db", str(cost_db)])  # fmt: skip
    assert result.exit_code == 0, result.output
    con = duckdb.connect(str(cost_db), read_only=True)
    # The filters are added one at a time to the unfiltered question: --provider first, then the market.
    lambda_any = job_costs(con, get_model_arch("llama-3.1-8b"), TrainSettings(method="qlora", sharding="fsdp"),  # the CLI default
                           CostOptions(tokens=100e6, providers=("lambda",), markets=("on_demand", "spot"), include_stale=True))  # fmt: skip
    assert lambda_any.rows and all(r.market == "on_demand" for r in lambda_any.rows)  # lambda sells no spot
    expected = f"the market (--spot/--on-demand/--both) left none of the {len(lambda_any.rows)} that match otherwise"
    assert expected in " ".join(result.stdout.split())


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_cost_writes_nothing_unless_saved(cost_db):
    args = ["cost", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M", "--top", "3", "--db", str(cost_db)]
    before = digest(cost_db)
    assert runner.invoke(app, args).exit_code == 0
    assert digest(cost_db) == before
    assert runner.invoke(app, [*args, "--save"]).exit_code == 0
    with duckdb.connect(str(cost_db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM job_costs").fetchone() == (3,)
