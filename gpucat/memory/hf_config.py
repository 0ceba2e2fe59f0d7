"""Hugging Face `config.json` → `ModelArch`, and fetching config.json from the Hub.

Parsing is a pure function over the decoded JSON (`arch_from_hf_config`), kept apart from the
HTTP call (`fetch_hf_config`) and the on-disk cache (`load_hub_config`), so each can be tested
alone. The parameter count of a config-described model is derived from its shapes
(`archs.param_counts`), the same derivation the shipped table is checked against.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpucat.memory.archs import CONFIG, ModelArch, find_model_arch, find_variant_arch, nearest_model_names, param_counts
from gpucat.schemas.errors import UnknownModel, UserInputError
from gpucat.schemas.settings import Settings

if TYPE_CHECKING:
    import httpx

HUB_CONFIG_URL = "https://huggingface.co/{repo}/resolve/{revision}/config.json"
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")

# config.json model_type → parser family. Decoder-only families share one reader with
# per-family structure; T5/mT5 and BERT have their own field names.
_LLAMA_LIKE = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3"}
_MOE = {"mixtral", "qwen3_moe", "deepseek"}
_OTHER_DECODERS = {"phi", "falcon", "RefinedWeb", "RefinedWebModel", "gpt_neox", "bloom", "stablelm"}
SUPPORTED_MODEL_TYPES = tuple(sorted(_LLAMA_LIKE | _MOE | _OTHER_DECODERS | {"t5", "mt5", "bert"}))
_UNSUPPORTED = {
    "deepseek_v2": "DeepSeek-V2/V3 use multi-head latent attention, which gpucat does not model",
    "deepseek_v3": "DeepSeek-V2/V3 use multi-head latent attention, which gpucat does not model",
}


def _get(cfg: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    """The first of `names` present in the config, else `default`."""
    for name in names:
        if cfg.get(name) is not None:
            return cfg[name]
    return default


def _require(cfg: Mapping[str, Any], model_type: str, fields: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Read required positive integers; name every missing or bad field in one error."""
    values: dict[str, int] = {}
    missing: list[str] = []
    for key, names in fields.items():
        raw = _get(cfg, *names)
        if raw is None:
            missing.append(names[0])
        elif isinstance(raw, bool) or not isinstance(raw, int) or raw <= 0:
            raise UserInputError(f"config.json field {names[0]!r} must be a positive integer, got {raw!r}")
        else:
            values[key] = raw
    if missing:
        raise UserInputError(
            f"config.json for model_type {model_type!r} lacks required field(s): {', '.join(missing)}"
        )
    return values


def _int(cfg: Mapping[str, Any], *names: str, default: int) -> int:
    """An optional integer field (a non-negative int, or absent for `default`)."""
    raw = _get(cfg, *names)
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise UserInputError(f"config.json field {names[0]!r} must be a non-negative integer, got {raw!r}")
    return raw


def _probability(cfg: Mapping[str, Any], name: str, default: float) -> float:
    raw = cfg.get(name, default)
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw < 1:
        raise UserInputError(f"config.json field {name!r} must be a probability, got {raw!r}")
    return float(raw)


def arch_from_hf_config(cfg: Mapping[str, Any], name: str | None = None, source: str = "") -> ModelArch:
    """Describe a model from its decoded Hugging Face config.json.

    Raises `UserInputError` for an unsupported `model_type` or missing/invalid fields.
    """
    if not isinstance(cfg, Mapping):
        raise UserInputError("config.json must be a JSON object")
    if "text_config" in cfg and isinstance(cfg["text_config"], Mapping) and "model_type" in cfg["text_config"]:
        # Multimodal wrappers (Gemma 3 4B+): describe the language model only.
        source = (source + "; " if source else "") + "language model only (text_config); vision tower not counted"
        cfg = cfg["text_config"]
    model_type = cfg.get("model_type")
    if not model_type:
        raise UserInputError("config.json lacks 'model_type', so gpucat cannot tell the architecture")
    if model_type in _UNSUPPORTED:
        raise UserInputError(f"model_type {model_type!r} is not supported: {_UNSUPPORTED[model_type]}")
    name = name or cfg.get("_name_or_path") or model_type
    common = {"name": name, "alias": name.lower(), "family": model_type, "source": source}

    if model_type in ("t5", "mt5"):
        arch = _t5(cfg, common)
    elif model_type == "bert":
        arch = _bert(cfg, common)
    elif model_type in _LLAMA_LIKE | _MOE | _OTHER_DECODERS:
        arch = _decoder(cfg, model_type, common)
    else:
        supported = ", ".join(SUPPORTED_MODEL_TYPES)
        raise UserInputError(f"model_type {model_type!r} is not supported; supported: {supported}")
    return replace(arch, params=param_counts(arch).total)


def _decoder(cfg: Mapping[str, Any], model_type: str, common: dict[str, Any]) -> ModelArch:
    fields = {
        "hidden_size": ("hidden_size", "n_embed", "n_embd", "d_model"),
        "n_layers": ("num_hidden_layers", "n_layer", "num_layers"),
        "n_heads": ("num_attention_heads", "n_head"),
        "vocab_size": ("vocab_size",),
    }
    has_intermediate = model_type not in ("bloom", "falcon", "RefinedWeb", "RefinedWebModel")
    if has_intermediate and model_type != "qwen3_moe":
        fields["intermediate_size"] = ("intermediate_size",)
    v = _require(cfg, model_type, fields)
    h, n_heads = v["hidden_size"], v["n_heads"]
    head_dim = _int(cfg, "head_dim", default=0) or h // n_heads
    n_kv = _int(cfg, "num_key_value_heads", "num_kv_heads", "n_head_kv", default=n_heads)
    if n_kv == 0 or n_heads % n_kv:
        raise UserInputError(f"config.json: {n_heads} attention heads cannot be grouped over {n_kv} key/value heads")
    kw: dict[str, Any] = dict(
        arch_type="decoder", params=0, n_layers=v["n_layers"], n_encoder_layers=0, hidden_size=h,
        n_heads=n_heads, n_kv_heads=n_kv, head_dim=head_dim,
        intermediate_size=v.get("intermediate_size", 4 * h), vocab_size=v["vocab_size"],
        tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
    )
    if cfg.get("attention_bias"):
        kw["bias"] = "qkv" if not cfg.get("mlp_bias") else "all"

    if model_type == "qwen2":
        kw["bias"] = "qkv"
    elif model_type in ("qwen3", "qwen3_moe"):
        kw["qk_norm"] = True
    elif model_type in ("gemma", "gemma2", "gemma3_text"):
        kw["tied_embeddings"] = bool(cfg.get("tie_word_embeddings", True))
        if model_type != "gemma":
            kw["norms_per_layer"] = 4
        kw["qk_norm"] = model_type == "gemma3_text"
    elif model_type == "phi":
        kw.update(mlp="plain", norm="layer", norms_per_layer=1, bias="all", lm_head_bias=True)
    elif model_type == "stablelm":
        if cfg.get("qk_layernorm"):
            raise UserInputError("StableLM configs with qk_layernorm are not supported")
        kw.update(norm="layer", bias="qkv" if cfg.get("use_qkv_bias") else "none")
        kw["norms_per_layer"] = 1 if cfg.get("use_parallel_residual") else 2
    elif model_type == "gpt_neox":
        kw.update(mlp="plain", norm="layer", bias="all" if cfg.get("attention_bias", True) else "none")
    elif model_type == "bloom":
        kw.update(mlp="plain", norm="layer", bias="all", position="alibi", embedding_norm=True,
                  tied_embeddings=bool(cfg.get("tie_word_embeddings", True)))
        kw["n_kv_heads"] = n_heads
    elif model_type in ("falcon", "RefinedWeb", "RefinedWebModel"):
        new_arch = bool(cfg.get("new_decoder_architecture"))
        if not new_arch and cfg.get("multi_query", True):
            kw["n_kv_heads"] = 1
        parallel = bool(cfg.get("parallel_attn", True))
        kw.update(mlp="plain", norm="layer", bias="all" if cfg.get("bias") else "none",
                  norms_per_layer=2 if new_arch or not parallel else 1,
                  intermediate_size=_int(cfg, "ffn_hidden_size", default=0) or 4 * h,
                  tied_embeddings=bool(cfg.get("tie_word_embeddings", True)))
        if cfg.get("alibi"):
            kw["position"] = "alibi"

    if model_type in _MOE:
        kw.update(_moe(cfg, model_type, kw))
    return ModelArch(**common, **kw)


def _moe(cfg: Mapping[str, Any], model_type: str, kw: dict[str, Any]) -> dict[str, Any]:
    if model_type == "mixtral":
        v = _require(cfg, model_type, {"n_experts": ("num_local_experts",), "k": ("num_experts_per_tok",)})
        return dict(n_experts=v["n_experts"], n_active_experts=v["k"],
                    moe_intermediate_size=kw["intermediate_size"])
    if model_type == "qwen3_moe":
        v = _require(cfg, model_type, {
            "n_experts": ("num_experts",), "k": ("num_experts_per_tok",),
            "moe_i": ("moe_intermediate_size",),
        })
        dense = len(cfg.get("mlp_only_layers") or [])
        if _int(cfg, "decoder_sparse_step", default=1) != 1:
            raise UserInputError("qwen3_moe configs with decoder_sparse_step != 1 are not supported")
        return dict(n_experts=v["n_experts"], n_active_experts=v["k"], moe_intermediate_size=v["moe_i"],
                    n_dense_layers=dense, intermediate_size=_int(cfg, "intermediate_size", default=0))
    # DeepSeek-MoE (model_type "deepseek"): routed + shared experts, first k layers dense.
    v = _require(cfg, model_type, {
        "n_experts": ("n_routed_experts",), "k": ("num_experts_per_tok",), "moe_i": ("moe_intermediate_size",),
    })
    if _int(cfg, "moe_layer_freq", default=1) != 1:
        raise UserInputError("DeepSeek configs with moe_layer_freq != 1 are not supported")
    shared = _int(cfg, "n_shared_experts", default=0)
    return dict(n_experts=v["n_experts"], n_active_experts=v["k"], moe_intermediate_size=v["moe_i"],
                shared_expert_intermediate_size=shared * v["moe_i"],
                n_dense_layers=_int(cfg, "first_k_dense_replace", default=0))


def _t5(cfg: Mapping[str, Any], common: dict[str, Any]) -> ModelArch:
    v = _require(cfg, cfg["model_type"], {
        "d_model": ("d_model",), "d_kv": ("d_kv",), "d_ff": ("d_ff",), "layers": ("num_layers",),
        "heads": ("num_heads",), "vocab": ("vocab_size",),
    })
    proj = str(cfg.get("feed_forward_proj", "relu"))
    return ModelArch(
        **common, arch_type="encoder-decoder", params=0,
        n_layers=_int(cfg, "num_decoder_layers", default=0) or v["layers"], n_encoder_layers=v["layers"],
        hidden_size=v["d_model"], n_heads=v["heads"], n_kv_heads=v["heads"], head_dim=v["d_kv"],
        intermediate_size=v["d_ff"], vocab_size=v["vocab"],
        tied_embeddings=bool(cfg.get("tie_word_embeddings", True)),
        mlp="gated" if proj.startswith("gated") else "plain", position="relative",
        max_positions=_int(cfg, "relative_attention_num_buckets", default=32),
        dropout=_probability(cfg, "dropout_rate", 0.1),
    )


def _bert(cfg: Mapping[str, Any], common: dict[str, Any]) -> ModelArch:
    v = _require(cfg, "bert", {
        "h": ("hidden_size",), "layers": ("num_hidden_layers",), "heads": ("num_attention_heads",),
        "i": ("intermediate_size",), "vocab": ("vocab_size",), "pos": ("max_position_embeddings",),
    })
    return ModelArch(
        **common, arch_type="encoder", params=0, n_layers=v["layers"], n_encoder_layers=0,
        hidden_size=v["h"], n_heads=v["heads"], n_kv_heads=v["heads"], head_dim=v["h"] // v["heads"],
        intermediate_size=v["i"], vocab_size=v["vocab"], tied_embeddings=False, mlp="plain",
        norm="layer", bias="all", position="learned", max_positions=v["pos"],
        token_types=_int(cfg, "type_vocab_size", default=2), embedding_norm=True,
        dropout=_probability(cfg, "hidden_dropout_prob", 0.1),
    )


# The largest config file read: real ones are a few KB (the biggest tokenizer-laden ones, tens of KB).
MAX_CONFIG_BYTES = 10**6


def load_config_file(path: str | Path) -> ModelArch:
    """Read a local config.json; a missing or malformed file is a `UserInputError`."""
    p = Path(path)
    try:
        with p.open("rb") as fh:  # bounded: /dev/zero or a mistaken weights file is refused, not read whole
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise UserInputError(f"{p} is over {MAX_CONFIG_BYTES:,} bytes; a config.json is a few KB")
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise UserInputError(f"config file not found: {p}") from None
    except OSError as exc:
        raise UserInputError(f"cannot read config file {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UserInputError(f"{p} is not a text file (a config.json is UTF-8 JSON)") from None
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserInputError(f"{p} is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    name = cfg.get("_name_or_path") if isinstance(cfg, dict) else None
    # A checkpoint directory's "config.json" is named after the directory, any other file after itself.
    fallback = p.parent.name if p.stem == "config" and p.parent.name else p.stem
    return arch_from_hf_config(cfg, name=name or fallback, source=str(p))


# --- the Hub ----------------------------------------------------------------------------


def cache_dir(settings: Settings) -> Path:
    """Where fetched config.json files are kept: $GPUCAT_CACHE_DIR, else the XDG cache dir."""
    return settings.cache_root() / "hf-configs"


def _check_repo_id(repo_id: str) -> None:
    if not _REPO_ID.match(repo_id) or ".." in repo_id:
        raise UnknownModel("{repo!r} is not a Hugging Face repo id of the form org/name", repo=repo_id)


def fetch_hf_config(
    repo_id: str, client: httpx.Client, *, token: str | None = None, revision: str = "main"
) -> dict[str, Any]:
    """GET config.json for `repo_id` from the Hub with the caller's client.

    `token` (defaults to $HF_TOKEN) is sent as a bearer token for gated repos and never logged.
    Any failure is an `UnknownModel` error telling the user how to proceed.
    """
    import httpx

    _check_repo_id(repo_id)
    token = token if token is not None else os.environ.get("HF_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = HUB_CONFIG_URL.format(repo=repo_id, revision=revision)
    parts = {"repo": repo_id, "config": CONFIG}
    hint = "pass {config} path/to/config.json"
    try:
        response = client.get(url, headers=headers, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise UnknownModel(
            "model {repo!r} is not in gpucat's table and the Hub could not be reached ({why}); " + hint,
            **parts, why=type(exc).__name__,
        ) from None
    if response.status_code in (401, 403):
        why = "the token was refused" if token else "set HF_TOKEN to a token with access"
        raise UnknownModel("{repo!r} is gated or private on the Hub ({why}); or " + hint, **parts, why=why)
    if response.status_code == 404:
        raise UnknownModel("the Hub has no config.json for {repo!r}; check the name or " + hint, **parts)
    if response.status_code != 200:
        raise UnknownModel("the Hub answered HTTP {status} for {repo!r}; " + hint, **parts, status=response.status_code)
    try:
        cfg = response.json()
    except ValueError:
        raise UnknownModel("the Hub's config.json for {repo!r} is not valid JSON; " + hint, **parts) from None
    if not isinstance(cfg, dict):
        raise UnknownModel("the Hub's config.json for {repo!r} is not a JSON object; " + hint, **parts)
    return cfg


# config.json of a public or gated repo is served by huggingface.co itself (no CDN redirect).
HUB_HOSTS = frozenset({"huggingface.co"})


def load_hub_config(
    repo_id: str,
    client_factory: Callable[[], httpx.Client] | None = None,
    *,
    cache: Path | None = None,
    settings: Settings | None = None,
) -> ModelArch:
    """A Hub model's architecture, from the cache if present, else fetched and cached.

    `settings` are the caller's (the edge read them: the cache folder, offline mode); without
    them, the documented defaults, never the environment."""
    _check_repo_id(repo_id)
    settings = settings or Settings()
    path = (cache or cache_dir(settings)) / (repo_id.replace("/", "--") + ".json")
    source = HUB_CONFIG_URL.format(repo=repo_id, revision="main")
    if path.exists():
        try:
            return arch_from_hf_config(json.loads(path.read_text("utf-8")), name=repo_id, source=source)
        except (ValueError, UserInputError):
            path.unlink(missing_ok=True)  # a corrupt or stale cache entry: fetch again
    if settings.offline:  # GPUCAT_OFFLINE or Hugging Face's HF_HUB_OFFLINE
        raise UnknownModel(
            "model {repo!r} is not in gpucat's table and the Hub is off (offline mode); pass {config} path/to/config.json",
            repo=repo_id, config=CONFIG,
        )
    from gpucat.scrapers.http import make_http_client

    make_client = client_factory or (lambda: make_http_client("huggingface-hub", HUB_HOSTS))
    with make_client() as client:
        cfg = fetch_hf_config(repo_id, client)
    arch = arch_from_hf_config(cfg, name=repo_id, source=source)  # validate before caching
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cfg), "utf-8")
    tmp.replace(path)
    return arch


def resolve_model(
    name: str, *, allow_hub: bool = True, client_factory: Callable[[], httpx.Client] | None = None, settings: Settings | None = None
) -> ModelArch:
    """A model by table name/alias (case-insensitive), else by Hub repo id (org/name).

    Only names with an `org/` prefix are looked up on the Hub, and only when `allow_hub` is true
    and offline mode is off (`settings`: the caller's, see `load_hub_config`).
    """
    arch = find_model_arch(name) or find_variant_arch(name)  # an instruct/chat variant reads as its base, offline
    if arch is not None:
        return arch
    if "/" in name and allow_hub:
        return load_hub_config(name.strip(), client_factory, settings=settings)
    hint = nearest_model_names(name)
    raise UnknownModel(
        "model {name!r} is not in gpucat's table (see `gpucat models`){hint}"
        " Or pass {config} path/to/config.json, or an org/name Hugging Face repo id to fetch its config",
        name=name, hint=f"; did you mean {' or '.join(map(repr, hint))}?" if hint else "", config=CONFIG,
    )
