"""Which quantization methods vLLM serves on a GPU: a label is a claim, so the calculators refuse
a weight format on a GPU whose vLLM refuses it, in vLLM's words.

vLLM refuses a method at startup in two places (read in the PyPI sdists 0.7.3, 0.8.5, 0.9.0,
0.9.2, 0.10.0, 0.10.1.1, 0.10.2, 0.11.0-0.14.0, 0.16.0-0.23.0, 0.25.0-0.28.0 and 0.34.0):

- On ROCm, `ModelConfig._verify_quantization` (vllm/config/model.py from 0.11; vllm/config.py,
  then vllm/config/__init__.py, before)
  calls `Platform.verify_quantization` (vllm/platforms/interface.py), which refuses a method
  outside the platform's `supported_quantization` list (vllm/platforms/rocm.py): "{method}
  quantization is currently not supported in rocm." ROCm lists neither ModelOpt method before
  0.20.0: modelopt_fp4 (NVFP4) is listed from 0.20.0, modelopt (FP8) from 0.21.0 (ROCM_SINCE).
  Every other method `--quantization` takes is listed wherever the calculators plan it (mxfp4
  from 0.10.1, when the method came), except awq_marlin and gptq_marlin before 0.14.0 (listed
  from 0.14.0): there an explicit --quantization awq_marlin or gptq_marlin is refused on ROCm,
  in words that depend on the checkpoint (an AWQ one's is the quant_method mismatch, as the
  Marlin override does not apply off CUDA), not modelled here: left allowed. A checkpoint's own
  awq or gptq is served as such.
- On CUDA, `VllmConfig._get_quantization_config` (vllm/config/vllm.py in 0.19; vllm/config.py,
  then vllm/config/__init__.py, in 0.7-0.11) compares the GPU's
  compute capability with the method's `QuantizationConfig.get_min_capability()`: "The
  quantization method {method} is not supported for the current GPU. Minimum capability: {min}.
  Current capability: {current}." (MIN_CAPABILITY, as read in 0.19.0; ModelOpt FP8's 89 became
  80 in 0.27.0, MODELOPT_FP8_80_SINCE). A ROCm GPU passes it: vLLM reads gfx942 (MI300X,
  MI325X) as 9.4 and gfx950 (MI350X, MI355X) as 9.5, above every minimum here.

A GPU of unknown vendor or capability (`--gpu-memory-gib`, a catalog entry without one) is
refused nothing. The calculators' own `int8` and `none` are no vLLM method: refused nothing.
compressed-tensors is served on ROCm and from capability 7.0 as a whole; which of its schemes
(NVFP4's W4A4 among them) has a kernel there is decided inside it, not read here: allowed.
"""

from infermeter.calculators.errors import QuantizationError
from infermeter.calculators.gpu_traits import GpuTraits
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.quantization import modelopt_algo

# The first release whose ROCm `supported_quantization` lists the method (see the docstring).
ROCM_SINCE = {"modelopt_fp4": (0, 20), "modelopt": (0, 21)}
# `get_min_capability()` of each method's QuantizationConfig in vLLM 0.19.0
# (vllm/model_executor/layers/quantization/*.py), as major * 10 + minor.
MIN_CAPABILITY = {
    "awq": 75,
    "awq_marlin": 75,
    "gptq": 60,
    "gptq_marlin": 75,
    "fp8": 75,
    "fbgemm_fp8": 80,
    "mxfp4": 80,
    "modelopt": 89,
    "modelopt_fp4": 75,
    "compressed-tensors": 70,
}
# ModelOptFp8Config.get_min_capability() returns 80 from 0.27.0 (89 in 0.26.0 and before).
MODELOPT_FP8_80_SINCE = (0, 27)


def vllm_method(arch: ModelArch, quantization: str | None) -> str | None:
    """The quantization method vLLM loads the checkpoint with: `--quantization` or the
    checkpoint's quant_method, a ModelOpt one resolved as vLLM's ModelOpt configs'
    override_quantization_method resolve it (FP4 → modelopt_fp4, FP8 → modelopt; `nvfp4` is
    0.8.5's name of modelopt_fp4); None: unquantized."""
    config = arch.quantization_config or {}
    name = (quantization or str(config.get("quant_method") or "")).lower()
    if name in ("", "none"):
        return None
    if name in ("nvfp4", "modelopt_fp4"):
        return "modelopt_fp4"
    if name == "modelopt":
        return "modelopt_fp4" if "FP4" in modelopt_algo(config) else "modelopt"
    return name


def refusal(method: str | None, gpu: GpuTraits, release: tuple[int, ...]) -> str | None:
    """vLLM's refusal of `method` on `gpu` at `release`, in its words; None where it serves it
    (or the sources read do not settle it: see the module docstring)."""
    if method is None:
        return None
    if gpu.rocm:
        since = ROCM_SINCE.get(method)
        if since is None or release >= since:
            return None
        return f"{method} quantization is currently not supported in rocm."
    least = MIN_CAPABILITY.get(method)
    if method == "modelopt" and release >= MODELOPT_FP8_80_SINCE:
        least = 80
    if gpu.compute_capability is None or least is None:
        return None
    current = gpu.compute_capability[0] * 10 + gpu.compute_capability[1]
    if current >= least:
        return None
    return (
        f"The quantization method {method} is not supported for the current GPU. Minimum "
        f"capability: {least}. Current capability: {current}."
    )


def check_served(
    arch: ModelArch, quantization: str | None, gpu: GpuTraits, release: tuple[int, ...]
) -> None:
    """Refuse, as vLLM does at startup, a GPU whose vLLM `release` does not serve the weights:
    the message names `--quantization` where it was given, else `--gpu`."""
    reason = served_reason(arch, quantization, gpu, release)
    if reason is None:
        return
    field = "quantization" if quantization else "gpu"
    raise QuantizationError(f"{field}: {reason}")


def served_reason(
    arch: ModelArch, quantization: str | None, gpu: GpuTraits, release: tuple[int, ...]
) -> str | None:
    """Why vLLM `release` does not serve the weights on `gpu` (None: it does), naming the GPU,
    the release and the option that chose the method."""
    method = vllm_method(arch, quantization)
    refused = refusal(method, gpu, release)
    if refused is None:
        return None
    label = ".".join(map(str, release[:2]))
    chosen = (
        f"--quantization {quantization}" if quantization else f"the checkpoint's {method} weights"
    )
    where = gpu.name or ("ROCm" if gpu.rocm else "this GPU")
    return f"vLLM {label} does not serve {chosen} on the {where} (--gpu): '{refused}'"
