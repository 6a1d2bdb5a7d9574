"""Tests of calculators.arch: parameter counts against published totals, layer patterns, MoE and
MLA fields, nested multimodal configs, missing fields, and tensor-parallel shards."""

from typing import Any

import pytest
from catalog_models import catalog_arch
from tiny_config import tiny_llama

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.model_arch import FULL, SLIDING
from infermeter.calculators.param_count import param_counts
from infermeter.registry.catalog import load_models

MODELS = load_models()
MODEL_IDS = sorted(MODELS)


def _tiny_llama(**changes: Any) -> dict[str, Any]:
    """The tiny Llama with grouped-query attention (four key/value heads)."""
    return tiny_llama(**{"num_key_value_heads": 4, **changes})


# --- parameter counts against what publishers say -----------------------------------------------


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_param_counts_total_within_two_percent_of_published(model_id: str) -> None:
    published = MODELS[model_id].published_params.total_b * 1e9
    total = param_counts(catalog_arch(model_id)).total
    assert total == pytest.approx(published, rel=0.02), f"{model_id}: {total / 1e9:.3f}B"


@pytest.mark.parametrize(
    "model_id", [m for m in MODEL_IDS if MODELS[m].published_params.active_b is not None]
)
def test_param_counts_active_within_two_percent_of_published(model_id: str) -> None:
    published = MODELS[model_id].published_params
    assert published.active_b is not None
    counts = param_counts(catalog_arch(model_id))
    active = counts.active
    if "excludes the input embedding" in (published.note or ""):
        active -= counts.embedding
    assert active == pytest.approx(published.active_b * 1e9, rel=0.02), f"{active / 1e9:.3f}B"


def test_param_counts_catalog_has_moe_models_with_active_counts() -> None:
    # The active-parameter check above must not pass vacuously.
    with_active = [m for m in MODEL_IDS if MODELS[m].published_params.active_b is not None]
    assert len(with_active) >= 5


@pytest.mark.parametrize("model_id", [m for m in MODEL_IDS if catalog_arch(m).moe is None])
def test_param_counts_dense_model_active_equals_total(model_id: str) -> None:
    counts = param_counts(catalog_arch(model_id))
    assert counts.active == counts.total
    assert counts.experts == counts.experts_active == 0


@pytest.mark.parametrize("model_id", [m for m in MODEL_IDS if catalog_arch(m).moe is not None])
def test_param_counts_moe_model_active_is_a_small_share_of_total(model_id: str) -> None:
    counts = param_counts(catalog_arch(model_id))
    assert 0 < counts.experts_active < counts.experts
    assert counts.active < 0.35 * counts.total


def test_param_counts_tied_embeddings_have_no_lm_head() -> None:
    tied = param_counts(catalog_arch("llama-3.2-1b-instruct"))
    assert tied.lm_head == 0
    untied = param_counts(
        parse_config({**MODELS["llama-3.2-1b-instruct"].config, "tie_word_embeddings": False})
    )
    assert untied.lm_head == untied.embedding == tied.embedding


def test_param_counts_llama_3_1_8b_exact() -> None:
    # 8,030,261,248 parameters: the figure transformers prints for Meta-Llama-3.1-8B.
    assert param_counts(catalog_arch("llama-3.1-8b-instruct")).total == 8_030_261_248


# --- layer kinds --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "sliding", "full", "window"),
    [
        ("gpt-oss-20b", 12, 12, 128),
        ("gpt-oss-120b", 18, 18, 128),
        ("gemma-2-9b-it", 21, 21, 4096),
        ("gemma-2-27b-it", 23, 23, 4096),
        ("gemma-3-12b-it", 40, 8, 1024),
        ("gemma-3-27b-it", 52, 10, 1024),
        ("mistral-7b-v0.1", 32, 0, 4096),
        ("qwen2.5-7b-instruct", 0, 28, None),
        ("qwen3-30b-a3b", 0, 48, None),
        ("llama-3.1-8b-instruct", 0, 32, None),
    ],
)
def test_parse_config_layer_kind_counts(
    model_id: str, sliding: int, full: int, window: int | None
) -> None:
    arch = catalog_arch(model_id)
    assert (arch.num_sliding_layers, arch.num_full_layers) == (sliding, full)
    if sliding:
        assert arch.sliding_window == window


@pytest.mark.parametrize("model_id", ["gpt-oss-20b", "gpt-oss-120b", "gemma-2-9b-it"])
def test_parse_config_alternating_layers_start_with_sliding(model_id: str) -> None:
    kinds = catalog_arch(model_id).layer_kinds
    assert all(kind == (SLIDING if index % 2 == 0 else FULL) for index, kind in enumerate(kinds))


def test_parse_config_gemma_3_every_sixth_layer_is_global() -> None:
    kinds = catalog_arch("gemma-3-12b-it").layer_kinds
    assert [index for index, kind in enumerate(kinds) if kind == FULL] == list(range(5, 48, 6))


def test_parse_config_gemma_3_pattern_default_applies_without_the_key() -> None:
    # gemma-3-27b-it's file has no sliding_window_pattern: transformers' default (6) applies.
    kinds = catalog_arch("gemma-3-27b-it").layer_kinds
    assert [index for index, kind in enumerate(kinds) if kind == FULL] == list(range(5, 62, 6))


def test_parse_config_qwen_sliding_window_disabled_means_all_full() -> None:
    config = MODELS["qwen2.5-7b-instruct"].config
    assert config["use_sliding_window"] is False
    assert config["sliding_window"]
    assert set(catalog_arch("qwen2.5-7b-instruct").layer_kinds) == {FULL}
    enabled = parse_config({**config, "use_sliding_window": True})
    assert set(enabled.layer_kinds) == {SLIDING}


def test_parse_config_layer_types_wrong_length_names_field() -> None:
    config = _tiny_llama(sliding_window=64, layer_types=["sliding_attention", "full_attention"])
    with pytest.raises(ConfigError, match="layer_types"):
        parse_config(config)


# --- MoE and MLA --------------------------------------------------------------------------------


@pytest.mark.parametrize("model_id", ["deepseek-v3", "deepseek-r1"])
def test_parse_config_deepseek_mla_and_moe_fields(model_id: str) -> None:
    arch = catalog_arch(model_id)
    assert arch.mla is not None
    assert (arch.mla.kv_lora_rank, arch.mla.qk_rope_head_dim) == (512, 64)
    assert (arch.mla.q_lora_rank, arch.mla.qk_nope_head_dim, arch.mla.v_head_dim) == (
        1536,
        128,
        128,
    )
    assert arch.moe is not None
    assert (arch.moe.num_experts, arch.moe.experts_per_token) == (256, 8)
    assert arch.moe.shared_intermediate_size == 2048  # one shared expert of width 2048
    assert arch.moe.moe_layers == tuple(range(3, 61))  # first 3 layers dense
    counts = param_counts(arch)
    assert counts.dense_mlp == 3 * 3 * 7168 * 18432


@pytest.mark.parametrize(
    ("model_id", "experts", "top_k", "shared", "moe_layers"),
    [
        ("mixtral-8x7b-instruct-v0.1", 8, 2, 0, 32),
        ("qwen3-30b-a3b", 128, 8, 0, 48),
        ("qwen3-235b-a22b", 128, 8, 0, 94),
        ("gpt-oss-20b", 32, 4, 0, 24),
        ("gpt-oss-120b", 128, 4, 0, 36),
    ],
)
def test_parse_config_moe_fields(
    model_id: str, experts: int, top_k: int, shared: int, moe_layers: int
) -> None:
    arch = catalog_arch(model_id)
    assert arch.moe is not None
    assert arch.moe.num_experts == experts
    assert arch.moe.experts_per_token == top_k
    assert arch.moe.shared_intermediate_size == shared
    assert len(arch.moe.moe_layers) == moe_layers
    assert arch.mla is None


@pytest.mark.parametrize(
    "model_id", [m for m in MODEL_IDS if not m.startswith(("deepseek", "kimi", "glm-5"))]
)
def test_parse_config_no_mla_outside_deepseek(model_id: str) -> None:
    # Kimi K2 uses DeepSeek-V3's architecture, latent attention included; GLM-5 V3.2's.
    assert catalog_arch(model_id).mla is None


def test_parse_config_moe_without_experts_per_token_names_field() -> None:
    with pytest.raises(ConfigError, match="num_experts_per_tok"):
        parse_config(_tiny_llama(num_local_experts=8))


# --- nested text_config (multimodal wrappers) ---------------------------------------------------


@pytest.mark.parametrize("model_id", ["gemma-3-12b-it", "gemma-3-27b-it"])
def test_parse_config_reads_nested_text_config_and_vision_tower(model_id: str) -> None:
    config = MODELS[model_id].config
    assert "hidden_size" not in config
    arch = catalog_arch(model_id)
    assert arch.hidden_size == config["text_config"]["hidden_size"]
    assert arch.num_layers == config["text_config"]["num_hidden_layers"]
    assert arch.tie_word_embeddings
    assert arch.vision is not None
    # SigLIP-So400m at 896 px plus Gemma 3's projector: about 0.42B parameters.
    assert 0.40e9 < param_counts(arch).vision < 0.45e9


def test_parse_config_nested_without_vision_counts_no_vision() -> None:
    config = {"model_type": "llava", "text_config": _tiny_llama()}
    arch = parse_config(config)
    assert arch.hidden_size == 256
    assert arch.vision is None
    assert param_counts(arch).vision == 0


# --- missing or unusable fields -----------------------------------------------------------------


@pytest.mark.parametrize("field", ["hidden_size", "num_hidden_layers", "vocab_size"])
def test_parse_config_missing_field_names_it(field: str) -> None:
    config = _tiny_llama()
    del config[field]
    with pytest.raises(ConfigError, match=rf"^{field}: "):
        parse_config(config)


@pytest.mark.parametrize("field", ["hidden_size", "num_hidden_layers", "vocab_size"])
def test_parse_config_missing_nested_field_names_it_with_prefix(field: str) -> None:
    text = _tiny_llama()
    del text[field]
    config = {"model_type": "llava", "text_config": text}
    with pytest.raises(ConfigError, match=rf"text_config\.{field}: "):
        parse_config(config)


@pytest.mark.parametrize("value", ["4096", 4096.0, -1, True])
def test_parse_config_non_integer_hidden_size_names_field(value: object) -> None:
    with pytest.raises(ConfigError, match="hidden_size"):
        parse_config(_tiny_llama(hidden_size=value))


def test_parse_config_zero_layers_is_an_error() -> None:
    with pytest.raises(ConfigError, match="num_hidden_layers"):
        parse_config(_tiny_llama(num_hidden_layers=0))


def test_parse_config_not_a_mapping_is_an_error() -> None:
    with pytest.raises(ConfigError, match="JSON object"):
        parse_config([1, 2])  # type: ignore[arg-type]


# A config.json with a wrongly typed value must give a ConfigError naming the field, not a bare
# ValueError/TypeError/AttributeError (the CLI would show a traceback; see test_calc_cli.py).
WRONGLY_TYPED = [
    ("num_key_value_heads", {"num_key_value_heads": "eight"}),
    ("max_position_embeddings", {"max_position_embeddings": "long"}),
    ("sliding_window_pattern", {"sliding_window": 64, "sliding_window_pattern": "x"}),
    ("layer_types", {"sliding_window": 64, "layer_types": 5}),
]


@pytest.mark.parametrize(("field", "changes"), WRONGLY_TYPED, ids=[f for f, _ in WRONGLY_TYPED])
def test_parse_config_wrongly_typed_field_raises_config_error(
    field: str, changes: dict[str, Any]
) -> None:
    with pytest.raises(ConfigError, match=field):
        parse_config(_tiny_llama(**changes))


# --- tensor parallelism -------------------------------------------------------------------------


@pytest.mark.parametrize("model_id", ["llama-3.1-8b-instruct", "mixtral-8x7b-instruct-v0.1"])
@pytest.mark.parametrize("tp", [2, 4, 8])
def test_param_counts_tensor_parallel_shards_split_and_replicas_stay(
    model_id: str, tp: int
) -> None:
    arch = catalog_arch(model_id)
    whole = param_counts(arch)
    shard = param_counts(arch, tp)
    for role in ("embedding", "lm_head", "attention", "dense_mlp", "experts", "experts_active"):
        assert getattr(shard, role) == pytest.approx(getattr(whole, role) / tp, rel=1e-3), role
    assert shard.router == whole.router
    assert shard.small == whole.small  # norms are replicated
    assert shard.total == pytest.approx(whole.total / tp, rel=0.01)


def test_param_counts_mla_down_projections_are_replicated() -> None:
    arch = catalog_arch("deepseek-v3")
    whole, shard = param_counts(arch), param_counts(arch, 8)
    assert shard.router == whole.router
    assert whole.attention / 8 < shard.attention < whole.attention / 2


def test_param_counts_kv_heads_replicate_beyond_their_count() -> None:
    # 4 KV heads: at TP 8 each rank keeps a copy of one KV head, so attention shrinks by less
    # than 8x (queries and the output projection still split).
    arch = parse_config(_tiny_llama(num_key_value_heads=4))
    at_4, at_8 = param_counts(arch, 4).attention, param_counts(arch, 8).attention
    assert at_8 < at_4
    assert at_8 > param_counts(arch).attention / 8


@pytest.mark.parametrize("tp", [0, -1])
def test_param_counts_rejects_non_positive_tensor_parallel(tp: int) -> None:
    with pytest.raises(ConfigError, match="tensor_parallel_size"):
        param_counts(catalog_arch("llama-3.1-8b-instruct"), tp)


# --- GPT-J: GPT-2-style names, an ungated MLP with biases, one LayerNorm per block ------------


def _gptj_expected_total(hidden: int, layers: int, inner: int, vocab: int) -> int:
    """transformers' GPTJForCausalLM, tensor by tensor: q/k/v/out without bias, fc_in and
    fc_out with biases, ln_1 (weight, bias) per block; wte, ln_f, lm_head with a bias."""
    block = 4 * hidden * hidden + (hidden * inner + inner) + (inner * hidden + hidden) + 2 * hidden
    return layers * block + vocab * hidden + 2 * hidden + (hidden * vocab + vocab)


def test_gptj_params_follow_its_modules() -> None:
    arch = catalog_arch("gpt-j-6b")
    assert (arch.hidden_size, arch.num_layers, arch.intermediate_size) == (4096, 28, 16384)
    assert (arch.num_kv_heads, arch.head_dim, arch.max_position_embeddings) == (16, 256, 2048)
    total = param_counts(arch).total
    assert total == _gptj_expected_total(4096, 28, 16384, 50400) == 6_050_882_784


def test_gptj_n_inner_sets_the_mlp_width() -> None:
    config = {**MODELS["gpt-j-6b"].config, "n_inner": 8192, "n_layer": 2}
    assert param_counts(parse_config(config)).total == _gptj_expected_total(4096, 2, 8192, 50400)


@pytest.mark.slow
def test_gptj_params_match_transformers() -> None:
    """The tiny model transformers builds from the same config has as many parameters."""
    transformers = pytest.importorskip("transformers")
    config = {
        "model_type": "gptj", "n_embd": 64, "n_head": 4, "n_layer": 3, "n_inner": None,
        "rotary_dim": 8, "vocab_size": 103, "n_positions": 128, "tie_word_embeddings": False,
        "bos_token_id": None, "eos_token_id": None,
    }  # fmt: skip
    model = transformers.GPTJForCausalLM(transformers.GPTJConfig(**config))
    assert param_counts(parse_config(config)).total == sum(p.numel() for p in model.parameters())
