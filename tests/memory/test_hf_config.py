"""config.json → ModelArch, and fetching config.json from the Hub (MockTransport, no network)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import httpx
import pytest

from gpucat.cli._common import error_line
from gpucat.memory.archs import get_model_arch
from gpucat.memory.hf_config import (
    arch_from_hf_config,
    fetch_hf_config,
    load_config_file,
    load_hub_config,
    resolve_model,
)
from gpucat.schemas.errors import UnknownModel, UserInputError
from gpucat.schemas.settings import Settings

CONFIGS = Path(__file__).parent / "data" / "configs"
# fixture file -> alias of the same model in model_archs
SAME_MODEL = {
    "llama-3.2-3b": "llama-3.2-3b",
    "tinyllama-1.1b": "tinyllama-1.1b",
    "mistral-7b-v0.1": "mistral-7b-v0.1",
    "qwen2.5-7b": "qwen2.5-7b",
    "qwen3-30b-a3b": "qwen3-30b-a3b",
    "mixtral-8x7b": "mixtral-8x7b",
    "deepseek-moe-16b": "deepseek-moe-16b",
    "gemma-2-9b": "gemma-2-9b",
    "gemma-3-1b": "gemma-3-1b",
    "phi-2": "phi-2",
    "phi-3-mini": "phi-3-mini",
    "falcon-7b": "falcon-7b",
    "falcon-40b": "falcon-40b",
    "stablelm-alpha-3b": "stablelm-alpha-3b",
    "stablelm-2-1.6b": "stablelm-2-1.6b",
    "bloom-560m": "bloom-560m",
    "t5-base": "t5-base",
    "flan-t5-base": "flan-t5-base",
    "mt5-small": "mt5-small",
    "bert-large-uncased": "bert-large-uncased",
}
IDENTITY = ("name", "alias", "family", "source")


def shapes(arch) -> dict:
    return {k: v for k, v in asdict(arch).items() if k not in IDENTITY}


def test_every_fixture_is_checked():
    assert {p.stem for p in CONFIGS.glob("*.json")} == set(SAME_MODEL)


@pytest.mark.parametrize(("fixture", "alias"), SAME_MODEL.items())
def test_config_describes_the_same_model_as_the_table(fixture, alias):
    from_config = load_config_file(CONFIGS / f"{fixture}.json")
    assert shapes(from_config) == shapes(get_model_arch(alias))


def test_config_name_comes_from_the_file_when_the_config_has_none(tmp_path):
    arch = load_config_file(CONFIGS / "llama-3.2-3b.json")
    assert (arch.name, arch.family, arch.params) == ("llama-3.2-3b", "llama", 3_212_749_824)
    checkpoint = tmp_path / "my-llama"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_bytes((CONFIGS / "llama-3.2-3b.json").read_bytes())
    assert load_config_file(checkpoint / "config.json").name == "my-llama"


def test_multimodal_wrapper_is_described_by_its_text_config():
    text = json.loads((CONFIGS / "gemma-3-1b.json").read_text())
    wrapper = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
               "text_config": text, "vision_config": {"model_type": "siglip_vision_model"}}
    arch = arch_from_hf_config(wrapper, name="google/gemma-3-x")
    assert arch.params == get_model_arch("gemma-3-1b").params
    assert "vision tower not counted" in arch.source


def llama_cfg(**changes):
    cfg = json.loads((CONFIGS / "llama-3.2-3b.json").read_text())
    cfg.update(changes)
    return {k: v for k, v in cfg.items() if v is not None}


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (llama_cfg(hidden_size=None, intermediate_size=None),
         "lacks required field(s): hidden_size, intermediate_size"),
        (llama_cfg(num_hidden_layers=0), "'num_hidden_layers' must be a positive integer, got 0"),
        (llama_cfg(vocab_size=True), "'vocab_size' must be a positive integer"),
        (llama_cfg(hidden_size="3072"), "'hidden_size' must be a positive integer"),
        (llama_cfg(num_key_value_heads=5), "24 attention heads cannot be grouped over 5 key/value heads"),
        (llama_cfg(head_dim="128"), "'head_dim' must be a non-negative integer, got '128'"),
        ({**json.loads((CONFIGS / "t5-base.json").read_text()), "dropout_rate": 1.5}, "'dropout_rate' must be a probability"),
        (llama_cfg(model_type="mamba"), "model_type 'mamba' is not supported; supported:"),
        (llama_cfg(model_type="deepseek_v3"), "multi-head latent attention"),
        (llama_cfg(model_type=None), "lacks 'model_type'"),
        ({"model_type": "t5", "d_model": 512}, "lacks required field(s): d_kv, d_ff, num_layers, num_heads, vocab_size"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_bad_configs_are_one_clear_error(cfg, message):
    with pytest.raises(UserInputError) as err:
        arch_from_hf_config(cfg)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_config_files(tmp_path):
    with pytest.raises(UserInputError, match="config file not found"):
        load_config_file(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text('{"model_type": "llama",')
    with pytest.raises(UserInputError, match=r"is not valid JSON \(line 1"):
        load_config_file(tmp_path / "broken.json")
    with pytest.raises(UserInputError, match="cannot read config file"):
        load_config_file(tmp_path)


# --- Hub ---------------------------------------------------------------------------------

CONFIG_BYTES = (CONFIGS / "mistral-7b-v0.1.json").read_bytes()


class Hub:
    """A MockTransport handler that records requests and answers from a table of paths."""

    def __init__(self, answers: dict[str, httpx.Response] | None = None, error: Exception | None = None):
        self.answers = answers or {}
        self.error = error
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.error:
            raise self.error
        return self.answers.get(request.url.path, httpx.Response(404))

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))


MISTRAL_PATH = "/acme/mistral-clone/resolve/main/config.json"


def test_fetch_sends_the_token_only_as_a_header(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    hub = Hub({MISTRAL_PATH: httpx.Response(200, content=CONFIG_BYTES)})
    cfg = fetch_hf_config("acme/mistral-clone", hub.client())
    assert cfg["model_type"] == "mistral"
    (request,) = hub.requests
    assert str(request.url) == "https://huggingface.co/acme/mistral-clone/resolve/main/config.json"
    assert request.headers["authorization"] == "Bearer hf_secret"


@pytest.mark.parametrize(
    ("response", "token", "message"),
    [
        (httpx.Response(401), None, "gated or private on the Hub (set HF_TOKEN"),
        (httpx.Response(403), "hf_x", "gated or private on the Hub (the token was refused)"),
        (httpx.Response(404), None, "the Hub has no config.json for 'acme/mistral-clone'"),
        (httpx.Response(500), None, "HTTP 500"),
        (httpx.Response(200, content=b"<html>"), None, "not valid JSON"),
        (httpx.Response(200, content=b"[1]"), None, "not a JSON object"),
    ],
)
def test_fetch_failures_say_what_to_do(response, token, message):
    hub = Hub({MISTRAL_PATH: response})
    with pytest.raises(UnknownModel) as err:
        fetch_hf_config("acme/mistral-clone", hub.client(), token=token)
    assert message in str(err.value)
    assert str(err.value).endswith("pass config path/to/config.json")
    assert error_line(err.value).endswith("pass --config path/to/config.json")
    assert "hf_x" not in str(err.value)


def test_fetch_without_network_is_unknown_model():
    hub = Hub(error=httpx.ConnectError("no route"))
    with pytest.raises(UnknownModel, match=r"the Hub could not be reached \(ConnectError\); pass config"):
        fetch_hf_config("acme/mistral-clone", hub.client())


@pytest.mark.parametrize("repo", ["../etc/passwd", "acme/../x", "no-slash", "a/b/c"])
def test_repo_ids_are_checked_before_any_request(repo):
    hub = Hub()
    with pytest.raises(UnknownModel, match="not a Hugging Face repo id"):
        fetch_hf_config(repo, hub.client())
    assert hub.requests == []


def test_hub_config_is_cached_after_the_first_fetch(tmp_path):
    hub = Hub({MISTRAL_PATH: httpx.Response(200, content=CONFIG_BYTES)})
    first = load_hub_config("acme/mistral-clone", hub.client, cache=tmp_path)
    second = load_hub_config("acme/mistral-clone", hub.client, cache=tmp_path)
    assert len(hub.requests) == 1
    assert first == second
    assert (first.name, first.params) == ("acme/mistral-clone", 7_241_732_096)
    assert (tmp_path / "acme--mistral-clone.json").is_file()


def test_a_corrupt_cache_entry_is_fetched_again(tmp_path):
    (tmp_path / "acme--mistral-clone.json").write_text("{not json")
    hub = Hub({MISTRAL_PATH: httpx.Response(200, content=CONFIG_BYTES)})
    assert load_hub_config("acme/mistral-clone", hub.client, cache=tmp_path).family == "mistral"
    assert len(hub.requests) == 1


def test_an_unusable_hub_config_is_not_cached(tmp_path):
    hub = Hub({MISTRAL_PATH: httpx.Response(200, content=b'{"model_type": "mamba"}')})
    with pytest.raises(UserInputError, match="mamba"):
        load_hub_config("acme/mistral-clone", hub.client, cache=tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("var", ["HF_HUB_OFFLINE", "GPUCAT_OFFLINE"])
def test_offline_mode_never_requests(tmp_path, var):
    settings = Settings.from_env({var: "1", "GPUCAT_CACHE_DIR": str(tmp_path)})
    hub = Hub()
    with pytest.raises(UnknownModel, match="offline mode"):
        resolve_model("acme/mistral-clone", client_factory=hub.client, settings=settings)
    assert hub.requests == []


def test_resolve_prefers_the_table_and_only_fetches_org_names(tmp_path):
    settings = Settings.from_env({"GPUCAT_CACHE_DIR": str(tmp_path)})
    hub = Hub({MISTRAL_PATH: httpx.Response(200, content=CONFIG_BYTES)})
    assert resolve_model("MISTRALAI/Mistral-7B-v0.1", client_factory=hub.client, settings=settings).alias == "mistral-7b-v0.1"
    with pytest.raises(UnknownModel, match="not in gpucat's table"):
        resolve_model("mistral-clone", client_factory=hub.client, settings=settings)
    with pytest.raises(UnknownModel, match="not in gpucat's table"):
        resolve_model("acme/mistral-clone", allow_hub=False, client_factory=hub.client, settings=settings)
    assert hub.requests == []
    assert resolve_model("acme/mistral-clone", client_factory=hub.client, settings=settings).params == 7_241_732_096
    assert len(hub.requests) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["hf-configs"]  # cached where the settings say
