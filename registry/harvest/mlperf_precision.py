"""The weight precision an MLPerf submission ran, read from the submission itself.

`weight_data_types` in the results table is what the submitter declared; in v4.1 NVIDIA-stack
and Dell's MI300X submissions declared `fp16`, the *starting* weights, and quantized them before
the run: their measurement files say `"weight_transformations": "quantization, affine fusion"`.
So a declared 16-bit precision is taken as run only when the measurement file states no
quantization. Otherwise the format comes from the submission's own code:

- TensorRT-LLM configurations (`closed/<submitter>/configs/<benchmark>/<scenario>/__init__.py`)
  that set `use_fp8 = True` (NVIDIA's harness quantizes with `--qformat fp8`);
- a README in `closed/<submitter>/code/<benchmark>/` that quantizes with Quark's
  `w_fp8_a_fp8_o_fp8` scheme (Dell's MI300X vLLM submission).

A row quantized to a format none of these states is skipped: its precision is unknown.

One submission states a transformation only in its README: RedHat's v4.1 L40S vLLM run declares
`fp16` and `weight_transformations: none`, yet `closed/RedHat/code/<benchmark>/README.md`
converts the model to FP8 with AutoFP8 before deploying it (and serves two copies of Llama 2 70B
on 4 × 48 GB, which 138 GB of FP16 weights cannot fit): FP8, with that evidence noted.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

from infermeter.registry.harvest.errors import RowSkipped
from infermeter.registry.harvest.mlperf_location import results_folder, submission_root
from infermeter.registry.harvest.mlperf_names import benchmark_family, parse_engine, precision
from infermeter.registry.harvest.reported import Precision
from infermeter.registry.harvest.tree import SourceTree

_SIXTEEN_BIT = ("fp16", "float16", "bf16", "bfloat16")
_UNQUANTIZED = (*_SIXTEEN_BIT, "fp32", "float32")
"""Declared formats that may name only the starting weights (v6.0's qwen3-vl rows declare
fp32 and quantize: their measurement files say so and name an NVFP4 checkpoint)."""
_FP8_CONFIG = re.compile(r"^\s*use_fp8\s*=\s*True\b", re.M)
_QUARK_FP8 = re.compile(r"--quant_scheme\s+w_fp8_a_fp8_o_fp8\b")
_CHECKPOINT_FORMAT = re.compile(r"[-_]NVFP4[-_)]")
_SERVED_MODEL = re.compile(r"^model_params:\n  name: (?P<name>\S+)$", re.M)
"""The endpoints harness's `config.yaml` naming the model it served."""
"""A checkpoint name that states NVIDIA's FP4 format (`…-NVFP4-MLPerf-…`)."""
_FP8_CONVERSION = re.compile(r"\bconvert the [\w.-]+ model to FP8\b")
_AUTOFP8 = re.compile(r"\bAutoFP8\b")
"""A README that converts the model to FP8 with the AutoFP8 library before serving it."""


@dataclass(frozen=True)
class Evidence:
    """The files of one row that say what precision ran (path → text; None: absent)."""

    measurements: dict[str, str | None]
    """The row's measurement JSON files (`weight_transformations`)."""
    code: dict[str, str | None]
    """The submission's configurations and READMEs for the row's benchmark."""


def measurement_folder(row: dict[str, Any]) -> str:
    """Where the row's measurement files are: its results folder under `measurements/`."""
    return results_folder(row).replace("/results/", "/measurements/", 1)


def results_measurement(row: dict[str, Any]) -> str:
    """The `measurements.json` a later round keeps in the row's results folder itself."""
    return f"{results_folder(row)}/measurements.json"


def code_paths(row: dict[str, Any]) -> list[str]:
    """The configuration and README files that could state the row's quantization."""
    root, benchmark = submission_root(row), str(row["Model"])
    family = benchmark_family(benchmark)
    scenario = str(row["Scenario"])
    return [
        f"{root}/configs/{family}/{scenario}/__init__.py",
        f"{root}/configs/{family}/__init__.py",
        f"{root}/code/{benchmark}/README.md",
        f"{root}/code/{family}/README.md",
        endpoints_config(row),
    ]


def endpoints_config(row: dict[str, Any]) -> str:
    """The `config.yaml` the endpoints harness keeps in the row's results folder (v6.1): its
    `model_params.name` is the checkpoint the run served."""
    return results_measurement(row).removesuffix("measurements.json") + "config.yaml"


def _transformations(evidence: Evidence) -> str | None:
    for text in evidence.measurements.values():
        if text is None:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("weight_transformations"), str):
            return str(data["weight_transformations"])
    return None


def _checkpoint_format(evidence: Evidence) -> tuple[str, str] | None:
    """(format, the file that states it) where the measurement file's starting weights are a
    checkpoint whose name states its format (v6.0's NVIDIA-stack Qwen3-VL rows declare fp32 and
    start from `nvidia/Qwen3-VL-235B-A22B-Instruct-NVFP4-MLPerf-Inference-Closed-V6.0`)."""
    for path, text in evidence.measurements.items():
        try:
            data = json.loads(text or "")
        except ValueError:
            continue
        name = data.get("starting_weights_filename") if isinstance(data, dict) else None
        match = _CHECKPOINT_FORMAT.search(name) if isinstance(name, str) else None
        if match:
            where = f"{path} starts from the checkpoint '{name}', whose name states NVFP4"
            return "nvfp4", where
    return None


def _served_format(evidence: Evidence) -> tuple[str, str] | None:
    """(format, the file that states it) where the endpoints harness's `config.yaml` serves a
    checkpoint whose name states its format (v6.1's NVIDIA-stack Qwen3-VL rows declare bf16
    and serve `nvidia/Qwen3-VL-235B-A22B-Instruct-NVFP4-MLPerf-Inference-Closed-V6.1-FP8-KV`)."""
    for path, text in evidence.code.items():
        served = _SERVED_MODEL.search(text) if path.endswith("/config.yaml") and text else None
        if served and _CHECKPOINT_FORMAT.search(served.group("name")):
            name = served.group("name")
            return "nvfp4", f"{path} (the endpoints harness's) serves '{name}', named NVFP4"
    return None


def _quantized_format(evidence: Evidence, tensorrt_llm: bool) -> tuple[str, str] | None:
    """(format, the file that states it) from the submission's code: the TensorRT-LLM
    harness's configurations for a TensorRT-LLM row, the READMEs for any other."""
    for path, text in evidence.code.items():
        if text is None:
            continue
        if tensorrt_llm and path.endswith("__init__.py") and _FP8_CONFIG.search(text):
            return "fp8", f"{path} sets use_fp8 = True"
        if not tensorrt_llm and path.endswith("README.md") and _QUARK_FP8.search(text):
            return "fp8", f"{path} quantizes with Quark's w_fp8_a_fp8_o_fp8"
    return None


def ran_precision(row: dict[str, Any], evidence: Evidence) -> tuple[Precision, str | None]:
    """The precision that ran, and the evidence when it is not the declared
    one (None: as declared). Raises RowSkipped when the weights were quantized to a format the
    submission does not state."""
    if row.get("weight_data_types") is None:
        return _undeclared_precision(row, evidence)
    declared = str(row.get("weight_data_types", "")).strip()
    if declares_tensor_dtypes(row):
        return _checkpoint_precision(declared, evidence)
    if not declares_sixteen_bit(row):
        return precision(declared), None
    transformations = _transformations(evidence)
    served = _served_format(evidence) if transformations is None else None
    if served is not None:
        note = (
            f"weight_data_types {declared} names the starting weights: no measurement file was "
            f"read, and {served[1]}; stored as {served[0]}."
        )
        return Precision(quantization=served[0]), note
    if transformations is None or "quantiz" not in transformations.lower():
        return _readme_conversion(declared, transformations, evidence)
    engine = parse_engine(str(row.get("Software", "")))
    found = _quantized_format(evidence, engine is not None and engine[0] == "tensorrt-llm")
    found = found or _checkpoint_format(evidence)
    if found is None:
        raise RowSkipped(
            f"weights declared {declared} were transformed ('{transformations}') to a format "
            "the submission's configurations, READMEs and starting checkpoint do not state"
        )
    fmt, where = found
    note = (
        f"weight_data_types {declared} names the starting weights: the measurement file says "
        f"weight_transformations '{transformations}', and {where}; stored as {fmt}."
    )
    return Precision(quantization=fmt), note


def _readme_conversion(
    declared: str, transformations: str | None, evidence: Evidence
) -> tuple[Precision, str | None]:
    """The declared precision, unless a README of the submission converts the model to FP8
    with AutoFP8 before serving it (then FP8, and the note saying why)."""
    for path, text in evidence.code.items():
        if not path.endswith("README.md") or text is None:
            continue
        if _FP8_CONVERSION.search(text) and _AUTOFP8.search(text):
            note = (
                f"weight_data_types {declared} (weight_transformations "
                f"'{transformations}') names the starting weights: {path} converts the model "
                "to FP8 with AutoFP8 before deploying it; stored as fp8."
            )
            return Precision(quantization="fp8"), note
    return precision(declared), None


def _undeclared_precision(row: dict[str, Any], evidence: Evidence) -> tuple[Precision, str]:
    """A row read without its results table (`mlperf_systems`) declares no weight format: the
    format is the one the submission's configurations or READMEs state, else it is unknown."""
    engine = parse_engine(str(row.get("Software", "")))
    found = _quantized_format(evidence, engine is not None and engine[0] == "tensorrt-llm")
    if found is None:
        raise RowSkipped(
            "no weight format is declared (the round's results table is not read) and the "
            "submission's configurations and READMEs state none"
        )
    fmt, where = found
    note = f"No weight format is declared in what was read; {where}: stored as {fmt}."
    return Precision(quantization=fmt), note


def asks_for_evidence(row: dict[str, Any]) -> bool:
    """Whether the row's precision is read from the submission's files: it declares 16- or
    32-bit weights, a list of tensor dtypes, or none at all."""
    return (
        row.get("weight_data_types") is None
        or declares_sixteen_bit(row)
        or declares_tensor_dtypes(row)
    )


def declares_tensor_dtypes(row: dict[str, Any]) -> bool:
    """Whether `weight_data_types` lists the checkpoint's tensor dtypes rather than naming a
    format (Nebius's v6.0 Qwen3-VL rows: `BF16/F32/F8_E4M3/U8`)."""
    return "/" in str(row.get("weight_data_types") or "")


def _checkpoint_precision(declared: str, evidence: Evidence) -> tuple[Precision, str]:
    """The format the starting checkpoint's name states, for a row whose declared weights are
    a list of tensor dtypes; RowSkipped where the name states none."""
    found = _checkpoint_format(evidence)
    if found is None:
        raise RowSkipped(
            f"weight_data_types {declared!r} lists tensor dtypes, not a format, and the "
            "starting checkpoint's name states none"
        )
    fmt, where = found
    note = (
        f"weight_data_types {declared} lists the checkpoint's tensor dtypes, not a format: "
        f"{where}; stored as {fmt}."
    )
    return Precision(quantization=fmt), note


def declares_sixteen_bit(row: dict[str, Any]) -> bool:
    """Whether the row declares 16- or 32-bit weights (which may be the starting weights
    only)."""
    return str(row.get("weight_data_types", "")).strip().lower() in _UNQUANTIZED


def read_evidence(tree: SourceTree, rows: list[dict[str, Any]]) -> list[Evidence | None]:
    """The evidence files of each row that declares 16-bit weights (None for the others),
    read in one go."""
    asking = [row for row in rows if asks_for_evidence(row)]
    folders = sorted({measurement_folder(row) for row in asking})
    listed = tree.files_under(folders) if folders else []
    by_folder: dict[str, list[str]] = {}
    for path in listed:
        if path.endswith(".json"):
            by_folder.setdefault(path.rsplit("/", 1)[0], []).append(path)
    wanted = sorted(
        {path for row in asking for path in by_folder.get(measurement_folder(row), [])}
        | {path for row in asking for path in code_paths(row)}
        | {results_measurement(row) for row in asking}
    )
    texts = tree.read_many(wanted)
    evidence: list[Evidence | None] = []
    for row in rows:
        if not asks_for_evidence(row):
            evidence.append(None)
            continue
        measured = [*by_folder.get(measurement_folder(row), []), results_measurement(row)]
        evidence.append(
            Evidence(
                {path: texts[path] for path in measured},
                {path: texts.get(path) for path in code_paths(row)},
            )
        )
    return evidence
