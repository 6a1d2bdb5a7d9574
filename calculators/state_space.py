"""Attention-free state-space language models: Mamba (`mamba`), Falcon-Mamba (`falcon_mamba`)
and Mamba-2 (`mamba2`).

As vLLM 0.29 builds them (vllm/model_executor/models/mamba.py, mamba2.py), every decoder layer
is one RMSNorm and one mixer (`MambaMixer` or `MambaMixer2`): no attention, no MLP, so the
config's `intermediate_size` is the mixer's inner width. They hold no KV cache: each layer's
`MambaSpec` page is one sequence's state (the convolution window and the SSM state, shaped by
`mamba_utils.MambaStateShapeCalculator.mamba1_state_shape` / `mamba2_state_shape`, in the model
dtype unless `mamba_ssm_cache_dtype` says otherwise), and a request takes one page per layer
(`MambaSpec.max_memory_usage_bytes` with prefix caching off). The mixers' weights and states are
those of `calculators.mixers` (Mamba) and `calculators.mamba2` (Mamba-2).
"""

from infermeter.calculators.mamba2 import MAMBA2
from infermeter.calculators.mixers import MAMBA

# Model type → the kind of every layer.
ATTENTION_FREE_TYPES = {"mamba": MAMBA, "falcon_mamba": MAMBA, "mamba2": MAMBA2}


def attention_free_kinds(model_type: str, num_layers: int) -> tuple[str, ...]:
    """Every layer's kind in an attention-free model of `model_type`."""
    return (ATTENTION_FREE_TYPES[model_type],) * num_layers
