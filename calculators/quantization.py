"""How a checkpoint stores its weights, and how many bytes they take on each GPU.

The format is read from the config's `quantization_config` as vLLM reads it (its `quant_method`:
awq, gptq, fp8, fbgemm_fp8, compressed-tensors, mxfp4, modelopt …), or forced with the
`--quantization` override. Which tensors stay in the model dtype follows the method (embeddings,
lm_head, norms and routers always do; MXFP4 converts only the MoE experts) plus the modules the
checkpoint lists as not converted (`modules_to_not_convert`, `ignore`, `exclude_modules`,
`ignored_layers`, exact names or `re:` patterns): a name without a layer index keeps the whole role
in the model dtype, one with an index (`model.layers.3.mlp`, `re:model.layers.0.self_attn.*`)
that role's share of the named layers only (one projection of a layer counts as the layer's whole
attention or MLP, the safe side). A single named expert stays quantized (its share is below 1 % of
any MoE checkpoint the calculators know).
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from infermeter.calculators.errors import InputError, QuantizationError
from infermeter.calculators.glm5_next import GLM5_NEXT_TYPE
from infermeter.calculators.model_arch import CHUNKED, FULL, SLIDING, ModelArch
from infermeter.calculators.param_count import ParamCounts, param_counts

# Tensor roles (fields of ParamCounts) that are linear layers a method may quantize.
LINEAR_ROLES = ("attention", "dense_mlp", "experts", "shared_experts")
# vLLM's `--quantization mxfp4` of a checkpoint without a quantization_config: up to 0.27
# get_quant_config (model_executor/model_loader/weight_utils.py) builds a bare Mxfp4Config, which
# converts only routed experts (its get_quant_method; a linear layer stays unquantized from
# 0.11.1, 0.10.1-0.11.0 raised NotImplementedError); from 0.28.0 the name is also an online
# shorthand (config/quantization.py _ONLINE_SHORTHANDS: MXFP4 weights, one 8-bit scale per 32,
# for every linear layer and MoE layer), which get_quant_config returns as an
# OnlineQuantizationConfig when the checkpoint states no quantization (read in the 0.27.0,
# 0.28.0, 0.29.0 and 0.32.0 sources). The embeddings and lm_head are not linear layers.
MXFP4_ONLINE_SINCE = (0, 28)
# Before that fallback (a patch release: the plan reads it with `parse_release`), vLLM 0.10.1-0.11.0
# start no MXFP4 model but gpt-oss: Mxfp4Config.get_quant_method raises NotImplementedError("Mxfp4
# linear layer is not implemented") for every linear layer outside its ignored_layers, which
# from_config never sets (layers/quantization/mxfp4.py of the 0.10.2 and 0.11.0 sdists; 0.11.1
# returns UnquantizedLinearMethod with a warning). gpt-oss builds its attention without the quant
# config (models/gpt_oss.py); a dense model's linears, and the attention of any other MoE model
# given --quantization mxfp4, take it.
MXFP4_LINEAR_FALLBACK_SINCE = (0, 11, 1)
# The first release whose --quantization takes each name, where it is not the oldest the plan
# reads: the `QuantizationMethods` of vllm/model_executor/layers/quantization/__init__.py (the
# choices vLLM's argument parser offers) in the sdists 0.7.3, 0.8.5, 0.9.0 … 0.34.0. mxfp4 first
# in 0.10.1 (read in the 0.10.1.1 sdist: 0.10.0 has no mxfp4.py, gpt-oss came with 0.10.1), a patch
# release, so compared with `parse_release`'s whole tuple; modelopt_fp4 first in 0.9.0 (0.8.5
# lists ModelOptNvFp4Config as "nvfp4"). The other choices are in every release the plan reads
# (none and int8 are the calculators' own spellings).
MXFP4_SINCE = (0, 10, 1)
QUANTIZATION_SINCE = {"mxfp4": MXFP4_SINCE, "modelopt_fp4": (0, 9)}
# What --quantization may say of a checkpoint whose quantization_config states a quant_method:
# that method, or a method whose override_quantization_method claims such a checkpoint (GPTQ and
# AWQ as their Marlin kernels, a ModelOpt FP4 export as modelopt_fp4, which 0.8.5 names nvfp4).
# vLLM refuses any other: ModelConfig._verify_quantization raises 'Quantization method specified
# in the model config (fp8) does not match the quantization method specified in the
# `quantization` argument (mxfp4)' (vllm/config.py of the 0.7.3-0.10.2 sdists,
# vllm/config/model.py from 0.11.0; the same check in 0.34.0). `none` is the calculators' own
# (the checkpoint's 16-bit original, not what vLLM serves from this one).
QUANTIZATION_OVERRIDES = {
    "gptq": ("gptq_marlin",),
    "awq": ("awq_marlin",),
    "modelopt": ("modelopt_fp4", "nvfp4"),
}
MXFP4_ONLINE = "MXFP4 (quantized as vLLM loads it: every linear layer and expert)"
ALL_ROLES = (
    "embedding",
    "lm_head",
    "attention",
    "dense_mlp",
    "experts",
    "shared_experts",
    "router",
    "small",
    "vision",
)

_DTYPE_BYTES = {
    "float32": 4,
    "float": 4,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "fp16": 2,
    "bf16": 2,
}

# Names accepted by --quantization (vLLM's spellings), mapped to a weight format.
QUANTIZATION_CHOICES = (
    "none",
    "fp8",
    "fbgemm_fp8",
    "int8",
    "awq",
    "awq_marlin",
    "gptq",
    "gptq_marlin",
    "mxfp4",
    "nvfp4",
    "modelopt",
    "modelopt_fp4",
    "compressed-tensors",
)


@dataclass(frozen=True)
class WeightFormat:
    """The storage format of a checkpoint's quantized linear layers."""

    method: str  # short name shown to users: bf16, fp8, int8, awq, gptq, mxfp4, nvfp4
    bytes_per_param: float  # of a quantized tensor, scales and zero points included
    quantized_roles: frozenset[str]
    unquantized_bytes_per_param: int  # the model dtype of everything else
    description: str
    # (role, layer index) pairs the checkpoint keeps in the model dtype although the role is
    # quantized elsewhere: its per-layer `modules_to_not_convert` / `ignore` entries.
    unquantized_layers: tuple[tuple[str, int], ...] = ()
    # Bytes per parameter of the routed experts where they differ from the other quantized
    # linears (DeepSeek-V4's MXFP4 experts beside FP8 blocks); None: bytes_per_param.
    expert_bytes_per_param: float | None = None


@dataclass(frozen=True)
class WeightBytes:
    """Bytes of weights on one GPU, by tensor role."""

    format: WeightFormat
    by_role: Mapping[str, int]
    rotary_cache_bytes: int

    @property
    def total(self) -> int:
        return sum(self.by_role.values()) + self.rotary_cache_bytes


def model_dtype_bytes(arch: ModelArch, dtype: str | None = None) -> int:
    """Bytes per element of the model dtype vLLM runs in (`--dtype`, default `auto`).

    `auto` takes the checkpoint's torch_dtype but, as vLLM does, runs float32 checkpoints in 16 bit.
    """
    if dtype is None or dtype == "auto":
        return 2
    if dtype not in _DTYPE_BYTES:
        raise QuantizationError(
            f"dtype: expected one of auto, {', '.join(sorted(_DTYPE_BYTES))}; got {dtype!r}"
        )
    return _DTYPE_BYTES[dtype]


def _setting(config: Mapping[str, Any], names: tuple[str, ...], default: int) -> int:
    """An integer setting of quantization_config under the first of `names` present."""
    for name in names:
        value = config.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise QuantizationError(
                f"quantization_config.{name}: expected an integer, got {value!r}"
            )
        return value
    return default


def _group_quant_bytes(bits: int, group_size: int) -> float:
    """Bytes per parameter of a group-wise integer format (GPTQ/AWQ): packed values, an fp16
    scale and a packed zero point per group of `group_size` inputs."""
    if group_size == 0 or group_size < -1:  # -1: per channel; 0 or -5 groups nothing
        raise QuantizationError(
            f"quantization_config.group_size: expected -1 (per channel) or a size > 0, "
            f"got {group_size}"
        )
    if group_size <= 0:  # -1 means one group per output channel: the scales are negligible
        return bits / 8
    return bits / 8 + (2 + bits / 8) / group_size


def _fp8_bytes(config: Mapping[str, Any]) -> float:
    block = config.get("weight_block_size")
    if not block:
        return 1.0
    if (
        not isinstance(block, list)
        or len(block) != 2
        or not all(
            isinstance(side, int) and not isinstance(side, bool) and side > 0 for side in block
        )
    ):
        raise QuantizationError(
            f"quantization_config.weight_block_size: expected two positive integers, got {block!r}"
        )
    # DeepSeek-style 128x128 blocks each carry one float32 scale.
    return 1 + 4 / (int(block[0]) * int(block[1]))


def _role_of(name: str) -> str | None:
    """The tensor role a module name (or pattern) names, None when it names no known one."""
    if "lm_head" in name:
        return "lm_head"
    if "embed" in name:
        return "embedding"
    if re.search(r"(^|\.)(gate|router)\$?$", name) or name.endswith("router"):
        return "router"
    if "vision" in name or "visual" in name or "multi_modal" in name:
        return "vision"
    if "shared_expert" in name:
        return "shared_experts"
    if "experts" in name:
        return "experts"
    if "attn" in name or "attention" in name:
        return "attention"
    if "mlp" in name:
        return "dense_mlp"
    return None


_LAYER_INDEX = re.compile(r"layers\.(\d+)\.")


def _excluded_roles(patterns: Iterable[str]) -> frozenset[str]:
    """Roles a checkpoint's list of modules left unquantized names as a whole (no layer index)."""
    excluded: set[str] = set()
    for raw in patterns:
        name = str(raw).removeprefix("re:")
        if _LAYER_INDEX.search(name):
            continue
        role = _role_of(name)
        if role is not None:
            excluded.add(role)
    return frozenset(excluded)


def _excluded_layers(patterns: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """(role, layer) pairs a checkpoint's list names with a layer index; a single expert
    (`…experts.5…`) is left out."""
    pairs: set[tuple[str, int]] = set()
    for raw in patterns:
        name = str(raw).removeprefix("re:")
        match = _LAYER_INDEX.search(name)
        if match is None or re.search(r"experts\.\d+", name):
            continue
        rest = name[match.end() :]
        role = _role_of(rest)
        if role is None and re.fullmatch(r"[.*+?()|\\]*", rest):
            role = "block"  # the whole layer: `model.layers.3`, `re:model.layers.3.*`
        if role is not None:
            pairs.add((role, int(match.group(1))))
    return tuple(sorted(pairs))


def _not_converted(config: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    for key in ("modules_to_not_convert", "ignore", "exclude_modules", "ignored_layers"):
        value = config.get(key)
        if isinstance(value, list):
            names.extend(str(item) for item in value)
    return names


def _compressed_tensors(config: Mapping[str, Any], unquantized: int) -> WeightFormat:
    groups = config.get("config_groups") or {}
    if not isinstance(groups, Mapping):
        raise QuantizationError(
            "quantization_config.config_groups: expected a JSON object of quantization groups, "
            f"got {repr(groups)[:60]}"
        )
    weights: Mapping[str, Any] = {}
    for group in groups.values():
        if isinstance(group, Mapping) and isinstance(group.get("weights"), Mapping):
            weights = group["weights"]
            break
    if not weights:
        raise QuantizationError(
            "quantization_config.config_groups: compressed-tensors config without weight settings"
        )
    bits = _setting(weights, ("num_bits",), 8)
    kind = str(weights.get("type", "int"))
    group_size = _setting(weights, ("group_size",), -1)
    roles = frozenset(LINEAR_ROLES) - _excluded_roles(_not_converted(config))
    if kind == "float" and bits == 4:
        return WeightFormat("nvfp4", 0.5 + 1 / 16, roles, unquantized, "NVFP4 (compressed-tensors)")
    if kind == "float":
        return WeightFormat("fp8", 1.0, roles, unquantized, "FP8 (compressed-tensors)")
    if bits == 8:
        return WeightFormat("int8", 1.0, roles, unquantized, "INT8 (compressed-tensors)")
    size = _group_quant_bytes(bits, group_size)
    return WeightFormat(
        f"int{bits}", size, roles, unquantized, f"INT{bits} g{group_size} (compressed-tensors)"
    )


def modelopt_algo(config: Mapping[str, Any]) -> str:
    """A ModelOpt checkpoint's quant_algo (top level or under `quantization`), upper case; FP8
    where it states none."""
    nested = config.get("quantization")
    return str(
        config.get("quant_algo")
        or (nested.get("quant_algo") if isinstance(nested, Mapping) else None)
        or "FP8"
    ).upper()


def _from_method(method: str, config: Mapping[str, Any], unquantized: int) -> WeightFormat:
    linear = frozenset(LINEAR_ROLES) - _excluded_roles(_not_converted(config))
    if method in ("fp8", "fbgemm_fp8"):
        return WeightFormat("fp8", _fp8_bytes(config), linear, unquantized, "FP8 weights")
    if method == "int8":
        return WeightFormat("int8", 1.0, linear, unquantized, "INT8 weights")
    if method in ("awq", "awq_marlin", "gptq", "gptq_marlin"):
        bits = _setting(config, ("bits", "w_bit"), 4)
        group = _setting(config, ("group_size", "q_group_size"), 128)
        name = "awq" if method.startswith("awq") else "gptq"
        return WeightFormat(
            name,
            _group_quant_bytes(bits, group),
            linear,
            unquantized,
            f"{name.upper()} {bits}-bit, group size {group}",
        )
    if method == "mxfp4":
        # MXFP4 packs two 4-bit values per byte with one 8-bit scale per block of 32.
        experts = frozenset({"experts"}) - _excluded_roles(_not_converted(config))
        return WeightFormat("mxfp4", 0.5 + 1 / 32, experts, unquantized, "MXFP4 MoE experts")
    if method in ("nvfp4", "modelopt_fp4"):
        return WeightFormat("nvfp4", 0.5 + 1 / 16, linear, unquantized, "NVFP4 weights")
    if method == "modelopt":
        if "FP4" in modelopt_algo(config):
            return WeightFormat("nvfp4", 0.5 + 1 / 16, linear, unquantized, "NVFP4 (ModelOpt)")
        return WeightFormat("fp8", 1.0, linear, unquantized, "FP8 (ModelOpt)")
    if method == "compressed-tensors":
        return _compressed_tensors(config, unquantized)
    raise QuantizationError(
        f"quantization: unsupported method {method!r}; expected one of "
        + ", ".join(QUANTIZATION_CHOICES)
    )


def weight_format(
    arch: ModelArch,
    quantization: str | None = None,
    dtype: str | None = None,
    vllm_version: tuple[int, ...] | None = None,
) -> WeightFormat:
    """The checkpoint's weight format: `quantization` overrides the config's own, `none`
    forces the model dtype. Inkling's sink experts (`shared_experts`) stay in the model dtype
    whatever the format: vLLM builds them as plain parameters (inkling/nvidia/moe.py); so do
    GLM-5-Next's MLA and KDA projections (`attention`: glm5next/common/model.py, kda.py).
    `vllm_version` is the release that serves it, where the release changes the format (a
    --quantization mxfp4 of an unquantized checkpoint, MXFP4_ONLINE_SINCE), to its patch where a
    patch changed it (MXFP4_LINEAR_FALLBACK_SINCE); None: before the online format, after the
    fallback."""
    check_quantization_release(quantization, vllm_version)
    fmt = _weight_format(arch, quantization, dtype)
    _check_mxfp4_linears(arch, fmt, vllm_version)
    if _online_mxfp4(arch, quantization, vllm_version):
        fmt = replace(fmt, quantized_roles=frozenset(LINEAR_ROLES), description=MXFP4_ONLINE)
    elif arch.moe is None and fmt.quantized_roles == {"experts"}:
        fmt = _experts_only_on_a_dense_model(arch, fmt)
    if arch.inkling is not None:
        return replace(fmt, quantized_roles=fmt.quantized_roles - {"shared_experts"})
    if arch.model_type == GLM5_NEXT_TYPE:  # MLA and KDA built with quant_config None
        return replace(fmt, quantized_roles=fmt.quantized_roles - {"attention"})
    return fmt


def check_quantization_release(
    quantization: str | None, vllm_version: tuple[int, ...] | None
) -> None:
    """Refuse a --quantization name the release's argument parser does not take
    (QUANTIZATION_SINCE): a usage error, as vLLM's own is."""
    since = QUANTIZATION_SINCE.get((quantization or "").lower())
    if since is None or vllm_version is None or vllm_version >= since:
        return
    first, release = (".".join(map(str, version)) for version in (since, vllm_version))
    raise InputError(
        f"quantization: vLLM has --quantization {quantization} from {first}, not in {release}"
    )


def _check_mxfp4_linears(
    arch: ModelArch, fmt: WeightFormat, vllm_version: tuple[int, ...] | None
) -> None:
    """Refuse MXFP4 where the release raises for the model's linear layers (see
    MXFP4_LINEAR_FALLBACK_SINCE): a model without routed experts, or a checkpoint that is not an
    MXFP4 export of its own (gpt-oss's) given --quantization mxfp4."""
    if (
        fmt.method != "mxfp4"
        or vllm_version is None
        or not MXFP4_SINCE <= vllm_version < MXFP4_LINEAR_FALLBACK_SINCE
        or (arch.moe is not None and arch.quantization_config)
    ):
        return
    release = ".".join(map(str, vllm_version))
    raise QuantizationError(
        f"quantization: mxfp4 of this checkpoint does not start on vLLM {release}: its "
        "Mxfp4Config raises NotImplementedError ('Mxfp4 linear layer is not implemented') for "
        "the model's linear layers outside the MoE experts; from 0.11.1 they stay unquantized"
    )


def _online_mxfp4(
    arch: ModelArch, quantization: str | None, vllm_version: tuple[int, ...] | None
) -> bool:
    """Whether vLLM quantizes the checkpoint to MXFP4 as it loads it: --quantization mxfp4 of a
    checkpoint without a quantization_config, from MXFP4_ONLINE_SINCE."""
    return (
        (quantization or "").lower() == "mxfp4"
        and not arch.quantization_config
        and vllm_version is not None
        and vllm_version >= MXFP4_ONLINE_SINCE
    )


def _experts_only_on_a_dense_model(arch: ModelArch, fmt: WeightFormat) -> WeightFormat:
    """A format that quantizes only routed experts (MXFP4: vLLM's Mxfp4Config.get_quant_method
    builds routed experts only in MXFP4; from 0.11.1 a linear layer falls back to
    UnquantizedLinearMethod, 0.10.1-0.11.0 raised NotImplementedError), on a model without them:
    the model dtype's, named so, for the memory plan and the predictions alike."""
    described = (
        f"unquantized: {fmt.method.upper()} converts only MoE experts, and this model has none"
    )
    return replace(_unquantized(arch, fmt.unquantized_bytes_per_param), description=described)


def _unquantized(arch: ModelArch, unquantized: int) -> WeightFormat:
    """Every weight in the model dtype, named by it."""
    name = "fp32" if unquantized == 4 else "bf16" if arch.torch_dtype != "float16" else "fp16"
    return WeightFormat(name, unquantized, frozenset(), unquantized, "unquantized")


def _weight_format(
    arch: ModelArch, quantization: str | None = None, dtype: str | None = None
) -> WeightFormat:
    unquantized = model_dtype_bytes(arch, dtype)
    config: Mapping[str, Any] = arch.quantization_config or {}
    if quantization is not None:
        method = quantization.lower()
        if method == "none":
            return WeightFormat("bf16", unquantized, frozenset(), unquantized, "unquantized")
        _check_override(config, method)
        fmt = _from_method(method, config, unquantized)
        return replace(fmt, unquantized_layers=_excluded_layers(_not_converted(config)))
    if not config:
        return _unquantized(arch, unquantized)
    declared = config.get("quant_method")
    if not declared:
        raise QuantizationError("quantization_config.quant_method: required field missing")
    if arch.deepseek_v4 is not None:
        return _deepseek_v4_format(arch.deepseek_v4, config, str(declared).lower(), unquantized)
    fmt = _from_method(str(declared).lower(), config, unquantized)
    return replace(fmt, unquantized_layers=_excluded_layers(_not_converted(config)))


def _check_override(config: Mapping[str, Any], method: str) -> None:
    """Refuse --quantization `method` of a checkpoint that states another quant_method
    (QUANTIZATION_OVERRIDES), as vLLM does."""
    declared = str(config.get("quant_method") or "").lower()
    if not declared or method == declared or method in QUANTIZATION_OVERRIDES.get(declared, ()):
        return
    raise QuantizationError(
        f"quantization: the checkpoint is {declared} (its quantization_config's quant_method), "
        f"and vLLM refuses --quantization {method} of it: 'Quantization method specified in the "
        f"model config ({declared}) does not match the quantization method specified in the "
        f"`quantization` argument ({method})'"
    )


def _deepseek_v4_format(
    language: Mapping[str, Any], config: Mapping[str, Any], method: str, unquantized: int
) -> WeightFormat:
    """DeepSeek-V4's checkpoint format: vLLM (model_executor/models/config.py) serves quant_method
    fp8 as deepseek_v4_fp8, FP8 linears in 128x128 blocks with one UE8M0 (1-byte) scale each and,
    with `expert_dtype` fp4 (the loader's default), MXFP4 routed experts (a 1-byte scale per 32
    values). Compressors and the indexer's weights_proj stay in the model dtype (`small`)."""
    if method != "fp8":
        raise QuantizationError(
            f"quantization_config.quant_method: {method!r} on a deepseek_v4 model; the "
            "calculators read DeepSeek-V4's fp8 checkpoints only (deepseek_v4_fp8)"
        )
    block = config.get("weight_block_size") or [128, 128]
    fp8 = _fp8_bytes({"weight_block_size": block})
    if str(config.get("scale_fmt", "")).lower() == "ue8m0":
        fp8 = 1 + 1 / (int(block[0]) * int(block[1]))
    experts = str(language.get("expert_dtype") or config.get("expert_dtype") or "fp4").lower()
    expert_bytes = 0.5 + 1 / 32 if experts == "fp4" else fp8
    roles = frozenset(LINEAR_ROLES)
    what = "MXFP4 routed experts, " if experts == "fp4" else ""
    return WeightFormat(
        "fp8", fp8, roles, unquantized, f"DeepSeek-V4 FP8 blocks ({what}deepseek_v4_fp8)",
        expert_bytes_per_param=expert_bytes,
    )  # fmt: skip


def _rotary_cache_bytes(arch: ModelArch, dtype_bytes: int) -> int:
    """vLLM precomputes cos/sin for every position up to max_position_embeddings (none without
    a rotary embedding: GPT-2, BLOOM)."""
    if arch.max_position_embeddings is None or not arch.rotary:
        return 0
    rotary_dim = arch.mla.qk_rope_head_dim if arch.mla is not None else arch.head_dim
    if arch.deepseek_v4 is not None:  # the rotary part of each 512-wide head
        rotary_dim = int(arch.deepseek_v4.get("qk_rope_head_dim") or rotary_dim)
    return arch.max_position_embeddings * rotary_dim * dtype_bytes


def _mxfp4_padding(arch: ModelArch, tensor_parallel_size: int) -> float:
    """vLLM's MXFP4 MoE kernels pad each rank's expert width to 128 and the hidden size to 256
    (Marlin and Triton backends); public logs of gpt-oss weights agree within 2 %."""
    if arch.moe is None:
        return 1.0
    width = max(1, arch.moe.expert_intermediate_size // tensor_parallel_size)
    hidden = arch.hidden_size
    padded_width = -(-width // 128) * 128
    padded_hidden = -(-hidden // 256) * 256
    return (padded_width / width) * (padded_hidden / hidden)


def _role_layers(arch: ModelArch, role: str) -> set[int]:
    """The layers that hold `role` (the roles a layer-indexed override can name)."""
    everything = set(range(arch.num_layers))
    moe_layers = set(arch.moe.moe_layers) if arch.moe is not None else set()
    if role in ("experts", "shared_experts", "router"):
        return moe_layers
    if role == "dense_mlp":
        return everything - moe_layers
    if role == "attention":
        attention_kinds = (FULL, SLIDING, CHUNKED)
        return {i for i, kind in enumerate(arch.layer_kinds) if kind in attention_kinds}
    return set()


def _unquantized_shares(arch: ModelArch, fmt: WeightFormat) -> dict[str, float]:
    """Per quantized role, the share of its layers the checkpoint keeps in the model dtype.
    `model.layers.N.mlp` on an MoE layer names its experts (and shared experts); a whole block
    (`model.layers.N`) names every role of the layer."""
    named: dict[str, set[int]] = {}
    for role, layer in fmt.unquantized_layers:
        roles = [role]
        if role == "block":
            roles = ["attention", "dense_mlp", "experts", "shared_experts"]
        elif role == "dense_mlp" and arch.moe is not None and layer in arch.moe.moe_layers:
            roles = ["experts", "shared_experts"]
        for name in roles:
            named.setdefault(name, set()).add(layer)
    shares = {}
    for role, layers in named.items():
        holding = _role_layers(arch, role)
        if holding:
            shares[role] = len(layers & holding) / len(holding)
    return shares


def unquantized_share(arch: ModelArch, fmt: WeightFormat, role: str) -> float:
    """The share of `role`'s layers that the checkpoint keeps in the model dtype by naming them
    layer by layer, although the role is quantized elsewhere (0 when none is named)."""
    return _unquantized_shares(arch, fmt).get(role, 0.0)


def weight_bytes(arch: ModelArch, fmt: WeightFormat, tensor_parallel_size: int = 1) -> WeightBytes:
    """Bytes of weights that one GPU holds under `tensor_parallel_size`-way tensor parallelism."""
    counts: ParamCounts = param_counts(arch, tensor_parallel_size)
    expert_padding = _mxfp4_padding(arch, tensor_parallel_size) if fmt.method == "mxfp4" else 1.0
    by_role: dict[str, int] = {}
    kept = _unquantized_shares(arch, fmt)
    for role in ALL_ROLES:
        params = int(getattr(counts, role))
        per_param = (
            fmt.bytes_per_param if role in fmt.quantized_roles else fmt.unquantized_bytes_per_param
        )
        if role in fmt.quantized_roles and kept.get(role):
            share = kept[role]
            per_param = (1 - share) * per_param + share * fmt.unquantized_bytes_per_param
        if role == "experts" and fmt.expert_bytes_per_param is not None:
            per_param = fmt.expert_bytes_per_param
        padding = expert_padding if role == "experts" else 1.0
        by_role[role] = round(params * per_param * padding)
    if counts.four_byte:  # float32 / int32 tensors, whatever the model dtype
        by_role["four_byte"] = 4 * counts.four_byte
    return WeightBytes(
        format=fmt,
        by_role=by_role,
        rotary_cache_bytes=_rotary_cache_bytes(arch, fmt.unquantized_bytes_per_param),
    )
