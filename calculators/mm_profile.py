"""The profiling run's multimodal encoder pass: how large a dummy batch vLLM encodes at startup
and the activation peak it leaves on the KV budget.

Where it comes from in vLLM's own code (the PyPI sdists):
  - `GPUModelRunner.profile_run` (vllm/v1/worker/gpu_model_runner.py, 0.8.2 and 0.10.2) first
    encodes a dummy batch of the modality with the most tokens per item
    (`get_multimodal_embeddings`), keeps the outputs in the encoder cache and the batched inputs
    (pixel values) in a local, then runs the decoder's dummy pass and the sampler (0.29.0 still
    does). vLLM takes the allocator's peak over the whole run, so the encoder's pass counts when
    it is the larger. The V2 runner (read in 0.34.0: v1/worker/gpu/mm/encoder_runner.py
    `profile_encoder_cache` -> `execute_mm_encoder`) batches the pixel values inside the pass,
    so only the outputs stay through the decoder's.
  - The batch: the encoder budget is max(max_num_batched_tokens, the most tokens one item has)
    (v1/core/encoder_cache_manager.py `compute_encoder_budget` in 0.8.2,
    `compute_mm_encoder_budget` in 0.10.2); 0.8.x encodes cdiv(budget, tokens per item) items,
    from 0.10 `MultiModalBudget.get_max_items` (v1/worker/utils.py) encodes
    max(1, budget // tokens per item), each capped by max_num_seqs x one item per prompt.
  - The largest item: Qwen2-VL's and Qwen2.5-VL's `get_image_size_with_most_features` take the
    image processor's `max_pixels`, 12,845,056 in the checkpoints' preprocessor_config.json, so
    an image of 65,536 patches of 14 x 14, 16,384 tokens after the 2 x 2 merge
    (`calculators.vision`).
  - The tower's peak (`qwen2_vl.py`, `qwen2_5_vl.py`): the pixel values stay on the GPU in
    float32 through the run; in a block the residual, the norm's output (held by the caller
    while the attention runs) and the fused qkv stay alive while q, k and v are copied
    contiguous and the rotary embedding runs. The rotary step differs per release:
      - 0.8.2 and 0.10.2 rotate q and k one at a time in float32 (`apply_rotary_pos_emb_vision`:
        a float32 copy, a float32 output, the cast back): 1 + 1 + 3 + 3 + 2 + 2 + 1 = 13 widths;
      - 0.11.0 and 0.11.1 rotate q and k concatenated, in float32:
        1 + 1 + 3 + 3 + 2 (the concatenation) + 4 + 4 + 2 = 20 widths;
      - 0.22.0 on (read in 0.22.0 and 0.34.0) q, k and v stay views of qkv, the concatenation is
        rotated in the model dtype by `ApplyRotaryEmb` (enable_fp32_compute off), and the
        attention output and its contiguous copy follow: 1 + 1 + 3 + 2 + 2 + 1 + 1 = 11 widths.
    Releases not read (0.9, 0.12-0.21) take the count of the last read release before them.
    The MLP holds the residual, the norm's output and two of its widths (ungated: fc1 and the
    activation; gated: the activated gate, up and their product, three).
"""

from dataclasses import dataclass

from infermeter.calculators.model_arch import VisionEncoder

FLOAT32_BYTES = 4
# The rotary step's peak in hidden widths of the tower (see above), by the first release it holds.
ATTENTION_PEAK_WIDTHS = (((0, 0), 13), ((0, 11), 20), ((0, 22), 11))
# 0.8.x rounds the number of dummy items up, later releases down (see above).
ITEMS_ROUNDED_DOWN_SINCE = (0, 10)


@dataclass(frozen=True)
class EncoderProfile:
    """The dummy batch the profiling run encodes and what it costs on one rank."""

    items: int
    patches: int
    peak_bytes: int  # the encoder pass's own peak, above the weights
    held_bytes: int  # what stays allocated while the decoder's dummy pass runs


def dummy_items(encoder: VisionEncoder, version: tuple[int, int], batched: int, seqs: int) -> int:
    """How many largest items the profiling run encodes (`MultiModalBudget`, see above)."""
    tokens = encoder.max_tokens_per_item
    budget = max(batched, tokens)
    if version >= ITEMS_ROUNDED_DOWN_SINCE:
        return max(1, min(budget // tokens, seqs))
    return min(-(-budget // tokens), seqs)


def attention_peak_widths(version: tuple[int, int]) -> int:
    """The vision attention's peak in hidden widths for `version` (see above)."""
    widths = ATTENTION_PEAK_WIDTHS[0][1]
    for since, count in ATTENTION_PEAK_WIDTHS:
        if version >= since:
            widths = count
    return widths


def encoder_profile(
    encoder: VisionEncoder,
    version: tuple[int, int],
    batched: int,
    seqs: int,
    tp: int,
    dtype_bytes: int,
    pixels_held: bool = True,
) -> EncoderProfile:
    """The profiling run's encoder pass on one rank: the tensor-parallel tower splits its MLP,
    while qkv is all-gathered before the split (`split_qkv`), so the attention is counted whole.
    `pixels_held`: False for the V2 runner, whose pixel values are freed after the pass."""
    items = dummy_items(encoder, version, batched, seqs)
    patches = items * encoder.max_tokens_per_item * encoder.patches_per_token
    mlp_widths = (3 if encoder.gated_mlp else 2) * encoder.mlp_width / (encoder.width * tp)
    widths = max(attention_peak_widths(version), 2 + mlp_widths)
    pixels = patches * encoder.pixel_values_per_patch * FLOAT32_BYTES
    outputs = items * encoder.max_tokens_per_item * encoder.out_width * dtype_bytes
    peak = int(patches * encoder.width * dtype_bytes * widths) + pixels
    return EncoderProfile(items, patches, peak, (pixels if pixels_held else 0) + outputs)
