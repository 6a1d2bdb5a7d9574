"""The physics check's compute bound and its margin, on the registry's own H100 Llama-3.1-8B
FP8 figure; unknown weight formats are bounded, never skipped."""

from pathlib import Path

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.roofline import output_tokens_per_second_per_gpu_bound
from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.checks.physics import (
    COMPUTE_MARGIN,
    decode_context_tokens,
    physics_findings,
)
from infermeter.registry.models import Result
from infermeter.registry.store import read_result

REPOSITORY = Path(__file__).resolve().parents[2]
RESULTS = REPOSITORY / "registry/results/h100-sxm/llama-3.1-8b-instruct"
# The reported 128-in / 2048-out FP8 figure (found by content: a migration renames files).
H100_8B_FP8 = next(
    path
    for path in sorted(RESULTS.glob("*.json"))
    if read_result(path).identity.workload.input_len.model_dump(exclude_none=True)
    == {"kind": "fixed", "value": 128}
)
DECODE = REPOSITORY / "tests/examples/invalid/results/decode-faster-than-memory-bandwidth.json"
GPUS, MODELS = load_gpus(), load_models()


def _with(result: Result, rate: float | None = None, quantization: str | None = None) -> Result:
    update: dict[str, object] = {}
    if rate is not None:
        point = result.points[0]
        throughput = point.throughput.model_copy(update={"output_tokens_per_s": rate})
        update["points"] = [point.model_copy(update={"throughput": throughput})]
    if quantization is not None:
        model = result.identity.model.model_copy(update={"quantization": quantization})
        update["identity"] = result.identity.model_copy(update={"model": model})
    return result.model_copy(update=update)


def _physics(result: Result) -> list[str]:
    gpu = GPUS[result.identity.gpu.id]
    model = MODELS[result.identity.model.id]
    return [f"{f.path}: {f.message}" for f in physics_findings("f.json", result, gpu, model)]


def _bound(result: Result) -> float:
    arch = parse_config(MODELS[result.identity.model.id].config)
    tflops = GPUS["h100-sxm"].tflops_dense.fp8
    assert tflops is not None
    context = decode_context_tokens(result)
    bound = output_tokens_per_second_per_gpu_bound(arch, tflops, context_tokens=context)
    return bound.tokens_per_second_per_gpu


def test_physics_registry_figure_is_well_inside_the_compute_bound() -> None:
    result = read_result(H100_8B_FP8)
    assert decode_context_tokens(result) == 128 + 2047 // 2
    assert 0.15 < result.points[0].throughput.output_tokens_per_s / _bound(result) < 0.2
    assert _physics(result) == []


@pytest.mark.parametrize(("factor", "fails"), [(1.2, False), (1.3, True)])
def test_physics_compute_margin_is_one_and_a_quarter(factor: float, fails: bool) -> None:
    # Mutation-proof: a margin doubled to 2.5 lets 1.3× through; halved, 1.2× fails.
    result = read_result(H100_8B_FP8)
    findings = _physics(_with(result, rate=factor * _bound(result)))
    assert bool(findings) is fails, findings
    assert COMPUTE_MARGIN == 1.25


def test_physics_ten_times_the_registry_figure_fails() -> None:
    result = read_result(H100_8B_FP8)
    (finding,) = _physics(_with(result, rate=10 * result.points[0].throughput.output_tokens_per_s))
    assert finding.startswith("points[0].throughput.output_tokens_per_s: 211094 output tok/s")


@pytest.mark.parametrize("quantization", ["magicq", "fp3", "bitnet"])
def test_physics_unknown_quantization_is_bounded_not_skipped(quantization: str) -> None:
    result = read_result(H100_8B_FP8)
    ten_times = _with(result, 10 * result.points[0].throughput.output_tokens_per_s, quantization)
    (finding,) = _physics(ten_times)
    assert "its weight format is unknown" in finding
    assert _physics(_with(result, quantization=quantization)) == []  # an honest figure passes


def test_physics_unknown_quantization_gets_the_most_generous_decode_bound() -> None:
    result = read_result(DECODE)  # 500 tok/s per stream in bf16: 2.2× the bound
    unknown = _with(result, quantization="magicq")
    # Bounded as the most compact known format (4-bit, group scales): 500 tok/s is allowed …
    assert not [f for f in _physics(unknown) if "tpot_ms" in f]
    point = unknown.points[0]
    fast = point.model_copy(update={"tpot_ms": point.tpot_ms.model_copy(update={"mean": 0.2})})
    # … but 5,000 tok/s per stream is above any format's bound.
    findings = _physics(unknown.model_copy(update={"points": [fast, *unknown.points[1:]]}))
    assert any("points[0].tpot_ms.mean: decode 5000 tok/s" in f for f in findings), findings


def test_physics_unreadable_catalog_config_is_a_finding_for_every_result() -> None:
    # The config is parsed once per catalog entry: the second result still gets the finding.
    result = read_result(H100_8B_FP8)
    model = MODELS[result.identity.model.id]
    unreadable = model.model_copy(update={"config": {"model_type": "llama"}})
    gpu = GPUS[result.identity.gpu.id]
    first, second = (physics_findings(name, result, gpu, unreadable) for name in ("a", "b"))
    assert [(f.file, f.path) for f in (*first, *second)] == [
        ("a", "identity.model.id"),
        ("b", "identity.model.id"),
    ]
    message = first[0].message
    assert message.startswith("the calculators cannot read the catalog config of llama-3.1-8b")
    assert "hidden_size" in message
    assert second[0].message == message


@pytest.mark.parametrize("quantization", ["nvfp4", "mxfp4"])
def test_physics_bounds_an_fp4_export_of_an_fp8_checkpoint_by_the_export(quantization: str) -> None:
    # DeepSeek-R1's catalog checkpoint is FP8 and vLLM serves it in no 4-bit format: a result
    # at nvfp4 or mxfp4 ran an export (calculators.checkpoint_export). Its decode was bounded in
    # the most compact format the FP8 checkpoint takes, FP8 itself, a byte a weight: the same
    # bound as an FP8 run's, so a 4-bit run could be refused for decoding as fast as 4 bits let.
    result = read_result(DECODE)
    point = result.points[0]
    instant = point.model_copy(update={"tpot_ms": point.tpot_ms.model_copy(update={"mean": 0.01})})
    gpu = result.identity.gpu.model_copy(update={"id": "b200", "count": 8})
    serving = result.identity.serving.model_copy(update={"tensor_parallel_size": 8})

    def limit(precision: str) -> float:
        model = result.identity.model.model_copy(
            update={"id": "deepseek-r1", "quantization": precision, "dtype": None}
        )
        identity = result.identity.model_copy(
            update={"model": model, "gpu": gpu, "serving": serving}
        )
        edited = result.model_copy(update={"identity": identity, "points": [instant]})
        (finding,) = [f for f in _physics(edited) if f.startswith("points[0].tpot_ms.mean")]
        return float(finding.split("memory-bandwidth bound ")[1].split(" ")[0].replace(",", ""))

    assert limit(quantization) > 1.3 * limit("fp8")
