"""The extra projection matrices vLLM builds for DeepSeek's multi-head latent attention (MLA) after
loading a checkpoint, per vLLM release, on one rank.

vLLM's loader calls every MLA layer's `process_weights_after_loading` right after the quantization
methods' own post-processing (`process_weights_after_loading` in
vllm/model_executor/model_loader/utils.py at 3d333269ca2218f2ec4c19d2bfd738f555be3000, "Currently
only used by MLA"; loader.py before the split). That is inside the window vLLM measures as the
weights ("Model loading took" in V1, "model weights take" in V0), so what the layer keeps counts as
weights; temporaries it frees (the identity-matrix dequantization's inputs) do not.

What a layer keeps, with n = attention heads / TP, L = kv_lora_rank, P = qk_nope_head_dim,
V = v_head_dim, R = qk_rope_head_dim, H = hidden_size and Q = q_lora_rank (H without one):

- **0.7.1 to 0.7.3 (V0, matrix absorption)**: `VLLM_MLA_PERFORM_MATRIX_ABSORPTION`, on by default,
  materialises W_Q_UK (Q x n x L) and W_UV_O (n x L x H) in the model dtype (requantized to FP8 for
  FP8 checkpoints), a contiguous W_QR (Q x n x R, always the model dtype) and, for a quantized
  kv_b_proj, its dequantized copy (L x n x (P + V)) whose views W_UK / W_UV it keeps
  (vllm/attention/backends/mla/utils.py at 04644e3fa19b95a17225e36062920e67eabb4ab3). The
  absorption came with vllm-project/vllm#12528 (merged 2025-01-31, after 0.7.0, so 0.7.0 has none
  of it) and went with #14770 ("MLA get rid of materialization", opened 2025-03-13), which the 0.8
  releases carry. The plan reads this fact to the minor release (the held-out V0 logs are planned
  as 0.7), so 0.7.0 is planned like 0.7.1 and the plan marks its weights as an estimate.
- **0.8 on (V0 and V1)**: no absorbed product. W_UK_T and W_UV are views of kv_b_proj's weight when
  it is unquantized (no extra memory: an unquantized BF16 checkpoint keeps no copy); for a quantized
  kv_b_proj vLLM keeps its dequantized BF16/FP16 copy, L x n x (P + V) ("we just store fp16/bf16
  copies", vllm/v1/attention/backends/mla/common.py at 37fa5c0940ef6770b265fe3a99581fec91f9cf2d;
  V0's vllm/attention/backends/mla/common.py at 027f6a3d0dae52d1ae0c4ede933db0bfe73f1e17 the same).
  ROCm's AITER FP8/FP4 batched-matmul paths quantize those copies instead; they are not modelled.
"""

from dataclasses import dataclass

from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.quantization import WeightFormat, unquantized_share

ABSORPTION_SINCE = (0, 7)  # vllm-project/vllm#12528, first released in 0.7.1
ABSORPTION_UNTIL = (0, 8)  # vllm-project/vllm#14770 removed it


@dataclass(frozen=True)
class MlaCopies:
    """The MLA copies one rank keeps, all its layers together."""

    bytes: int
    absorbed: bool  # the release materialises W_Q_UK and W_UV_O
    estimated: bool  # the release range is wider than the source pins (0.7.0 planned as 0.7.1)


def mla_copies(
    arch: ModelArch, fmt: WeightFormat, version: tuple[int, int], tensor_parallel_size: int = 1
) -> MlaCopies:
    """Bytes of the matrices vLLM `version` keeps beside an MLA checkpoint's weights on one
    rank under `tensor_parallel_size`-way tensor parallelism (none for a model without MLA)."""
    mla = arch.mla
    # Mistral Large 4 (0.34 on) builds kv_b_proj with quant_config=None: views, no copy.
    if mla is None or version < ABSORPTION_SINCE or arch.mistral_large4 is not None:
        return MlaCopies(0, absorbed=False, estimated=False)
    heads = arch.num_attention_heads // tensor_parallel_size
    model_dtype = fmt.unquantized_bytes_per_param
    quantized = (
        1 - unquantized_share(arch, fmt, "attention") if "attention" in fmt.quantized_roles else 0.0
    )
    latent = mla.kv_lora_rank
    kv_b_copy = latent * heads * (mla.qk_nope_head_dim + mla.v_head_dim) * model_dtype * quantized
    per_layer = kv_b_copy
    absorbed = version < ABSORPTION_UNTIL
    if absorbed:
        query_in = mla.q_lora_rank or arch.hidden_size
        # FP8 checkpoints requantize the two products to FP8 (VLLM_MLA_DISABLE_REQUANTIZATION off).
        product_bytes: float = model_dtype
        if fmt.method == "fp8":
            product_bytes = quantized * fmt.bytes_per_param + (1 - quantized) * model_dtype
        products = (query_in * heads * latent + heads * latent * arch.hidden_size) * product_bytes
        rope_query = query_in * heads * mla.qk_rope_head_dim * model_dtype
        per_layer += products + rope_query
    return MlaCopies(round(per_layer * arch.num_layers), absorbed=absorbed, estimated=absorbed)
