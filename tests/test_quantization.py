"""Tests of calculators.quantization: the weight format read from quantization_config as vLLM
reads it, the --quantization override, and bytes of weights against vLLM's startup logs."""

import json
from pathlib import Path
from typing import Any

import pytest
from catalog_models import catalog_arch
from cli_helpers import invoke, json_output
from tiny_config import tiny_llama

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import QuantizationError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.param_count import param_counts
from infermeter.calculators.quantization import (
    LINEAR_ROLES,
    QUANTIZATION_CHOICES,
    WeightBytes,
    model_dtype_bytes,
    weight_bytes,
    weight_format,
)
from infermeter.calculators.vllm_plan import plan_weights
from infermeter.calculators.vllm_settings import VllmSettings
from infermeter.registry.catalog import load_models

GIB = 1024**3
CONFIGS = Path(__file__).parent / "data" / "configs"
MODELS = load_models()


def _with_quantization(model_id: str, quantization_config: dict[str, Any]) -> ModelArch:
    return parse_config({**MODELS[model_id].config, "quantization_config": quantization_config})


def _weights(arch: ModelArch, quantization: str | None = None) -> WeightBytes:
    return weight_bytes(arch, weight_format(arch, quantization))


def _linear_bytes(weights: WeightBytes) -> int:
    return sum(weights.by_role[role] for role in LINEAR_ROLES)


# --- formats read from quantization_config ------------------------------------------------------


def test_weight_format_unquantized_follows_torch_dtype() -> None:
    arch = catalog_arch("llama-3.1-8b-instruct")
    fmt = weight_format(arch)
    assert (fmt.method, fmt.bytes_per_param, fmt.quantized_roles) == ("bf16", 2, frozenset())
    fp16 = parse_config({**MODELS["llama-3.1-8b-instruct"].config, "torch_dtype": "float16"})
    assert weight_format(fp16).method == "fp16"


def test_weight_format_deepseek_fp8_block_scales() -> None:
    fmt = weight_format(catalog_arch("deepseek-v3"))
    assert fmt.method == "fp8"
    # One float32 scale per 128x128 block.
    assert fmt.bytes_per_param == pytest.approx(1 + 4 / (128 * 128))
    assert fmt.quantized_roles == frozenset(LINEAR_ROLES)


@pytest.mark.parametrize("model_id", ["gpt-oss-20b", "gpt-oss-120b"])
def test_weight_format_mxfp4_quantizes_only_experts(model_id: str) -> None:
    arch = catalog_arch(model_id)
    fmt = weight_format(arch)
    assert fmt.method == "mxfp4"
    assert fmt.quantized_roles == frozenset({"experts"})
    counts = param_counts(arch)
    weights = weight_bytes(arch, fmt)
    for role in ("attention", "embedding", "lm_head", "router"):
        assert weights.by_role[role] == 2 * getattr(counts, role), role
    # 4-bit values plus an 8-bit scale per 32, and the kernels' padding on top.
    assert weights.by_role["experts"] >= counts.experts * (0.5 + 1 / 32)
    assert weights.by_role["experts"] < counts.experts * 0.6


def test_weight_format_awq_checkpoint_fixture() -> None:
    config = json.loads((CONFIGS / "llama-3.1-8b-instruct-awq.json").read_text())
    fmt = weight_format(parse_config(config))
    assert fmt.method == "awq"
    # Packed 4-bit values, an fp16 scale and a 4-bit zero point per group of 128.
    assert fmt.bytes_per_param == pytest.approx(0.5 + 2.5 / 128)
    assert fmt.quantized_roles == frozenset(LINEAR_ROLES)


@pytest.mark.parametrize(
    ("quantization_config", "method", "bytes_per_param"),
    [
        (
            {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False},
            "gptq",
            0.5 + 2.5 / 128,
        ),
        ({"quant_method": "gptq", "bits": 8, "group_size": 32}, "gptq", 1 + 3 / 32),
        ({"quant_method": "gptq", "bits": 4, "group_size": -1}, "gptq", 0.5),
        ({"quant_method": "awq", "bits": 4, "group_size": 64}, "awq", 0.5 + 2.5 / 64),
        ({"quant_method": "fp8", "activation_scheme": "dynamic"}, "fp8", 1.0),
        ({"quant_method": "fbgemm_fp8"}, "fp8", 1.0),
        ({"quant_method": "modelopt", "quant_algo": "FP8"}, "fp8", 1.0),
        ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}, "nvfp4", 0.5625),
        ({"quant_method": "modelopt_fp4", "quant_algo": "NVFP4"}, "nvfp4", 0.5625),
    ],
    ids=lambda value: (
        value["quant_method"] + "-" + str(value.get("bits") or value.get("quant_algo") or "")
        if isinstance(value, dict)
        else None
    ),
)
def test_weight_format_from_quant_method(
    quantization_config: dict[str, Any], method: str, bytes_per_param: float
) -> None:
    fmt = weight_format(_with_quantization("llama-3.1-8b-instruct", quantization_config))
    assert fmt.method == method
    assert fmt.bytes_per_param == pytest.approx(bytes_per_param)
    assert fmt.quantized_roles == frozenset(LINEAR_ROLES)


def _compressed_tensors(weights: dict[str, Any], fmt: str) -> dict[str, Any]:
    # The shape llm-compressor writes (e.g. RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8).
    return {
        "quant_method": "compressed-tensors",
        "format": fmt,
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}},
        "ignore": ["lm_head"],
    }


@pytest.mark.parametrize(
    ("weights", "fmt", "method", "bytes_per_param"),
    [
        (
            {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True},
            "float-quantized",
            "fp8",
            1.0,
        ),
        (
            {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128},
            "pack-quantized",
            "int4",
            0.5 + 2.5 / 128,
        ),
        (
            {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True},
            "int-quantized",
            "int8",
            1.0,
        ),
        (
            {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16},
            "nvfp4-pack-quantized",
            "nvfp4",
            0.5 + 1 / 16,
        ),
    ],
    ids=["fp8", "w4a16", "w8a8", "nvfp4"],
)
def test_weight_format_compressed_tensors(
    weights: dict[str, Any], fmt: str, method: str, bytes_per_param: float
) -> None:
    arch = _with_quantization("llama-3.1-8b-instruct", _compressed_tensors(weights, fmt))
    result = weight_format(arch)
    assert result.method == method
    assert result.bytes_per_param == pytest.approx(bytes_per_param)
    assert "attention" in result.quantized_roles
    assert "lm_head" not in result.quantized_roles


def test_weight_format_compressed_tensors_without_weights_is_an_error() -> None:
    arch = _with_quantization(
        "llama-3.1-8b-instruct", {"quant_method": "compressed-tensors", "config_groups": {}}
    )
    with pytest.raises(QuantizationError, match="config_groups"):
        weight_format(arch)


def test_weight_format_nested_config_reads_top_level_quantization() -> None:
    text = tiny_llama(num_hidden_layers=2, num_attention_heads=4)
    config = {
        "model_type": "llava",
        "text_config": text,
        "quantization_config": {"quant_method": "fp8"},
    }
    assert weight_format(parse_config(config)).method == "fp8"


def test_weight_format_modules_not_converted_stay_in_model_dtype() -> None:
    arch = _with_quantization(
        "llama-3.1-8b-instruct",
        {
            "quant_method": "gptq",
            "bits": 4,
            "group_size": 128,
            "modules_to_not_convert": ["self_attn"],
        },
    )
    fmt = weight_format(arch)
    assert "attention" not in fmt.quantized_roles
    assert "dense_mlp" in fmt.quantized_roles
    weights = weight_bytes(arch, fmt)
    assert weights.by_role["attention"] == 2 * param_counts(arch).attention


# --- the --quantization override and errors -----------------------------------------------------


@pytest.mark.parametrize(("override", "method"), [("none", "bf16"), ("AWQ_Marlin", "awq")])
def test_weight_format_override_of_a_checkpoint_vllm_serves(override: str, method: str) -> None:
    # awq_marlin's override_quantization_method claims an AWQ checkpoint; none is the
    # calculators' own (the 16-bit original).
    config = json.loads((CONFIGS / "llama-3.1-8b-instruct-awq.json").read_text())
    assert weight_format(parse_config(config), override).method == method


@pytest.mark.parametrize("override", ["fp8", "gptq", "NVFP4", "int8", "mxfp4"])
def test_weight_format_refuses_an_override_vllm_refuses(override: str) -> None:
    # The override won over the checkpoint's own method, where vLLM's ModelConfig raises
    # 'Quantization method specified in the model config (awq) does not match ...'.
    config = json.loads((CONFIGS / "llama-3.1-8b-instruct-awq.json").read_text())
    words = f"the checkpoint is awq .*refuses --quantization {override.lower()} of it"
    with pytest.raises(QuantizationError, match=words):
        weight_format(parse_config(config), override)


def test_weight_format_override_none_on_fp8_checkpoint_doubles_linear_bytes() -> None:
    arch = catalog_arch("deepseek-v3")
    fp8, bf16 = _weights(arch), _weights(arch, "none")
    assert _linear_bytes(bf16) == pytest.approx(2 * _linear_bytes(fp8), rel=0.001)


@pytest.mark.parametrize("method", ["bitsandbytes", "hqq", "exl2"])
def test_weight_format_unknown_checkpoint_method_names_it(method: str) -> None:
    arch = _with_quantization("llama-3.1-8b-instruct", {"quant_method": method})
    with pytest.raises(QuantizationError, match=repr(method)):
        weight_format(arch)


def test_weight_format_unknown_override_names_it() -> None:
    with pytest.raises(QuantizationError, match="'marlin24'"):
        weight_format(catalog_arch("llama-3.1-8b-instruct"), "marlin24")


def test_weight_format_quantization_config_without_method_is_an_error() -> None:
    arch = _with_quantization("llama-3.1-8b-instruct", {"bits": 4})
    with pytest.raises(QuantizationError, match="quant_method"):
        weight_format(arch)


@pytest.mark.parametrize("choice", [c for c in QUANTIZATION_CHOICES if c != "compressed-tensors"])
def test_weight_format_every_cli_choice_is_understood(choice: str) -> None:
    fmt = weight_format(catalog_arch("llama-3.1-8b-instruct"), choice)
    assert 0 < fmt.bytes_per_param <= 2


@pytest.mark.parametrize(
    ("dtype", "size"), [(None, 2), ("auto", 2), ("float16", 2), ("float32", 4)]
)
def test_model_dtype_bytes(dtype: str | None, size: int) -> None:
    assert model_dtype_bytes(catalog_arch("llama-3.1-8b-instruct"), dtype) == size


def test_model_dtype_bytes_unknown_dtype_names_it() -> None:
    with pytest.raises(QuantizationError, match="'int3'"):
        model_dtype_bytes(catalog_arch("llama-3.1-8b-instruct"), "int3")


# --- bytes of weights ---------------------------------------------------------------------------


def test_weight_bytes_llama_3_1_8b_bf16_matches_vllm_log() -> None:
    # vLLM: "Model loading took 14.9888 GiB" (vllm-project/vllm#10517, Llama-3.1-8B-Instruct).
    settings = VllmSettings(gpu_memory_bytes=80 * GIB)
    weights = plan_weights(catalog_arch("llama-3.1-8b-instruct"), settings)
    assert weights.total / GIB == pytest.approx(14.9888, rel=0.005)


@pytest.mark.parametrize("method", ["awq", "gptq"])
@pytest.mark.parametrize(
    "model_id", ["llama-3.1-8b-instruct", "qwen2.5-72b-instruct", "llama-3.1-70b-instruct"]
)
def test_weight_bytes_4bit_linear_layers_are_about_a_quarter_of_bf16(
    method: str, model_id: str
) -> None:
    arch = catalog_arch(model_id)
    ratio = _linear_bytes(_weights(arch, method)) / _linear_bytes(_weights(arch))
    # Packed 4-bit values plus an fp16 scale and a 4-bit zero point per 128 inputs, over 2 bytes.
    assert ratio == pytest.approx((0.5 + 2.5 / 128) / 2, rel=1e-3)
    assert 0.25 < ratio < 0.3


@pytest.mark.parametrize("method", ["awq", "gptq"])
def test_weight_bytes_4bit_70b_model_is_about_a_quarter_of_bf16(method: str) -> None:
    arch = catalog_arch("llama-3.1-70b-instruct")
    assert 0.26 <= _weights(arch, method).total / _weights(arch).total <= 0.3


def test_weight_bytes_4bit_small_model_keeps_embeddings_in_bf16() -> None:
    # Llama-3.1-8B: 2 x 0.5B embedding/lm_head parameters stay 16-bit, so AWQ weighs more than a
    # quarter (vLLM logs about 5.4 GiB for the AWQ-INT4 checkpoint).
    arch = catalog_arch("llama-3.1-8b-instruct")
    awq = _weights(arch, "awq")
    assert awq.by_role["embedding"] == _weights(arch).by_role["embedding"]
    assert 5.2 < awq.total / GIB < 5.6


@pytest.mark.parametrize(
    "model_id", ["llama-3.1-8b-instruct", "llama-3.1-70b-instruct", "qwen3-32b"]
)
def test_weight_bytes_fp8_is_about_half_of_bf16(model_id: str) -> None:
    arch = catalog_arch(model_id)
    assert _linear_bytes(_weights(arch, "fp8")) / _linear_bytes(_weights(arch)) == pytest.approx(
        0.5
    )
    assert 0.5 <= _weights(arch, "fp8").total / _weights(arch).total < 0.6


def test_weight_bytes_gpt_oss_120b_mxfp4() -> None:
    total = _weights(catalog_arch("gpt-oss-120b")).total / GIB
    assert 60 <= total <= 66


def test_weight_bytes_gpt_oss_120b_bf16_override_is_much_larger() -> None:
    arch = catalog_arch("gpt-oss-120b")
    assert _weights(arch, "none").total > 3 * _weights(arch).total


@pytest.mark.parametrize("model_id", ["llama-3.1-70b-instruct", "gpt-oss-120b", "deepseek-v3"])
@pytest.mark.parametrize("tp", [2, 4, 8])
def test_weight_bytes_shrink_with_tensor_parallelism(model_id: str, tp: int) -> None:
    arch = catalog_arch(model_id)
    fmt = weight_format(arch)
    whole, shard = weight_bytes(arch, fmt).total, weight_bytes(arch, fmt, tp).total
    assert shard < whole
    assert shard >= whole / tp * 0.99  # nothing is split more than tp ways


def test_param_counts_are_worked_out_once_per_config_object_and_size() -> None:
    """A prediction asks for a model's counts many times (the answers' estimate predicts for
    every deployment of a question); each config object and tensor-parallel size is counted
    once, and another object of the same config gets equal counts."""
    config = load_models()["llama-3.1-8b-instruct"].config
    arch = parse_config(config)
    assert param_counts(arch, 2) is param_counts(arch, 2)
    again = parse_config(config)
    assert again is not arch
    assert param_counts(again, 2) == param_counts(arch, 2)
    assert param_counts(arch, 1).attention > param_counts(arch, 2).attention


def test_mxfp4_on_a_dense_model_is_its_model_dtype_in_both_calculators() -> None:
    # vLLM's Mxfp4Config.get_quant_method (layers/quantization/mxfp4.py) builds only the routed
    # experts in MXFP4; a linear layer falls back to UnquantizedLinearMethod from 0.11.1 (0.10 to
    # 0.11.0 raised NotImplementedError). A dense model has no experts: nothing is FP4. The
    # hostile trial: calc vram planned Llama 3.1 8B's weights in BF16 under "MXFP4 MoE experts"
    # while calc perf ran its products at the FP4 rate (TTFT 32.0 ms against 45.7 unquantized).
    dense = catalog_arch("llama-3.1-8b-instruct")
    fmt = weight_format(dense, "mxfp4")
    assert (fmt.method, fmt.quantized_roles) == ("bf16", frozenset())
    assert (
        fmt.description == "unquantized: MXFP4 converts only MoE experts, and this model has none"
    )
    common = ("--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm")
    vram = json_output("calc", "vram", *common, "--quantization", "mxfp4")
    assert vram["vllm_plan"]["weight_format"] == fmt.description
    load = ("--input-len", "1000", "--output-len", "200", "--concurrency", "8")
    mxfp4 = json_output("calc", "perf", *common, *load, "--quantization", "mxfp4")
    unquantized = json_output("calc", "perf", *common, *load)
    assert mxfp4 == unquantized


def test_quantization_mxfp4_of_an_unquantized_checkpoint_is_online_mxfp4_from_0_28() -> None:
    # From 0.28.0 `--quantization mxfp4` is also an online shorthand (config/quantization.py
    # _ONLINE_SHORTHANDS): a checkpoint without a quantization_config is quantized as it loads,
    # every linear and MoE layer in MXFP4; 0.27 builds a bare Mxfp4Config (experts only).
    dense, moe = catalog_arch("llama-3.1-8b-instruct"), catalog_arch("qwen3-30b-a3b")
    assert weight_format(dense, "mxfp4", vllm_version=(0, 27)).quantized_roles == frozenset()
    assert weight_format(moe, "mxfp4", vllm_version=(0, 27)).quantized_roles == {"experts"}
    for arch in (dense, moe):
        online = weight_format(arch, "mxfp4", vllm_version=(0, 28))
        assert (online.method, online.bytes_per_param) == ("mxfp4", 0.5 + 1 / 32)
        assert online.quantized_roles == frozenset(LINEAR_ROLES)
    # A checkpoint that states MXFP4 (gpt-oss) keeps its own: the experts only.
    assert weight_format(
        catalog_arch("gpt-oss-20b"), "mxfp4", vllm_version=(0, 34)
    ).quantized_roles == {"experts"}
    common = ("calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm")
    old = json_output(*common, "--quantization", "mxfp4", "--vllm-version", "0.27")
    new = json_output(*common, "--quantization", "mxfp4", "--vllm-version", "0.28")
    assert new["weights_bytes"] < 0.4 * old["weights_bytes"]


def test_mxfp4_linear_layers_start_only_from_the_0_11_1_patch() -> None:
    # The plan read releases to the minor: --vllm-version 0.11.0 planned Llama 3.1 8B with
    # --quantization mxfp4 unquantized, as 0.11.1 does, where 0.11.0's Mxfp4Config.get_quant_method
    # raises NotImplementedError('Mxfp4 linear layer is not implemented') for every linear layer
    # outside its ignored_layers, which its from_config never sets (layers/quantization/mxfp4.py,
    # 0.10.2 and 0.11.0 sdists); 0.11.1 falls back to UnquantizedLinearMethod.
    dense, moe = catalog_arch("llama-3.1-8b-instruct"), catalog_arch("qwen3-30b-a3b")
    for arch in (dense, moe):  # qwen3_moe builds its attention with the quant config
        with pytest.raises(QuantizationError, match=r"does not start on vLLM 0\.11\.0: its Mxfp4"):
            weight_format(arch, "mxfp4", vllm_version=(0, 11, 0))
    assert weight_format(dense, "mxfp4", vllm_version=(0, 11, 1)).quantized_roles == frozenset()
    # gpt-oss builds its attention without it (models/gpt_oss.py): its checkpoint starts on 0.10.
    gpt_oss = weight_format(catalog_arch("gpt-oss-20b"), None, vllm_version=(0, 10, 1))
    assert gpt_oss.quantized_roles == {"experts"}
    common = ("calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm",
              "--quantization", "mxfp4", "--vllm-version")  # fmt: skip
    refused = invoke(*common, "0.11.0")
    assert refused.exit_code == 1, refused.output
    assert "mxfp4 of this checkpoint does not start on vLLM 0.11.0" in refused.stderr
    assert json_output(*common, "0.11.1")["vllm_plan"]["weight_format"].startswith("unquantized")
