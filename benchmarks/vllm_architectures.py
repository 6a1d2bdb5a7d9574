"""Which text-generation architectures vLLM's newest release registers, and what the calculators
do with each: planned by name, read generically (the plan says so), or refused naming a key.

    # from an unpacked vLLM source package (PyPI sdist), writes the committed snapshot:
    .venv/bin/python benchmarks/vllm_architectures.py --write \
        --vllm-source /work/scratch/vsrc/vllm-0.34.0
    # from the committed snapshot (tests/data/vllm_architectures.json), against this checkout:
    .venv/bin/python benchmarks/vllm_architectures.py

The list is `_TEXT_GENERATION_MODELS` in vllm/model_executor/models/registry.py. vLLM names the
architecture, not the `model_type` its config.json carries: MODEL_TYPES gives that, as the
Hugging Face config class (or vLLM's own, vllm/transformers_utils/configs) declares it.
No config.json of every architecture is at hand, so the keys a config has are approximated by
the attributes the architecture's vLLM module reads from its config (`config.X`,
`hf_config.X`, `text_config.X`, `getattr(config, "X")`): a key vLLM reads is one the checkpoint
can set. The verdict is the calculators' own key check on those names
(`config_reader.key_verdict`, through `infermeter.registry.vllm_architectures`): the model
type is one they know by name; or an unknown one whose keys the generic reading covers; or
one refused, naming the key and why. "Read generically"
is not a measured accuracy: no such model's plan has been held to a log.
"""

import argparse
import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

from infermeter.registry.vllm_architectures import SNAPSHOT, classify, load, summary

_READS = re.compile(
    r"\b(?:hf_|text_|hf_text_)?config\.([A-Za-z_][A-Za-z0-9_]*)"
    r"|getattr\(\s*(?:hf_|text_)?config,\s*\"([A-Za-z_][A-Za-z0-9_]*)\""
)
# Architecture → the model_type of its config.json (see the module docstring).
MODEL_TYPES = {
    "AfmoeForCausalLM": "afmoe", "AliceAIForCausalLM": "alice_ai",
    "ApertusForCausalLM": "apertus", "ArceeForCausalLM": "arcee",
    "AXK1ForCausalLM": "axk1", "BailingMoeForCausalLM": "bailing_moe",
    "BailingMoeV2ForCausalLM": "bailing_moe_v2",
    "BailingMoeV2_5ForCausalLM": "bailing_moe_linear",
    "BailingMoeV3ForCausalLM": "bailing_moe_v3", "BeamForCausalLM": "beam",
    "BloomForCausalLM": "bloom",
    "ChatGLMModel": "chatglm", "ChatGLMForConditionalGeneration": "chatglm",
    "CohereForCausalLM": "cohere", "Cohere2ForCausalLM": "cohere2",
    "Cohere2MoeForCausalLM": "cohere2_moe", "CwmForCausalLM": "cwm", "DbrxForCausalLM": "dbrx",
    "DeciLMForCausalLM": "nemotron-nas", "DeepseekForCausalLM": "deepseek",
    "DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3",
    "DeepseekV32ForCausalLM": "deepseek_v32", "DeepseekV4ForCausalLM": "deepseek_v4",
    "DomynEdgeForCausalLM": "domyn_edge", "DoryForCausalLM": "dory",
    "Ernie4_5ForCausalLM": "ernie4_5", "Ernie4_5_MoeForCausalLM": "ernie4_5_moe",
    "ExaoneForCausalLM": "exaone", "Exaone4ForCausalLM": "exaone4",
    "ExaoneMoeForCausalLM": "exaone_moe", "ExaoneMoEForCausalLM": "exaone_moe",
    "FalconForCausalLM": "falcon", "FlintForCausalLM": "flint",
    "FalconMambaForCausalLM": "falcon_mamba", "FalconH1ForCausalLM": "falcon_h1",
    "GemmaForCausalLM": "gemma", "Gemma2ForCausalLM": "gemma2",
    "Gemma3ForCausalLM": "gemma3_text", "Rnj1ForCausalLM": "rnj1",
    "Gemma3nForCausalLM": "gemma3n_text", "Gemma4ForCausalLM": "gemma4_text",
    "Qwen3NextForCausalLM": "qwen3_next", "Qwen4ExpForCausalLM": "qwen4_exp_text",
    "GlmForCausalLM": "glm", "Glm4ForCausalLM": "glm4", "Glm4MoeForCausalLM": "glm4_moe",
    "Glm4MoeLiteForCausalLM": "glm4_moe_lite", "GlmMoeDsaForCausalLM": "glm_moe_dsa",
    "Glm5NextForCausalLM": "glm5_next_text", "K2HorizonForCausalLM": "k2_horizon",
    "GptOssForCausalLM": "gpt_oss", "GPT2LMHeadModel": "gpt2", "GPTJForCausalLM": "gptj",
    "GPTNeoXForCausalLM": "gpt_neox", "GraniteForCausalLM": "granite",
    "GraniteMoeForCausalLM": "granitemoe", "GraniteMoeHybridForCausalLM": "granitemoehybrid",
    "GraniteMoeSharedForCausalLM": "granitemoeshared",
    "GraniteMoeSWAForCausalLM": "granitemoeshared", "GraniteSWAForCausalLM": "granite",
    "HrmTextForCausalLM": "hrm_text", "HYV3ForCausalLM": "hy_v3", "HYV4ForCausalLM": "hy_v4",
    "HCXVisionV2ForCausalLM": "hyperclovax_vision_v2", "HyperCLOVAXForCausalLM": "hyperclovax",
    "InternLM2ForCausalLM": "internlm2", "InternLM3ForCausalLM": "internlm3",
    "IQuestCoderForCausalLM": "iquestcoder", "IQuestLoopCoderForCausalLM": "iquestloopcoder",
    "Jais2ForCausalLM": "jais2", "JambaForCausalLM": "jamba",
    "KimiLinearForCausalLM": "kimi_linear", "Lfm2ForCausalLM": "lfm2",
    "Lfm2MoeForCausalLM": "lfm2_moe", "Lfm3ForCausalLM": "lfm3", "LagunaForCausalLM": "laguna",
    "LlamaForCausalLM": "llama", "Llama4ForCausalLM": "llama4_text", "LLaMAForCausalLM": "llama",
    "LongcatFlashForCausalLM": "longcat_flash",
    "LongcatFlashNgramForCausalLM": "longcat_flash_ngram", "MambaForCausalLM": "mamba",
    "Mamba2ForCausalLM": "mamba2", "MellumForCausalLM": "mellum",
    "MiniCPMForCausalLM": "minicpm", "MiniCPM3ForCausalLM": "minicpm3",
    "MiniMaxM2ForCausalLM": "minimax_m2", "MiniMaxM3SparseForCausalLM": "minimax_m3_text",
    "InklingForCausalLM": "inkling_model", "InklingForConditionalGeneration": "inkling_model",
    "Ministral3ForCausalLM": "ministral3", "MistralForCausalLM": "mistral",
    # Mistral Large 3: vLLM's mistral_large_3.py is DeepSeek-V3's model under Mistral's format;
    # Mistral Large 4's config is the one transformers_utils/configs/mistral.py adapts.
    "MistralLarge3ForCausalLM": "deepseek_v3", "MistralLarge4ForCausalLM": "mistral_large_4",
    "MixtralForCausalLM": "mixtral",
    "MiMoForCausalLM": "mimo", "MiMoV2FlashForCausalLM": "mimo_v2_flash",
    "MiMoV2ForCausalLM": "mimo_v2", "NemotronForCausalLM": "nemotron",
    "NemotronHForCausalLM": "nemotron_h", "NemotronHPuzzleForCausalLM": "nemotron_h",
    "MuseGlimmerForCausalLM": "muse_glimmer_text", "OlmoHybridForCausalLM": "olmo_hybrid",
    "OlmoeForCausalLM": "olmoe", "OPTForCausalLM": "opt", "OrionForCausalLM": "orion",
    "PanguEmbeddedForCausalLM": "pangu_embedded", "PanguProMoEV2ForCausalLM": "pangu_pro_moe_v2",
    "PanguUltraMoEForCausalLM": "pangu_ultra_moe", "Param2MoEForCausalLM": "param2moe",
    "PhiForCausalLM": "phi", "Phi3ForCausalLM": "phi3", "PhiMoEForCausalLM": "phimoe",
    "Plamo3ForCausalLM": "plamo3", "Qwen2ForCausalLM": "qwen2", "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3_moe",
    "Qwen3_5ForCausalLM": "qwen3_5_text", "Qwen3_5MoeForCausalLM": "qwen3_5_moe_text",
    "RicursiveForCausalLM": "ricursive",
    "SarvamMoEForCausalLM": "sarvam_moe", "SarvamMLAForCausalLM": "sarvam_mla",
    "SeedOssForCausalLM": "seed_oss", "Step1ForCausalLM": "step1",
    "Step3TextForCausalLM": "step3_text", "Step3p5ForCausalLM": "step3p5",
    "Step5ForCausalLM": "step5",
    "StableLmForCausalLM": "stablelm", "SolarForCausalLM": "solar",
    "TeleChat2ForCausalLM": "telechat", "TeleChat3ForCausalLM": "telechat3",
    "TeleFLMForCausalLM": "teleflm", "UnlimitedOCR2TextForCausalLM": "deepseek_v2",
    "Zamba2ForCausalLM": "zamba2", "ZayaForCausalLM": "zaya",
}  # fmt: skip


def _registered(root: Path) -> dict[str, tuple[str, str]]:
    """`_TEXT_GENERATION_MODELS` of the release's registry.py: architecture → (module, class)."""
    tree = ast.parse((root / "vllm/model_executor/models/registry.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == (
            "_TEXT_GENERATION_MODELS"
        ):
            value: dict[str, tuple[str, str]] = ast.literal_eval(node.value)
            return value
    raise SystemExit(
        f"{root}: no _TEXT_GENERATION_MODELS in vllm/model_executor/models/registry.py"
    )


def _module_file(root: Path, module: str) -> Path:
    """The file vLLM imports for a registry entry (flat models/ or a vllm.models package)."""
    if not module.startswith("vllm."):
        return root / "vllm/model_executor/models" / f"{module}.py"
    base = root / module.replace(".", "/")
    for candidate in (base.with_suffix(".py"), base / "nvidia/model.py", base / "model.py"):
        if candidate.is_file():
            return candidate
    return base / "__init__.py"


def extract(root: Path) -> list[dict[str, Any]]:
    """One row per registered text-generation architecture: module, model_type, keys read."""
    rows = []
    for architecture, (module, _) in _registered(root).items():
        if architecture not in MODEL_TYPES:
            raise SystemExit(f"{architecture}: add its config's model_type to MODEL_TYPES")
        source = _module_file(root, module)
        text = source.read_text() if source.is_file() else ""
        keys = sorted({a or b for a, b in _READS.findall(text)})
        rows.append(
            {
                "architecture": architecture,
                "module": str(source.relative_to(root)),
                "model_type": MODEL_TYPES[architecture],
                "config_keys": keys,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vllm-source", type=Path, help="an unpacked vLLM source package")
    parser.add_argument("--write", action="store_true", help="write the committed snapshot")
    args = parser.parse_args(argv)
    if args.vllm_source:
        release = args.vllm_source.name
        rows = extract(args.vllm_source)
    else:
        release, rows = load()
    judged = classify(rows)
    print(summary(release, judged))
    for row in judged:
        if row["verdict"] == "refused":
            print(f"  refused  {row['architecture']} ({row['model_type']}): {row['reason']}")
    if args.write:
        keep = [{k: row[k] for k in ("architecture", "module", "model_type", "config_keys")}
                for row in judged]  # fmt: skip
        SNAPSHOT.write_text(
            json.dumps({"release": release, "architectures": keep}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
