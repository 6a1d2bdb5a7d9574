"""A multimodal model's vision tower and projector, read from its `vision_config`.

vLLM loads the vision tower with the language model (it is inside the "Model loading took"
figure) and keeps it in the model dtype: checkpoints quantize the language model's linear layers
and leave the tower out. The towers differ per family; each count follows the module layout of
vLLM's own implementation:

- SigLIP (Gemma 3, `siglip.py`): LayerNorm blocks, q/k/v/out and fc1/fc2 with biases, learned
  position embeddings; Gemma 3's projector is an RMSNorm and one linear map.
- Qwen2-VL (`qwen2_vl.py`): `depth` blocks `embed_dim` wide of LayerNorm, qkv and proj with
  biases, an ungated MLP (fc1/fc2, `embed_dim` x `mlp_ratio`) with biases; a Conv3d patch
  embedding without bias; the merger (LayerNorm, then two linear maps with biases over
  `spatial_merge_size`² patches into `hidden_size`, which is the text width here).
- Qwen2.5-VL (`qwen2_5_vl.py`): `depth` blocks of RMSNorm, qkv and proj with biases, a gated MLP
  with biases; a Conv3d patch embedding without bias; the merger (RMSNorm, then two linear maps
  over `spatial_merge_size`² patches).
- Qwen3-VL and Qwen3.5 (`qwen3_vl.py`, `qwen3_5.py`): LayerNorm blocks, an ungated MLP
  (linear_fc1/linear_fc2) with biases, a Conv3d with bias, learned position embeddings
  (`num_position_embeddings`); the merger, plus one more per `deepstack_visual_indexes` entry
  (Qwen3-VL only; its LayerNorm spans the merged width).
- MiniMax-M3 (`vllm/models/minimax_m3/common/vision_tower.py`): LayerNorm blocks, qkv/out and
  fc1/fc2 with biases, a Conv3d patch embedding without bias (kept in float32: counted here in
  the model dtype, 3 MB short at its size), pre and post LayerNorms; the projector (vision ->
  `projector_hidden_size` -> text width) and the patch merger (`spatial_merge_size`² text-wide
  features -> `projector_hidden_size` -> text width), with biases.
- Inkling (`vllm/models/inkling/common/towers.py`): its audio and HMLP vision towers
  (`calculators.inkling.tower_parameters`).
- DeepEncoder (Unlimited-OCR: `deepencoder.py`, `deepseek_ocr.py`): vLLM builds SAM-ViT-B
  (`build_sam_vit_b`: 12 LayerNorm blocks of 768 with biases, relative positions per head of 64
  over 14-wide windows or, in blocks 2/5/8/11, the 64-wide grid; a 64 x 64 position table; the
  bias-free neck and the two stride-2 convolutions to 1024 channels) and CLIP-L (24 blocks of
  1024 with biases, 257 positions, a pre-LayerNorm, no post-LayerNorm) whatever vision_config
  says, then the linear projector of `projector_config` and two n_embed view tokens.
- Perception Encoder (Step5's VL wrapper, vLLM 0.34.0 `models/step5/nvidia/vl.py` on
  `step3p7.py` and `step_vl.py`'s `PerceptionEncoder`): a bias-free patch convolution, learned
  positions over the image's patch grid, LayerNorm blocks with biases on qkv/out and fc1/fc2
  (width x `mlp_ratio`) and two layer-scale vectors, a pre-LayerNorm, two stride-2 convolutions
  with biases to 4 x width, and `vit_large_projector` (4 x width -> text width, a bias only
  with `projector_bias`); PerceptionEncoderConfig's defaults where the config leaves a key out.
- SigLIP2 NaFlex (LFM2-VL: `lfm2_siglip2.py`, `lfm2_vl.py`): a patch embedding that is a linear
  map with a bias, `num_patches` learned positions, LayerNorm blocks with biases, a post
  LayerNorm; the projector over `downsample_factor`² unshuffled patches (a LayerNorm with
  `projector_use_layernorm`, then two linear maps through `projector_hidden_size`, biases with
  `projector_bias`); Siglip2VisionConfig's and Lfm2VlConfig's defaults where a key is left out.
- Pixtral (Mistral Small 3.x, Magistral, Mistral Large 3: `pixtral.py`, `mistral3.py`): RMSNorm
  blocks, q/k/v/o and a gated MLP without biases; the projector (RMSNorm, the patch merger, two
  linear maps into the text width).

A vision config of another family is counted as a generic ViT (attention with biases, an ungated
MLP, two LayerNorms per block, a linear projector into the text width), and the plan says so.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.inkling import tower_parameters
from infermeter.calculators.model_arch import VisionEncoder


@dataclass(frozen=True)
class VisionCount:
    """A vision tower's parameters, the family its layout was read as, and whether that family
    was recognised (False: counted as a generic ViT)."""

    params: int
    family: str
    recognised: bool
    encoder: VisionEncoder | None = None


# The wrapper's model_type (or the vision config's own) → the layout its vision tower has.
_VISION_FAMILIES = {
    "qwen2_5_vl": "qwen2_5_vl",
    "qwen2_vl": "qwen2_vl",
    "qwen3_vl": "qwen3_vl",
    "qwen3_vl_moe": "qwen3_vl",
    "qwen3_5": "qwen3_5",
    "qwen3_5_moe": "qwen3_5",
    # Qwen4-Exp's wrapper is Qwen3.5's (vllm/models/qwen4_exp: Qwen3_5ForConditionalGeneration).
    "qwen4_exp": "qwen3_5",
    "mistral3": "pixtral",
    "pixtral": "pixtral",
    "minimax_m3_vl": "minimax_m3_vl",
    "inkling_mm_model": "inkling_mm_model",
    "llava": "pixtral",
    "step5_vl": "perception_encoder",
    # LFM2-VL (lfm2_vl.py builds a SigLIP2 NaFlex tower only); early checkpoints spell it lfm2-vl.
    "lfm2_vl": "siglip2_naflex",
    "lfm2-vl": "siglip2_naflex",
    # Unlimited-OCR's wrapper (vLLM's UnlimitedOCRForCausalLM is DeepseekOCRForCausalLM's).
    "unlimited-ocr": "deepencoder",
}
# transformers' Qwen3-VL vision defaults (Qwen3VLVisionConfig) for keys a config may leave out.
_QWEN3_VL_DEEPSTACK = (8, 16, 24)
_QWEN3_VL_POSITIONS = 2304
# The max_pixels of Qwen2-VL's and Qwen2.5-VL's preprocessor_config.json (Qwen2VLImageProcessor's
# own default is 28 x 28 x 1280): the largest image vLLM's profiling run encodes
# (`get_image_size_with_most_features`, calculators.mm_profile), 16,384 tokens, as the logs'
# "budget of 16384 tokens, and profiled with 1 image items" lines confirm (2B 0.10.2, 7B 0.8.2).
# A --mm-processor-kwargs max_pixels is not read.
_QWEN2_VL_MAX_PIXELS = 12845056


def _layers(vision: Mapping[str, Any], where: str) -> int:
    if "depth" in vision:
        return int_field(vision, "depth", where)
    return int_field(vision, "num_hidden_layers", where)


def _layernorm_block(dim: int, inner: int) -> int:
    """A vision block of two LayerNorms, qkv and proj, and an ungated MLP of width `inner`, all
    with biases (Qwen2-VL's fc1/fc2, Qwen3-VL's linear_fc1/linear_fc2)."""
    return (
        4 * dim  # norm1, norm2 (LayerNorm: weight and bias)
        + dim * 3 * dim + 3 * dim  # qkv with bias
        + dim * dim + dim  # proj with bias
        + dim * inner + inner + inner * dim + dim  # the MLP's two linear maps with biases
    )  # fmt: skip


def _patch_embed(vision: Mapping[str, Any], width: int, where: str) -> int:
    """The bias-free Conv3d patch embedding of the Qwen2-VL and Qwen2.5-VL towers."""
    channels = optional_int(vision, "in_channels", where, 0) or optional_int(
        vision, "in_chans", where, 3
    )
    patch = int_field(vision, "patch_size", where)
    temporal = optional_int(vision, "temporal_patch_size", where, 2)
    return channels * temporal * patch * patch * width


def _qwen2_5_vl(vision: Mapping[str, Any], text_hidden: int, where: str) -> int:
    hidden = int_field(vision, "hidden_size", where)
    inner = int_field(vision, "intermediate_size", where)
    merge = optional_int(vision, "spatial_merge_size", where, 2)
    out = optional_int(vision, "out_hidden_size", where, 0) or text_hidden
    block = (
        2 * hidden  # norm1, norm2 (RMSNorm)
        + hidden * 3 * hidden + 3 * hidden  # qkv with bias
        + hidden * hidden + hidden  # proj with bias
        + hidden * 2 * inner + 2 * inner  # gate_up with bias
        + inner * hidden + hidden  # down with bias
    )  # fmt: skip
    merged = hidden * merge * merge
    merger = hidden + merged * merged + merged + merged * out + out
    return _layers(vision, where) * block + _patch_embed(vision, hidden, where) + merger


def _qwen2_vl(vision: Mapping[str, Any], text_hidden: int, where: str) -> int:
    dim = int_field(vision, "embed_dim", where)
    ratio = vision.get("mlp_ratio", 4)
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or ratio <= 0:
        raise ConfigError(f"{where}mlp_ratio: expected a positive number, got {ratio!r}")
    inner = int(dim * ratio)  # Qwen2VisionBlock: mlp_hidden_dim = int(dim * mlp_ratio)
    merge = optional_int(vision, "spatial_merge_size", where, 2)
    out = optional_int(vision, "hidden_size", where, 0) or text_hidden
    merged = dim * merge * merge
    merger = 2 * dim + merged * merged + merged + merged * out + out
    blocks = _layers(vision, where) * _layernorm_block(dim, inner)
    return blocks + _patch_embed(vision, dim, where) + merger


def _qwen_vl_encoder(vision: Mapping[str, Any], text_hidden: int, family: str) -> VisionEncoder:
    """Qwen2-VL's or Qwen2.5-VL's tower as the profiling run's encoder pass sees it (the fields
    are checked by the parameter counts above)."""
    where = "vision_config."
    gated = family == "qwen2_5_vl"
    if gated:
        width = int_field(vision, "hidden_size", where)
        mlp_width = int_field(vision, "intermediate_size", where)
        out = optional_int(vision, "out_hidden_size", where, 0) or text_hidden
    else:
        width = int_field(vision, "embed_dim", where)
        mlp_width = int(width * vision.get("mlp_ratio", 4))
        out = optional_int(vision, "hidden_size", where, 0) or text_hidden
    merge = optional_int(vision, "spatial_merge_size", where, 2)
    patch = int_field(vision, "patch_size", where)
    return VisionEncoder(
        family=family,
        width=width,
        mlp_width=mlp_width,
        gated_mlp=gated,
        pixel_values_per_patch=_patch_embed(vision, 1, where),
        patches_per_token=merge * merge,
        max_tokens_per_item=_QWEN2_VL_MAX_PIXELS // (patch * merge) ** 2,
        out_width=out,
    )


def _qwen3_vl(vision: Mapping[str, Any], text_hidden: int, where: str, deepstack: bool) -> int:
    hidden = int_field(vision, "hidden_size", where)
    inner = int_field(vision, "intermediate_size", where)
    merge = optional_int(vision, "spatial_merge_size", where, 2)
    out = optional_int(vision, "out_hidden_size", where, 0) or text_hidden
    block = _layernorm_block(hidden, inner)  # linear_fc1, linear_fc2
    channels = optional_int(vision, "in_channels", where, 3)
    patch = int_field(vision, "patch_size", where)
    temporal = optional_int(vision, "temporal_patch_size", where, 2)
    patch_embed = channels * temporal * patch * patch * hidden + hidden
    positions = optional_int(vision, "num_position_embeddings", where, _QWEN3_VL_POSITIONS)
    merged = hidden * merge * merge
    linear = merged * merged + merged + merged * out + out
    merger = 2 * hidden + linear
    indexes = vision.get("deepstack_visual_indexes", list(_QWEN3_VL_DEEPSTACK)) if deepstack else []
    if not isinstance(indexes, list):
        raise ConfigError(f"{where}deepstack_visual_indexes: expected a list of layer indices")
    deepstack_mergers = len(indexes) * (2 * merged + linear)
    return (
        _layers(vision, where) * block
        + patch_embed
        + positions * hidden
        + merger
        + deepstack_mergers
    )


def _pixtral(
    vision: Mapping[str, Any], wrapper: Mapping[str, Any], text_hidden: int, where: str
) -> int:
    hidden = int_field(vision, "hidden_size", where)
    inner = int_field(vision, "intermediate_size", where)
    block = 2 * hidden + 4 * hidden * hidden + 3 * hidden * inner
    channels = optional_int(vision, "num_channels", where, 3)
    patch = int_field(vision, "patch_size", where)
    patch_conv = channels * patch * patch * hidden + hidden  # and ln_pre
    merge = optional_int(wrapper, "spatial_merge_size", "", 2)
    bias = text_hidden if wrapper.get("multimodal_projector_bias") else 0
    projector = (
        hidden  # norm
        + hidden * merge * merge * hidden  # patch_merger.merging_layer
        + hidden * text_hidden + bias  # linear_1
        + text_hidden * text_hidden + bias  # linear_2
    )  # fmt: skip
    return _layers(vision, where) * block + patch_conv + projector


# transformers' MiniMaxM3VLVisionConfig defaults for keys a config may leave out.
_MINIMAX_M3_VISION = {
    "hidden_size": 1280, "intermediate_size": 5120, "num_hidden_layers": 32, "num_channels": 3,
    "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2,
}  # fmt: skip


def _minimax_m3_vl(
    vision: Mapping[str, Any], wrapper: Mapping[str, Any], text_hidden: int, where: str
) -> int:
    shape = {
        key: optional_int(vision, key, where, value) for key, value in _MINIMAX_M3_VISION.items()
    }
    hidden, inner = shape["hidden_size"], shape["intermediate_size"]
    block = 4 * hidden * hidden + 2 * hidden * inner + 9 * hidden + inner
    patch = shape["num_channels"] * shape["temporal_patch_size"] * shape["patch_size"] ** 2
    mid = optional_int(wrapper, "projector_hidden_size", "", 0) or text_hidden
    merged = text_hidden * shape["spatial_merge_size"] ** 2
    projector = hidden * mid + mid + mid * text_hidden + text_hidden
    merger = merged * mid + mid + mid * text_hidden + text_hidden
    return shape["num_hidden_layers"] * block + patch * hidden + 4 * hidden + projector + merger


# Other spellings of the generic ViT's fields (Kimi K2.5's MoonViT: vt_*).
_GENERIC_ALIASES = {
    "hidden_size": ("vt_hidden_size",),
    "intermediate_size": ("vt_intermediate_size",),
    "num_hidden_layers": ("vt_num_hidden_layers", "depth"),
}


def _generic_fields(vision: Mapping[str, Any]) -> dict[str, Any] | None:
    """The generic ViT's three fields under any spelling, None when one is missing."""
    found = {}
    for name, aliases in _GENERIC_ALIASES.items():
        for key in (name, *aliases):
            if isinstance(vision.get(key), int) and not isinstance(vision.get(key), bool):
                found[name] = vision[key]
                break
        else:
            return None
    return found


def _generic_vit(vision: Mapping[str, Any], text_hidden: int, where: str) -> int:
    hidden = int_field(vision, "hidden_size", where)
    inner = int_field(vision, "intermediate_size", where)
    block = 4 * (hidden * hidden + hidden) + 2 * hidden * inner + inner + hidden + 4 * hidden
    return _layers(vision, where) * block + hidden * text_hidden + text_hidden


def _vit_blocks(width: int, blocks: int) -> int:
    """`blocks` pre-norm ViT blocks of `width`: two LayerNorms, qkv and out projections and a
    4x MLP, each with biases."""
    return blocks * (4 * width + 3 * width * width + 3 * width + width * width + width
                     + 8 * width * width + 5 * width)  # fmt: skip


def _deepencoder(wrapper: Mapping[str, Any]) -> int:
    """SAM-ViT-B and CLIP-L as vLLM builds them for DeepSeek-OCR's layout, the projector and
    the newline and view-separator vectors."""
    sam, clip = 768, 1024
    sam_params = 3 * sam * 16 * 16 + sam + 64 * 64 * sam + _vit_blocks(sam, 12)
    sam_params += 2 * 64 * (8 * (2 * 14 - 1) + 4 * (2 * 64 - 1))  # relative positions
    sam_params += sam * 256 + 256 * 256 * 9 + 4 * 256 + 256 * 512 * 9 + 512 * 1024 * 9
    clip_params = clip + 3 * clip * 14 * 14 + 257 * clip + 2 * clip + _vit_blocks(clip, 24)
    where = "projector_config."
    projector = wrapper.get("projector_config")
    if not isinstance(projector, Mapping) or projector.get("projector_type") != "linear":
        raise ConfigError(
            f"{where}projector_type: only DeepSeek-OCR's 'linear' projector is modelled"
        )
    n_embed = int_field(projector, "n_embed", where)
    linear = int_field(projector, "input_dim", where) * n_embed + n_embed
    return sam_params + clip_params + linear + 2 * n_embed


# PerceptionEncoderConfig's defaults (vLLM 0.34.0 transformers_utils/configs/step5.py).
_PERCEPTION_DEFAULTS: dict[str, Any] = {
    "patch_size": 14, "width": 1536, "layers": 47, "mlp_ratio": 8960 / 1536,
    "ls_init_value": 0.1, "image_size": 728, "use_abs_posemb": True, "use_cls_token": False,
    "use_ln_pre": True, "use_ln_post": False,
}  # fmt: skip


def _perception_encoder(
    raw: Mapping[str, Any], wrapper: Mapping[str, Any], text_hidden: int, where: str
) -> int:
    """Step5's vision tower and projector, as `PerceptionEncoder` and step3p7.py build them."""
    vision = {**_PERCEPTION_DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}
    width, patch = int_field(vision, "width", where), int_field(vision, "patch_size", where)
    hidden = int(width * float(vision["mlp_ratio"]))
    block = 4 * width + 3 * width * width + 3 * width + width * width + width
    block += 2 * width * hidden + hidden + width
    block += 2 * width if vision["ls_init_value"] is not None else 0
    grid = int_field(vision, "image_size", where) // patch
    params = 3 * width * patch * patch + int_field(vision, "layers", where) * block
    params += 2 * width * (bool(vision["use_ln_pre"]) + bool(vision["use_ln_post"]))
    params += width * (bool(vision["use_cls_token"]) + grid * grid) * bool(vision["use_abs_posemb"])
    params += 2 * width * width * 9 + 2 * width + 8 * width * width * 9 + 4 * width
    projector_bias = text_hidden if wrapper.get("projector_bias") else 0
    return params + 4 * width * text_hidden + projector_bias


# Siglip2VisionConfig's and Lfm2VlConfig's defaults (transformers 5.24.0).
_SIGLIP2_DEFAULTS: dict[str, Any] = {
    "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_channels": 3,
    "patch_size": 16, "num_patches": 256,
}  # fmt: skip
_LFM2_VL_DEFAULTS: dict[str, Any] = {
    "projector_hidden_size": 2560, "projector_bias": True, "projector_use_layernorm": True,
    "downsample_factor": 2,
}  # fmt: skip


def _siglip2_naflex(
    raw: Mapping[str, Any], wrapper: Mapping[str, Any], text_hidden: int, where: str
) -> int:
    """LFM2-VL's SigLIP2 NaFlex tower (every layer, the post LayerNorm) and its projector."""
    vision = {**_SIGLIP2_DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}
    outer = {**_LFM2_VL_DEFAULTS, **{k: v for k, v in wrapper.items() if v is not None}}
    width = int_field(vision, "hidden_size", where)
    patch = int_field(vision, "patch_size", where)
    tower = int_field(vision, "num_channels", where) * patch * patch * width + width
    tower += int_field(vision, "num_patches", where) * width + 2 * width
    tower += _layers(vision, where) * _layernorm_block(
        width, int_field(vision, "intermediate_size", where)
    )
    unshuffled = width * int_field(outer, "downsample_factor", "") ** 2
    hidden = int_field(outer, "projector_hidden_size", "")
    projector = unshuffled * hidden + hidden * text_hidden
    projector += (hidden + text_hidden) * bool(outer["projector_bias"])
    return tower + projector + 2 * unshuffled * bool(outer["projector_use_layernorm"])


def vision_family(wrapper_type: str, vision_type: str) -> str | None:
    """The layout a wrapper's vision tower has, None when no family above is recognised."""
    return _VISION_FAMILIES.get(wrapper_type) or _VISION_FAMILIES.get(vision_type)


def count_vision(
    wrapper: Mapping[str, Any], vision: Mapping[str, Any], text_hidden: int
) -> VisionCount:
    """The parameters of the vision tower and projector `wrapper` declares in `vision`."""
    where = "vision_config."
    family = vision_family(str(wrapper.get("model_type", "")), str(vision.get("model_type", "")))
    if family == "qwen2_5_vl":
        params = _qwen2_5_vl(vision, text_hidden, where)
        return VisionCount(params, family, True, _qwen_vl_encoder(vision, text_hidden, family))
    if family == "qwen2_vl":
        params = _qwen2_vl(vision, text_hidden, where)
        return VisionCount(params, family, True, _qwen_vl_encoder(vision, text_hidden, family))
    if family in ("qwen3_vl", "qwen3_5"):
        params = _qwen3_vl(vision, text_hidden, where, deepstack=family == "qwen3_vl")
        return VisionCount(params, family, True)
    if family == "pixtral":
        return VisionCount(_pixtral(vision, wrapper, text_hidden, where), family, True)
    if family == "inkling_mm_model":
        return VisionCount(tower_parameters(wrapper), family, True)
    if family == "perception_encoder":
        return VisionCount(_perception_encoder(vision, wrapper, text_hidden, where), family, True)
    if family == "deepencoder":
        return VisionCount(_deepencoder(wrapper), family, True)
    if family == "siglip2_naflex":
        return VisionCount(_siglip2_naflex(vision, wrapper, text_hidden, where), family, True)
    if family == "minimax_m3_vl":
        return VisionCount(_minimax_m3_vl(vision, wrapper, text_hidden, where), family, True)
    generic = _generic_fields(vision)
    if generic is None:
        return VisionCount(0, "unread", False)
    return VisionCount(_generic_vit(generic, text_hidden, where), "generic ViT", False)
