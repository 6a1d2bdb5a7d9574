"""Every text-generation architecture vLLM's newest release registers, and what the calculators
do with it (benchmarks/vllm_architectures.py, infermeter.registry.vllm_architectures;
written from the PyPI source package of vLLM 0.34.0; tests/data/vllm_architectures.json)."""

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from infermeter.calculators.config_reader import key_verdict, parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.param_count import param_counts
from infermeter.registry import vllm_architectures

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "vllm_architectures.py"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("vllm_architectures", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vllm_architectures"] = module
    spec.loader.exec_module(module)
    return module


SCRIPT_MODULE = _script()
RELEASE, ROWS = vllm_architectures.load()
JUDGED = {row["architecture"]: row for row in vllm_architectures.classify(ROWS)}


def test_the_figure_for_the_newest_release(capsys: pytest.CaptureFixture[str]) -> None:
    assert RELEASE == "vllm-0.34.0"
    assert SCRIPT_MODULE.main([]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "vllm-0.34.0: 126 registered text-generation architectures; 92 planned by name, "
        "34 read generically, 0 refused"
    )


def test_the_families_the_issue_names_are_planned() -> None:
    named = [
        "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "Qwen3NextForCausalLM",
        "Gemma3ForCausalLM", "Gemma4ForCausalLM", "Glm4MoeForCausalLM", "GlmMoeDsaForCausalLM",
        "MiniMaxM2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
        "GptOssForCausalLM", "Llama4ForCausalLM", "MistralLarge3ForCausalLM",
        "NemotronHForCausalLM", "GraniteMoeHybridForCausalLM", "FalconH1ForCausalLM",
        "Phi3ForCausalLM", "KimiLinearForCausalLM", "DeepseekV4ForCausalLM", "HYV4ForCausalLM",
        "Qwen4ExpForCausalLM", "MiniMaxM3SparseForCausalLM", "InklingForCausalLM",
        "InklingForConditionalGeneration",
    ]  # fmt: skip
    assert {name: JUDGED[name]["verdict"] for name in named} == dict.fromkeys(named, "by name")


def test_every_refusal_names_a_field() -> None:
    # 0.34.0 leaves none refused; each module's keys under a model type the calculators do not
    # know are, where they declare a mechanism the conventions do not cover (the hybrids).
    unknown = [{**row, "model_type": f"{row['model_type']}_next"} for row in ROWS]
    refused = [row for row in vllm_architectures.classify(unknown) if row["verdict"] == "refused"]
    assert len(refused) > 10
    for row in refused:
        field = row["reason"].split(":", 1)[0]
        assert field.replace("_", "").isalnum(), row["reason"]


def test_a_refusal_in_the_table_is_the_readers_own() -> None:
    # LFM2's keys under a model type the calculators do not know: short-convolution layers with
    # their own state (conv_L_cache); read generically it would be a plain decoder, so the reader
    # refuses it naming the key, as the table's judgement of the same keys does.
    config = {
        "model_type": "lfm2_next",
        "hidden_size": 768,
        "num_hidden_layers": 24,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "vocab_size": 50280,
        "conv_L_cache": 3,
    }
    with pytest.raises(ConfigError, match=r"^conv_L_cache: model_type 'lfm2_next' is"):
        parse_config(config)
    verdict, reason = key_verdict("lfm2_next", JUDGED["Lfm2ForCausalLM"]["config_keys"])
    assert (verdict, reason.split(":")[0]) == ("refused", "conv_L_cache")


# Families vLLM registers first in 0.30-0.34 (registry.py of the 0.29.0 and 0.34.0 sdists) and
# what the calculators do with each: read generically where the conventions describe the module,
# refused naming the key and the mechanism where they do not.
NEW_SINCE_0_29 = {
    "ExaoneMoEForCausalLM": ("generic", ""),
    "RicursiveForCausalLM": ("generic", ""),
    "DoryForCausalLM": ("by name", ""),
    "DomynEdgeForCausalLM": ("by name", ""),
    "Lfm3ForCausalLM": ("by name", ""),
    "BeamForCausalLM": ("by name", ""),
    "Glm5NextForCausalLM": ("by name", ""),
    "MistralLarge4ForCausalLM": ("by name", ""),
    "AliceAIForCausalLM": ("by name", ""),
    "Step5ForCausalLM": ("by name", ""),
    "UnlimitedOCR2TextForCausalLM": ("by name", ""),
    "FlintForCausalLM": ("generic", ""),
    "K2HorizonForCausalLM": ("by name", ""),
    "ZayaForCausalLM": ("by name", ""),
}


@pytest.mark.parametrize("name", sorted(NEW_SINCE_0_29))
def test_a_family_new_since_0_29_is_read_or_refused_naming_its_mechanism(name: str) -> None:
    verdict, what = NEW_SINCE_0_29[name]
    assert JUDGED[name]["verdict"] == verdict
    assert what in JUDGED[name]["reason"]


def test_a_new_family_with_only_conventional_keys_is_still_refused() -> None:
    # Step5's config with only conventional keys: vLLM 0.34.0 refuses a Step5 checkpoint without
    # its sparse_config section (Step5DecoderLayer), and so does the reader, naming it.
    config = {
        "model_type": "step5",
        "hidden_size": 1024,
        "num_hidden_layers": 8,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "intermediate_size": 4096,
        "vocab_size": 32000,
        "use_moe_router_bias": True,
        "need_fp32_gate": True,
    }
    with pytest.raises(ConfigError, match=r"^sparse_config: vLLM serves Step5 only"):
        parse_config(config)


def test_flint_read_generically_counts_what_vllm_builds() -> None:
    # FlintConfig's defaults (vLLM 0.34.0 vllm/models/flint/configs.py) counted layer by layer from
    # vllm/models/flint/model.py: q/k/v/o projections, a 256-expert MoE of 512-wide SwiGLU experts
    # with a 1024-wide shared expert (no gate on it) and a router, two norms, over 49 layers; an
    # untied vocabulary of 150,144. Left out by the generic reading: the q/k norms and the one
    # attention-sink logit a head (288 parameters a layer, 14,112 in all).
    config = {
        "model_type": "flint", "vocab_size": 150144, "hidden_size": 2048,
        "intermediate_size": 6144, "num_hidden_layers": 49, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "max_position_embeddings": 262144,
        "tie_word_embeddings": False, "use_sliding_window": True, "sliding_window": 513,
        "layer_types": ["sliding_attention"] * 3 * 16 + ["full_attention"],
        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 1024,
        "num_experts_per_tok": 6, "num_experts": 256, "norm_topk_prob": True,
        "router_score_function": "sigmoid", "mlp_only_layers": [],
    }  # fmt: skip
    counts = param_counts(parse_config(config))
    attention = 2048 * 4096 + 2 * 2048 * 512 + 4096 * 2048
    moe = 256 * 3 * 2048 * 512 + 3 * 2048 * 1024 + 2048 * 256
    total = 49 * (attention + moe + 2 * 2048) + 2 * 150144 * 2048 + 2048
    assert counts.total == total
    assert total + 49 * (2 * 128 + 32) == 41_334_034_208


def test_a_key_the_module_reads_with_capitals_is_judged() -> None:
    # lfm2.py reads config.conv_L_cache: the table keeps that key, not the lowercase stem conv_
    # (which once read LFM2 as generic); LFM2 and LFM2-MoE are planned by name (calculators.lfm2).
    row = JUDGED["Lfm2ForCausalLM"]
    assert "conv_L_cache" in row["config_keys"]
    assert (row["verdict"], JUDGED["Lfm2MoeForCausalLM"]["verdict"]) == ("by name", "by name")
