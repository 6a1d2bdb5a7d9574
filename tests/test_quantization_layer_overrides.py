"""Modules a checkpoint keeps in the model dtype by layer (`modules_to_not_convert`, `ignore`,
exact names or `re:` patterns with a layer index): only those layers' share of the role leaves
the quantized format."""

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.quantization import weight_bytes, weight_format
from infermeter.registry.catalog import load_models

MODELS = load_models()


def _weights(model_id: str, key: str, names: list[str]) -> dict[str, int]:
    config = dict(MODELS[model_id].config)
    config["quantization_config"] = {"quant_method": "fp8", key: names}
    arch = parse_config(config)
    return dict(weight_bytes(arch, weight_format(arch)).by_role)


@pytest.mark.parametrize("key", ["modules_to_not_convert", "ignore", "ignored_layers"])
def test_one_dense_mlp_layer_named_by_index_stays_bf16(key: str) -> None:
    plain = _weights("llama-3.1-8b-instruct", key, [])
    one = _weights("llama-3.1-8b-instruct", key, ["model.layers.0.mlp"])
    two = _weights("llama-3.1-8b-instruct", key, ["model.layers.0.mlp", "re:model.layers.1.mlp.*"])
    layer_mlp = 3 * 4096 * 14336  # gate, up and down projections of one layer
    # FP8 (1 byte) to bf16 (2 bytes): one more byte per parameter of the named layers only
    assert one["dense_mlp"] - plain["dense_mlp"] == layer_mlp
    assert two["dense_mlp"] - plain["dense_mlp"] == 2 * layer_mlp
    assert one["attention"] == plain["attention"]


def test_a_whole_block_pattern_keeps_every_role_of_that_layer() -> None:
    plain = _weights("llama-3.1-8b-instruct", "ignore", [])
    block = _weights("llama-3.1-8b-instruct", "ignore", ["re:model.layers.5.*"])
    assert block["dense_mlp"] - plain["dense_mlp"] == 3 * 4096 * 14336
    assert block["attention"] - plain["attention"] == plain["attention"] // 32


def test_an_moe_layers_mlp_names_its_experts() -> None:
    model = "qwen3-30b-a3b"
    arch = parse_config(MODELS[model].config)
    assert arch.moe is not None
    plain = _weights(model, "modules_to_not_convert", [])
    one = _weights(model, "modules_to_not_convert", ["model.layers.0.mlp"])
    experts = param_counts(arch, 1).experts
    assert one["experts"] - plain["experts"] == pytest.approx(
        experts / len(arch.moe.moe_layers), abs=1
    )


def test_a_single_expert_or_an_unknown_name_changes_nothing() -> None:
    plain = _weights("qwen3-30b-a3b", "ignore", [])
    assert _weights("qwen3-30b-a3b", "ignore", ["model.layers.0.mlp.experts.5.up_proj"]) == plain
    assert _weights("qwen3-30b-a3b", "ignore", ["model.layers.0.something_else"]) == plain
