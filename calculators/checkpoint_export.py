"""The checkpoint a result at a weight format ran, for the predictor's fit (`registry.perf_cases`)
and the answer's estimate (`calculators.answer_estimate`) alike.

The catalog holds one checkpoint per model, and vLLM serves it only in its own format or one its
quantization_config's method lets it be overridden to (`quantization.weight_format` refuses the
rest, as vLLM does: `calc vram` of the catalog's checkpoint keeps refusing them). A result stated
in such a format (DeepSeek-R1 fp4, nvfp4 or mxfp4 beside the catalog's FP8 checkpoint) ran
another checkpoint of the same architecture, exported in that format (NVIDIA's FP4 export, AMD's
MXFP4 one): it is planned as that architecture with no quantization_config of its own, and the
format as the `--quantization` it is served with.
"""

from dataclasses import replace

from infermeter.calculators.errors import QuantizationError
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.quantization import weight_format


def checkpoint_run(arch: ModelArch, quantization: str | None) -> ModelArch:
    """The architecture as the checkpoint a result at `quantization` ran: `arch` itself where
    the catalog's checkpoint serves that format, else the same architecture as a checkpoint in
    that format (an export: a new `ModelArch`, so `planned is not arch` tells them apart)."""
    try:
        weight_format(arch, quantization)
    except QuantizationError:
        return replace(arch, quantization_config=None)
    return arch


def export_note(native: str, quantization: str) -> str:
    """What an estimate planned on an export in `quantization` says of its weights (a label is
    a claim); `native`: the precision the catalog's checkpoint ships in."""
    return (
        f"planned as this architecture exported in {quantization} (a checkpoint of its own, as "
        f"the results at this precision ran), not the catalog's {native} checkpoint, which vLLM "
        f"does not serve as --quantization {quantization}"
    )
