"""`infermeter calc vram|fit` with vLLM's data and expert parallel options and the CUDA-graph
estimate flag (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS): each reaches the plan, the plan's
`gpus`, `expert_parallel_size` and `deployment_max_concurrency` show in the table and in
--json, --concurrency is the whole deployment's (each replica holds ceil(C / DP)), and a bad
value is a one-line usage error naming the option."""

from typing import Any

import pytest
from cli_helpers import invoke, json_output, one_line_error

MOE = ["--model", "qwen3-30b-a3b", "--gpu", "l40s", "-tp", "2", "--max-model-len", "16384"]


def _plan(*extra: str) -> dict[str, Any]:
    plan = json_output("calc", "vram", *MOE, *extra)["vllm_plan"]
    assert isinstance(plan, dict)
    return plan


def test_calc_vram_data_parallel_multiplies_gpus_and_concurrency() -> None:
    single, replicated = _plan(), _plan("--data-parallel-size", "3")
    assert (single["gpus"], replicated["gpus"]) == (2, 6)
    assert replicated["data_parallel_size"] == 3
    assert single["deployment_max_concurrency"] == single["max_concurrency"]
    assert replicated["deployment_max_concurrency"] == pytest.approx(
        3 * replicated["max_concurrency"], abs=1e-3
    )
    # the routed experts are sliced over TP x DP ranks: less weight per GPU, more KV cache
    assert replicated["weights_bytes"] < single["weights_bytes"]
    assert replicated["kv_cache_bytes"] > single["kv_cache_bytes"]


def test_calc_vram_expert_parallel_spreads_over_tp_x_dp() -> None:
    assert _plan("-dp", "2")["expert_parallel_size"] == 1
    assert _plan("-dp", "2", "--enable-expert-parallel")["expert_parallel_size"] == 4
    assert _plan("--enable-expert-parallel")["expert_parallel_size"] == 2


def test_calc_vram_expert_parallel_on_a_dense_model_is_a_note() -> None:
    args = ["--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm", "--enable-expert-parallel"]
    plan = json_output("calc", "vram", *args)["vllm_plan"]
    assert (
        "enable_expert_parallel changes nothing: the model has no routed experts" in plan["notes"]
    )


def test_calc_vram_cudagraph_estimate_flag_takes_the_graphs_off_the_kv_budget() -> None:
    off = _plan("--memory-profiler-estimate-cudagraphs", "0")
    on = _plan("--memory-profiler-estimate-cudagraphs", "1")
    assert (off["cuda_graph_in_budget"], on["cuda_graph_in_budget"]) == (False, True)
    assert on["cuda_graph_bytes"] > 0
    assert off["kv_cache_bytes"] - on["kv_cache_bytes"] == on["cuda_graph_bytes"]
    # unset: the release's default (on from 0.20)
    assert _plan("--vllm-version", "0.19")["cuda_graph_in_budget"] is False
    assert _plan("--vllm-version", "0.20")["cuda_graph_in_budget"] is True
    assert (
        _plan("--vllm-version", "0.20", "--memory-profiler-estimate-cudagraphs", "0")[
            "cuda_graph_in_budget"
        ]
        is False
    )


def test_calc_vram_table_shows_gpus_expert_parallel_and_deployment_concurrency() -> None:
    extra = ["-dp", "2", "--enable-expert-parallel", "--memory-profiler-estimate-cudagraphs", "1"]
    plan = _plan(*extra)
    result = invoke("calc", "vram", *MOE, *extra)
    assert result.exit_code == 0, result.output
    assert "4 (tensor 2 x pipeline 1 x data 2; expert parallel 4)" in result.output
    assert f"{plan['deployment_max_concurrency']:.2f}x in all" in result.output
    assert "(in the KV budget)" in result.output
    assert "all-to-all buffers  0.00 GiB (allgather_reducescatter)" in result.output


def test_calc_vram_concurrency_is_the_deployments_and_the_table_says_so() -> None:
    args = ["calc", "vram", *MOE, "-dp", "2", "--concurrency", "5", "--context", "4096"]
    payload = json_output(*args)
    assert (payload["concurrency"], payload["concurrency_per_replica"]) == (5, 3)
    assert payload["throughput_bound"]["batch"] == 5
    assert payload["throughput_bound"]["data_parallel_size"] == 2
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "for 3 x 4,096 tokens per replica (5 in all)" in result.output
    assert "at 5 concurrent in all" in result.output


def test_calc_fit_data_parallel_pays_for_every_replica() -> None:
    args = ["calc", "fit", "--model", "qwen3-30b-a3b", "--context", "8192", "--gpu", "h100-sxm"]
    one = json_output(*args)["options"][0]
    two = json_output(*args, "-dp", "2", "--enable-expert-parallel")["options"][0]
    assert one["fits"]
    assert two["fits"]
    assert (one["gpus"], two["gpus"]) == (one["gpu_count"], 2 * two["gpu_count"])
    assert two["usd_per_hour"] == pytest.approx(two["usd_per_gpu_hour"] * two["gpus"])
    assert two["deployment_max_concurrency"] == pytest.approx(2 * two["max_concurrency"], abs=1e-3)
    table = invoke(*args, "-dp", "2")
    assert table.exit_code == 0, table.output
    header, row = table.output.splitlines()[:2]
    assert header.split()[:3] == ["GPU", "count", "GPUs"]
    assert row.split()[:3] == ["h100-sxm", str(two["gpu_count"]), str(two["gpus"])]


@pytest.mark.parametrize(
    ("command", "extra", "named"),
    [
        ("vram", ["--data-parallel-size", "0"], "'--data-parallel-size' / '-dp'"),
        ("vram", ["-dp", "two"], "'--data-parallel-size' / '-dp'"),
        ("vram", ["--memory-profiler-estimate-cudagraphs", "2"], "--memory-profiler-estimate"),
        ("vram", ["--memory-profiler-estimate-cudagraphs", "yes"], "--memory-profiler-estimate"),
        ("vram", ["-tp", "4", "-dp", "100000"], "data_parallel_size"),
        ("vram", ["--enable-expert-parallel=2"], "--enable-expert-parallel"),
        ("fit", ["--data-parallel-size", "-1"], "'--data-parallel-size' / '-dp'"),
        ("fit", ["--memory-profiler-estimate-cudagraphs", "on"], "--memory-profiler-estimate"),
        ("fit", ["--all2all-backend", "pplx"], "'--all2all-backend'"),
    ],
    ids=lambda value: value if isinstance(value, str) else " ".join(value),
)
def test_calc_parallel_options_bad_values_are_one_line_usage_errors(
    command: str, extra: list[str], named: str
) -> None:
    base = MOE if command == "vram" else ["--model", "qwen3-30b-a3b", "--context", "8192"]
    assert named in one_line_error(invoke("calc", command, *base, *extra), exit_code=2)
