"""The one calculator layer (calculators/api.py) and its two skins: `infermeter calc … --json`
and the calculator pages' `calc_api.compute` (as the browser runs it) give the same payload,
because both build one request and call the same function."""

import dataclasses
import html
import json
import re
from pathlib import Path
from typing import Any

import calc_api
import calc_compute
import calc_html
import pytest
from cli_helpers import invoke, json_output
from registry_pages import browser_catalog

from infermeter.calculators import api, inputs
from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.inputs import ENGINE
from infermeter.registry.catalog import load_gpus, load_models, load_prices
from infermeter.registry.lookup import cheapest_prices
from infermeter.registry.prices import dated


def _page_catalog() -> dict[str, Any]:
    """The catalog data the pages get as catalog.json (`registry_pages.browser_catalog`)."""
    prices = list(load_prices().values())
    gpus = load_gpus()
    cheapest = {gpu_id: cheapest_prices(gpu_id, prices) for gpu_id in gpus}
    return json.loads(json.dumps(browser_catalog(gpus, load_models(), cheapest)))


CATALOG = _page_catalog()


def page_vram_plan(config: Path, **query: str) -> dict[str, Any]:
    """The vLLM plan the memory page (as the browser runs it) gives for the config file at
    `config` and the page's other inputs, as JSON gives it back."""
    page = calc_compute.compute("vram", {"config": config.read_text(), **query}, CATALOG)
    plan = json.loads(json.dumps(page["payload"]))["vllm_plan"]
    assert isinstance(plan, dict)
    return plan


def _page(kind: str, query: dict[str, str]) -> dict[str, Any]:
    result = calc_compute.compute(kind, query, CATALOG)
    assert "payload" in result, result
    payload = json.loads(json.dumps(result["payload"]))
    assert isinstance(payload, dict)
    return payload


def pasted_config_plan(path: Path, gpu: str, **options: str) -> dict[str, Any]:
    """The vLLM plan `calc vram` makes of the config.json at `path`, which the calculator page
    makes the same of the file pasted (the test fails otherwise); `options`: page query names."""
    flags = [f"--{key.replace('_', '-')}={value}" for key, value in options.items()]
    cli = json_output("calc", "vram", "--model", str(path), "--gpu", gpu, *flags)
    plan: dict[str, Any] = cli["vllm_plan"]
    assert page_vram_plan(path, gpu=gpu, **options) == plan
    return plan


@pytest.mark.parametrize(
    "request_type", [api.VramRequest, api.CostRequest, api.FitRequest, api.EngineRequest]
)
def test_request_fields_have_no_defaults_so_no_skin_drops_one(request_type: type) -> None:
    for field in dataclasses.fields(request_type):
        assert field.default is dataclasses.MISSING, field.name
    with pytest.raises(TypeError):
        request_type()


def _cost_request(**changes: Any) -> api.CostRequest:
    values: dict[str, Any] = {
        "gpu": None,
        "tier": "on_demand",
        "price_per_hour": 2.0,
        "interruptible_price_per_hour": None,
        "reserved_price_per_hour": None,
        "serverless_price_per_hour": None,
        "tokens_per_second": 1000.0,
        "accepted_tokens_per_second": None,
        "gpu_count": 1,
        "utilization": 1.0,
        "retry_rate": 0.0,
        "overhead_per_hour": 0.0,
        "api_price_per_million": None,
        "monthly_tokens": None,
        "scale_to_zero": False,
        "tokens_per_second_basis": None,
        "tokens_per_second_gpu": None,
        "tokens_per_second_gpu_count": None,
    }
    values.update(changes)
    return api.CostRequest(**values)


def test_cost_counts_the_retry_rate() -> None:
    plain = api.cost(_cost_request(), None)
    retried = api.cost(_cost_request(retry_rate=0.5), None)
    # half the requests are retries: each useful token costs twice as much
    assert retried["effective_usd_per_million_tokens"] == pytest.approx(
        2 * plain["effective_usd_per_million_tokens"]
    )


def test_cost_without_price_or_gpu_names_the_field() -> None:
    with pytest.raises(CalculatorError, match=r"^price_per_hour: required"):
        api.cost(_cost_request(price_per_hour=None), None)
    with pytest.raises(CalculatorError, match="no on_demand price for mi300x"):
        api.cost(_cost_request(price_per_hour=None, gpu="mi300x"), {})


def test_fit_refuses_an_unknown_ranking() -> None:
    request = api.FitRequest(
        model="m",
        arch=parse_config(CATALOG["models"]["llama-3.1-8b-instruct"]["config"]),
        context=1024,
        concurrency=1,
        engine=api.EngineRequest.from_fields(
            dict.fromkeys(field.name for field in ENGINE)
            | {"enforce_eager": False, "enable_expert_parallel": False}
        ),
        tier="on_demand",
        rank_by="cheapest",
    )
    with pytest.raises(CalculatorError, match=r"^rank_by: expected price or price-per-gb"):
        api.fit(request, [])


def test_cli_and_page_vram_payloads_are_the_same() -> None:
    cli = json_output(
        "calc", "vram", "--model", "llama-3.1-70b-instruct", "--gpu", "h100-sxm", "-tp", "2",
        "--max-model-len", "16384", "--kv-cache-dtype", "fp8", "--concurrency", "4",
    )  # fmt: skip
    page = _page(
        "vram",
        {
            "model": "llama-3.1-70b-instruct",
            "gpu": "h100-sxm",
            "tensor_parallel_size": "2",
            "max_model_len": "16384",
            "kv_cache_dtype": "fp8",
            "concurrency": "4",
        },
    )
    assert page == cli


def test_cli_and_page_cost_payloads_are_the_same_with_catalog_prices_and_retries() -> None:
    cli = json_output(
        "calc", "cost", "--gpu", "h100-sxm", "--tokens-per-second", "2800",
        "--utilization", "0.6", "--retry-rate", "0.05", "--overhead-per-hour", "1.5",
    )  # fmt: skip
    page = _page(
        "cost",
        {
            "gpu": "h100-sxm",
            "tokens_per_second": "2800",
            "utilization": "0.6",
            "retry_rate": "0.05",
            "overhead_per_hour": "1.5",
        },
    )
    assert page == cli
    assert cli["prices"]["price_per_hour"] is not None  # the catalog price was used


def test_cli_and_page_fit_payloads_are_the_same() -> None:
    cli = json_output(
        "calc", "fit", "--model", "qwen2.5-7b-instruct", "--context", "8192",
        "--concurrency", "8", "--gpu", "l4", "--gpu", "a100-80gb-sxm", "--rank-by", "price-per-gb",
    )  # fmt: skip
    page = _page(
        "fit",
        {
            "model": "qwen2.5-7b-instruct",
            "context": "8192",
            "concurrency": "8",
            "gpu": "l4,a100-80gb-sxm",
            "rank_by": "price-per-gb",
        },
    )
    assert page == cli


@pytest.mark.parametrize("kind", ["vram", "cost", "fit", "perf"])
def test_page_fields_and_cli_options_are_the_same_set(kind: str) -> None:
    from infermeter.bench.cli.calc import calc_group

    command = calc_group.commands[kind]
    options = {
        option.removeprefix("--").replace("-", "_")
        for param in command.params
        for option in param.opts
        if option.startswith("--")
    }
    fields = {field.name for field in inputs.FIELDS[kind]}
    # the page pastes a config.json where the CLI takes its path as --model; --json is the page;
    # --from-perf reads a `calc perf --json` file (the page has the perf calculator beside it)
    assert fields - {"config"} == options - {"json", "from_perf"}
    assert {"data_parallel_size", "enable_expert_parallel"} <= fields or kind in ("cost", "perf")


def test_cli_and_page_vram_payloads_are_the_same_with_data_and_expert_parallelism() -> None:
    cli = json_output(
        "calc", "vram", "--model", "qwen3-30b-a3b", "--gpu", "l40s", "-tp", "2",
        "--data-parallel-size", "2", "--enable-expert-parallel",
        "--memory-profiler-estimate-cudagraphs", "1", "--max-model-len", "16384",
        "--all2all-backend", "deepep_low_latency",
    )  # fmt: skip
    page = _page(
        "vram",
        {
            "model": "qwen3-30b-a3b",
            "gpu": "l40s",
            "tensor_parallel_size": "2",
            "data_parallel_size": "2",
            "enable_expert_parallel": "1",
            "memory_profiler_estimate_cudagraphs": "1",
            "max_model_len": "16384",
            "all2all_backend": "deepep_low_latency",
        },
    )
    assert page == cli
    plan = cli["vllm_plan"]
    assert (plan["gpus"], plan["expert_parallel_size"], plan["cuda_graph_in_budget"]) == (
        4,
        4,
        True,
    )
    html = calc_api.render("vram", {"model": "qwen3-30b-a3b", "data_parallel_size": "2"}, CATALOG)
    assert plan["all2all_backend"] == "deepep_low_latency"
    assert plan["all2all_buffer_bytes"] > 1024**3
    assert "all2all_buffer_bytes" in plan["estimated_terms"]
    paths = ("gpus", "expert_parallel_size", "deployment_max_concurrency", "all2all_buffer_bytes")
    for path in paths:
        assert f'data-output="vllm_plan.{path}"' in html["html"], path


def test_cli_and_page_fit_payloads_are_the_same_with_data_parallelism() -> None:
    cli = json_output(
        "calc", "fit", "--model", "qwen3-30b-a3b", "--context", "8192", "--gpu", "l40s",
        "--concurrency", "8", "-dp", "2", "--enable-expert-parallel",
        "--memory-profiler-estimate-cudagraphs", "0",
    )  # fmt: skip
    page = _page(
        "fit",
        {
            "model": "qwen3-30b-a3b",
            "context": "8192",
            "concurrency": "8",
            "gpu": "l40s",
            "data_parallel_size": "2",
            "enable_expert_parallel": "1",
            "memory_profiler_estimate_cudagraphs": "0",
        },
    )
    assert page == cli
    assert cli["options"][0]["gpus"] == 2 * cli["options"][0]["gpu_count"]


@pytest.mark.parametrize(
    ("kind", "query", "field", "expected"),
    [
        ("vram", {"data_parallel_size": "0"}, "data_parallel_size", "from 1 to"),
        ("fit", {"data_parallel_size": "1.5"}, "data_parallel_size", "an integer"),
        ("vram", {"memory_profiler_estimate_cudagraphs": "2"}, "memory_profiler_", "one of 0, 1"),
        ("vram", {"tensor_parallel_size": "4", "data_parallel_size": "100000"}, "", "data_par"),
    ],
)
def test_page_parallel_fields_bad_values_name_the_field(
    kind: str, query: dict[str, str], field: str, expected: str
) -> None:
    errors = calc_compute.compute(kind, query, CATALOG)["errors"]
    assert len(errors) == 1
    ((name, message),) = errors.items()
    assert name.startswith(field), errors
    assert expected in message, errors


# An integer above the command line's range: the pages planned 2^63 requests (CLI: exit 2) and
# 400 digits raised an OverflowError ("The live calculator is unavailable").
HUGE = {"2^63": str(2**63), "400 digits": "9" * 400}
BEYOND_THE_RANGE = [
    ("vram", "context", ["--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm"]),
    ("vram", "concurrency", ["--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm"]),
    ("fit", "concurrency", ["--model", "llama-3.1-8b-instruct", "--context", "4096"]),
    ("cost", "gpu_count", ["--price-per-hour", "2", "--tokens-per-second", "100"]),
    ("perf", "output_len", ["--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm",
                            "--input-len", "100", "--concurrency", "1"]),
]  # fmt: skip


@pytest.mark.parametrize("value", HUGE.values(), ids=HUGE.keys())
@pytest.mark.parametrize(("kind", "field", "given"), BEYOND_THE_RANGE)
def test_cli_and_page_refuse_an_integer_above_the_range(
    kind: str, field: str, given: list[str], value: str
) -> None:
    option = "--" + field.replace("_", "-")
    cli = invoke("calc", kind, *given, option, value)
    assert cli.exit_code == 2, cli.output
    assert f"'{option}'" in cli.stderr
    assert "1<=x<=100000000" in cli.stderr
    query = {given[i][2:].replace("-", "_"): given[i + 1] for i in range(0, len(given), 2)}
    errors = calc_compute.compute(kind, {**query, field: value}, CATALOG)["errors"]
    assert list(errors) == [field]
    assert f"{field}: expected an integer from 1 to 100,000,000, got " in errors[field]
    assert len(errors[field]) < 120


# calc cost's inputs out of bounds: cost_report named them by its arguments (price_usd_per_hour, …),
# which the page showed apart from the field.
COST_REFUSALS = [
    ("price_per_hour", {"price_per_hour": "1e308"}, "expected a number > 0 up to 1e+15"),
    ("reserved_price_per_hour", {"reserved_price_per_hour": "1e-300"}, "expected at least 1e-09"),
    ("interruptible_price_per_hour", {"interruptible_price_per_hour": "1e16"}, "expected a"),
    ("serverless_price_per_hour", {"serverless_price_per_hour": "1e16"}, "expected a"),
    ("overhead_per_hour", {"overhead_per_hour": "1e300"}, "expected a number >= 0 up to"),
    ("monthly_tokens", {"api_price_per_million": "3"},
     "expected a number > 0 when api_price_per_million is given"),
    ("api_price_per_million", {"monthly_tokens": "1e9"},
     "expected a number > 0 when monthly_tokens is given"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("field", "query", "words"), COST_REFUSALS, ids=[case[0] for case in COST_REFUSALS]
)
def test_cli_and_page_name_the_cost_input_they_refuse(
    field: str, query: dict[str, str], words: str
) -> None:
    query = {"gpu": "h100-sxm", "tokens_per_second": "1000", **query}
    message = f"{field}: {words}"
    errors = calc_compute.compute("cost", query, CATALOG)["errors"]
    assert list(errors) == [field]
    assert errors[field].startswith(message)
    args = [part for key, value in query.items() for part in ("--" + key.replace("_", "-"), value)]
    cli = invoke("calc", "cost", *args)
    assert cli.exit_code == 2, cli.output
    assert cli.stderr.startswith(f"Error: {message}")


def test_cli_and_page_refuse_a_perf_request_longer_than_a_context_by_its_lengths() -> None:
    # Both said 'max_model_len: expected an integer from 1 to 100,000,000, got 100001000'.
    given = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "input_len": "100000000",
             "output_len": "1000", "concurrency": "1"}  # fmt: skip
    message = "input_len: input_len + output_len is 100,001,000 tokens a request; expected at most"
    errors = calc_compute.compute("perf", given, CATALOG)["errors"]
    assert list(errors) == ["input_len"]
    assert errors["input_len"].startswith(message)
    args = [part for key, value in given.items() for part in ("--" + key.replace("_", "-"), value)]
    cli = invoke("calc", "perf", *args)
    assert cli.exit_code == 2, cli.output
    assert cli.stderr.startswith(f"Error: {message}")


def test_cli_and_page_refuse_a_perf_request_longer_than_the_model_serves() -> None:
    # Both predicted a 28 s TTFT for 200,000 + 1,000 tokens of Llama 3.1 8B, whose context is
    # 131,072: vLLM refuses such a request (as `calc fit` says of such a context).
    given = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "input_len": "200000",
             "output_len": "1000", "concurrency": "1"}  # fmt: skip
    message = (
        "input_len: input_len + output_len, 201,000 tokens, is longer than the model's 131,072 "
        "(vLLM's max_model_len for its config), which vLLM refuses unless "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    )
    errors = calc_compute.compute("perf", given, CATALOG)["errors"]
    assert errors == {"input_len": message}
    args = [part for key, value in given.items() for part in ("--" + key.replace("_", "-"), value)]
    cli = invoke("calc", "perf", *args)
    assert cli.exit_code == 2, cli.output
    assert cli.stderr.strip() == f"Error: {message}"
    within = _page("perf", {**given, "input_len": "130072"})
    assert "errors" not in within


def test_cli_and_page_fit_plan_a_gpu_named_twice_once() -> None:
    # Each name was a row: 'h100-sxm' 5,000 times listed 5,000 rows in 7.8 s.
    given = ["--model", "llama-3.1-8b-instruct", "--context", "4096"]
    cli = json_output("calc", "fit", *given, *["--gpu", "h100-sxm"] * 3, "--gpu", "l4", "--json")
    query = {"model": "llama-3.1-8b-instruct", "context": "4096", "gpu": "h100-sxm,l4,h100-sxm"}
    page = _page("fit", query)
    for payload in (cli, page):
        assert sorted(option["gpu"] for option in payload["options"]) == ["h100-sxm", "l4"]


def test_cli_and_page_vram_requests_longer_than_max_model_len_do_not_fit() -> None:
    # 'fits: yes' for 1 x 100,000 tokens under max_model_len 1,024, which vLLM refuses.
    given = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "max_model_len": "1024",
             "context": "100000"}  # fmt: skip
    args = [part for key, value in given.items() for part in ("--" + key.replace("_", "-"), value)]
    for payload in (json_output("calc", "vram", *args, "--json"), _page("vram", given)):
        assert payload["fits"] is False
        assert payload["reason"].startswith(
            "requests of 100000 tokens are longer than max_model_len 1024: vLLM refuses them"
        )
    within = _page("vram", {**given, "context": "1024"})
    assert within["fits"] is True


def test_cli_and_page_graphs_larger_than_the_memory_outside_the_budget_do_not_fit() -> None:
    # 'fits yes' beside 'CUDA graphs 17.25 GiB (not in the KV budget)' and 7.91 GiB left outside
    # gpu_memory_utilization 0.9: before 0.20 (or with the estimate off) vLLM captures the graphs
    # after the KV cache holds the requested memory, and runs out of memory capturing them.
    sizes = json.dumps(list(range(1, 513)))
    given = {"model": "llama-3.1-70b-instruct", "gpu": "h100-sxm", "tensor_parallel_size": "4",
             "max_model_len": "8192", "max_num_seqs": "512", "vllm_version": "0.19",
             "memory_profiler_estimate_cudagraphs": "0",
             "compilation_config": f'{{"cudagraph_capture_sizes": {sizes}}}'}  # fmt: skip
    args = [part for key, value in given.items() for part in ("--" + key.replace("_", "-"), value)]
    for payload in (json_output("calc", "vram", *args, "--json"), _page("vram", given)):
        assert payload["fits"] is False
        assert payload["reason"] == (
            "vLLM would refuse to start: CUDA out of memory capturing CUDA graphs: they need "
            "about 17.25 GiB, more than the 7.91 GiB left outside gpu_memory_utilization (0.9), "
            "where vLLM 0.19 captures them after the KV cache is allocated. Try decreasing "
            "`gpu_memory_utilization`, capturing fewer sizes (--max-cudagraph-capture-size) or "
            "--enforce-eager."
        )
    # The same graphs inside the budget (the estimate on, 0.20's default) leave a plan that fits.
    assert _page("vram", {**given, "memory_profiler_estimate_cudagraphs": "1"})["fits"] is True


@pytest.mark.parametrize(("release", "fits"), [("0.11.0", False), ("0.11.1", True)])
def test_cli_and_page_tell_the_patch_releases_apart(release: str, fits: bool) -> None:
    # Both skins planned 0.11.0 as 0.11.1: a --compilation-config capture list above
    # max_num_batched_tokens, which 0.11.0 captures whole (its _dummy_run asserts) and 0.11.1
    # cuts; and 8 against 16 between the default sizes above 256.
    given = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "vllm_version": release,
             "max_model_len": "8192", "max_num_batched_tokens": "256",
             "compilation_config": '{"cudagraph_capture_sizes": [1, 2, 4, 8, 512]}'}  # fmt: skip
    args = [part for key, value in given.items() for part in ("--" + key.replace("_", "-"), value)]
    cli = json_output("calc", "vram", *args)
    assert cli == _page("vram", given)
    assert cli["fits"] is fits
    default = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "vllm_version": release,
               "max_num_seqs": "256"}  # fmt: skip
    graphs = _page("vram", default)["vllm_plan"]["cuda_graph_bytes"]
    eight = _page("vram", {**default, "vllm_version": "0.11.0"})["vllm_plan"]["cuda_graph_bytes"]
    assert graphs / eight == pytest.approx(1 if release == "0.11.0" else 86 / 102, rel=1e-3)


@pytest.mark.parametrize(
    ("release", "field", "value", "words"),
    [
        ("0.11.0", "max_cudagraph_capture_size", "16",
         "vLLM has --max-cudagraph-capture-size from 0.11.1, not in 0.11.0"),
        ("0.8.5", "cuda_graph_sizes", "16", "vLLM has --cuda-graph-sizes from 0.9, not in 0.8.5"),
    ],
)  # fmt: skip
def test_cli_and_page_refuse_a_capture_option_the_release_lacks(
    release: str, field: str, value: str, words: str
) -> None:
    # Both skins planned --max-cudagraph-capture-size at 0.11.0 (its argument parser has none:
    # vllm/engine/arg_utils.py, first in 0.11.1) and --cuda-graph-sizes at 0.8.5 (first in 0.9.0).
    query = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "vllm_version": release,
             field: value}  # fmt: skip
    cli = invoke("calc", "vram", *_cli_args(query))
    assert cli.exit_code == 2, cli.output
    assert f"{field}: {words}" in cli.stderr
    errors = calc_compute.compute("vram", query, CATALOG)["errors"]
    assert list(errors) == [field]
    assert errors[field].startswith(f"{field}: {words}")


@pytest.mark.parametrize(
    ("model", "release", "method", "first"),
    [("gpt-oss-20b", "0.8.5", "mxfp4", "0.10.1"), ("gpt-oss-20b", "0.10.0", "mxfp4", "0.10.1"),
     ("qwen3-30b-a3b", "0.8.5", "modelopt_fp4", "0.9")],
)  # fmt: skip
def test_cli_and_page_refuse_a_quantization_the_release_lacks(
    model: str, release: str, method: str, first: str
) -> None:
    # Both skins planned --quantization mxfp4 at 0.8.5 and 0.10.0, whose QuantizationMethods
    # (vllm/model_executor/layers/quantization/__init__.py) have no mxfp4: first in 0.10.1.
    query = {"model": model, "gpu": "h100-sxm", "vllm_version": release,
             "quantization": method, "max_model_len": "8192"}  # fmt: skip
    words = f"quantization: vLLM has --quantization {method} from {first}, not in {release}"
    cli = invoke("calc", "vram", *_cli_args(query))
    assert cli.exit_code == 2, cli.output
    assert words in cli.stderr
    assert calc_compute.compute("vram", query, CATALOG)["errors"] == {"quantization": words}
    served = {**query, "vllm_version": first}
    assert json_output("calc", "vram", *_cli_args(served)) == _page("vram", served)


def test_cli_and_page_refuse_mxfp4_of_an_fp8_checkpoint() -> None:
    # DeepSeek-R1's checkpoint states FP8 blocks; both skins planned --quantization mxfp4 of it
    # as MXFP4 experts beside 16-bit attention (4.47 GB a GPU at TP 8 where FP8 holds half),
    # which vLLM refuses: the checkpoint's quant_method (fp8) is not the one asked for.
    query = {"model": "deepseek-r1", "gpu": "b200", "tensor_parallel_size": "8",
             "quantization": "mxfp4", "max_model_len": "8192"}  # fmt: skip
    cli = invoke("calc", "vram", *_cli_args(query))
    assert cli.exit_code == 1, cli.output
    words = "quantization: the checkpoint is fp8 (its quantization_config's quant_method), and "
    assert words + "vLLM refuses --quantization mxfp4 of it" in cli.stderr
    assert calc_compute.compute("vram", query, CATALOG)["errors"]["quantization"].startswith(words)
    served = {**query, "quantization": "fp8"}
    assert json_output("calc", "vram", *_cli_args(served)) == _page("vram", served)


@pytest.mark.parametrize(
    ("kind", "query", "key", "value"),
    [("vram", {"model": "qwen3-30b-a3b", "gpu": "h100-sxm"}, "max_model_len", 40960),
     ("fit", {"model": "llama-3.1-8b-instruct", "context": "8192"}, "concurrency", 1)],
)  # fmt: skip
def test_cli_and_page_default_an_input_left_out_alike(
    kind: str, query: dict[str, str], key: str, value: int
) -> None:
    # A page opened without max_model_len planned 32768 (its form's example) where `calc vram`
    # plans the model's own context length, as vLLM does (40,960 for Qwen3-30B-A3B); without
    # concurrency the fit page planned 16 where `calc fit` plans 1.
    cli = json_output("calc", kind, *_cli_args(query))
    assert cli[key] == value
    assert _page(kind, query) == cli


def test_cli_and_page_name_the_compilation_keys_a_release_ignores() -> None:
    # 0.11.0's CompilationConfig has no max_cudagraph_capture_size: pydantic drops the key, and
    # vLLM captures its default sizes.
    base = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "vllm_version": "0.11.0",
            "max_model_len": "8192"}  # fmt: skip
    keyed = {**base, "compilation_config": '{"max_cudagraph_capture_size": 16}'}
    cli = json_output("calc", "vram", *_cli_args(keyed))
    assert cli == _page("vram", keyed)
    plain = _page("vram", base)["vllm_plan"]
    assert cli["vllm_plan"]["cuda_graph_bytes"] == plain["cuda_graph_bytes"]
    unread = "compilation_config keys the plan does not read: max_cudagraph_capture_size"
    assert unread in cli["vllm_plan"]["notes"]
    # cudagraph_mode came with 0.10.1: 0.10.0 drops it and captures its PIECEWISE graphs.
    mode = '{"cudagraph_mode": "NONE"}'
    for release, captured in (("0.10.0", True), ("0.10.1", False)):
        query = {**base, "vllm_version": release, "compilation_config": mode}
        graphs = _page("vram", query)["vllm_plan"]["cuda_graph_bytes"]
        assert (graphs == _page("vram", {**base, "vllm_version": release})["vllm_plan"][
            "cuda_graph_bytes"]) is captured  # fmt: skip
        assert (graphs > 0) is captured


def test_page_refuses_gpu_memory_below_a_byte_at_its_field() -> None:
    # It said 'gpu_memory_bytes: expected a number > 0, got 0' apart from every field.
    query = {"model": "llama-3.1-8b-instruct", "gpu_memory_gib": "1e-300"}
    errors = calc_compute.compute("vram", query, CATALOG)["errors"]
    assert errors == {
        "gpu_memory_gib": "gpu_memory_gib: expected at least one byte (9.3e-10 GiB), got 1e-300"
    }


def test_cli_and_page_refuse_a_config_above_the_size_of_a_config_file(tmp_path: Path) -> None:
    # The page planned a 20 MB pasted config in 9.5 s that the command line refuses.
    config = {**load_models()["llama-3.1-8b-instruct"].config, "junk": ["x" * 100] * 180_000}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    refusal = "17.9 MiB is above the limit of 16 MiB for a model config"
    cli = invoke("calc", "vram", "--model", str(path), "--gpu", "h100-sxm")
    assert cli.exit_code == 1, cli.output
    assert refusal in cli.stderr
    query = {"model": "", "gpu": "h100-sxm", "config": path.read_text()}
    errors = calc_compute.compute("vram", query, CATALOG)["errors"]
    assert errors == {"config": f"config: {refusal}"}


def test_cli_and_page_vram_payloads_are_the_same_with_cuda_graph_capture_options() -> None:
    compilation = '{"max_cudagraph_capture_size": 16, "cudagraph_mode": "FULL", "level": 3}'
    cli = json_output(
        "calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "l4", "--vllm-version",
        "0.29", "--max-num-seqs", "256", "--max-model-len", "8192",
        "--cuda-graph-sizes", "1 2 4 8 16",
        "--compilation-config", compilation,
    )  # fmt: skip
    page = _page(
        "vram",
        {
            "model": "llama-3.1-8b-instruct",
            "gpu": "l4",
            "vllm_version": "0.29",
            "max_num_seqs": "256",
            "max_model_len": "8192",
            "cuda_graph_sizes": "1 2 4 8 16",
            "compilation_config": compilation,
        },
    )
    assert page == cli
    assert "compilation_config keys the plan does not read: level" in cli["vllm_plan"]["notes"]


def test_vram_page_bound_says_which_link_its_traffic_takes_or_that_none_is_sourced() -> None:
    query = {"model": "llama-3.1-70b-instruct", "gpu": "rtx-5090", "tensor_parallel_size": "8"}
    page = calc_api.render("vram", {**query, "max_model_len": "4096"}, CATALOG)["html"]
    assert "Bound, includes TP all-reduce over PCIe 5.0 x16." in page
    assert 'data-output="throughput_bound.interconnect"' in page
    unsourced = calc_api.render(
        "vram", {**query, "gpu": "rtx-pro-6000", "tensor_parallel_size": "2"}, CATALOG
    )["html"]
    assert "TP all-reduce not included: no sourced interconnect figure for 2 GPUs" in unsourced


@pytest.mark.parametrize(
    ("model", "gpu", "tp"),
    [
        ("qwen3.5-397b-a17b", "h200-sxm", "8"),
        ("qwen3-vl-235b-a22b-thinking", "h200-sxm", "8"),
        ("glm-5", "b200", "8"),
        ("minimax-m2", "h100-sxm", "4"),
    ],
)
def test_cli_and_page_vram_payloads_are_the_same_for_the_new_families(
    model: str, gpu: str, tp: str
) -> None:
    cli = json_output(
        "calc", "vram", "--model", model, "--gpu", gpu, "-tp", tp, "--max-model-len", "32768"
    )
    page = _page(
        "vram", {"model": model, "gpu": gpu, "tensor_parallel_size": tp, "max_model_len": "32768"}
    )
    assert page == cli
    assert cli["weights_bytes"] > 0


def test_cli_and_page_plan_a_generically_read_config_alike_and_say_so(tmp_path: Path) -> None:
    config = {
        "model_type": "nova_lm",
        "hidden_size": 2048,
        "num_hidden_layers": 16,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "intermediate_size": 8192,
        "vocab_size": 32000,
        "max_position_embeddings": 8192,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    cli = json_output(
        "calc", "vram", "--model", str(path), "--gpu", "l4", "--max-model-len", "8192"
    )
    page = _page("vram", {"config": json.dumps(config), "gpu": "l4", "max_model_len": "8192"})
    assert page["vllm_plan"] == cli["vllm_plan"]
    assert any("read generically" in note for note in cli["vllm_plan"]["notes"])


@pytest.mark.parametrize(
    "name",
    [
        "falcon-mamba-7b.json",  # Mamba: attention-free
        "zamba2-2.7b.json",  # Mamba-2 with shared attention blocks
        "mimo-v2-flash.json",  # sliding-window layers with heads of their own
        "bailing-moe-v3-small.json",  # KDA with MLA
    ],
)
def test_cli_and_page_plan_the_state_and_hybrid_families_alike(name: str) -> None:
    path = Path(__file__).parent / "data" / "configs" / name
    cli = json_output(
        "calc", "vram", "--model", str(path), "--gpu", "h200-sxm", "-tp", "8",
        "--max-model-len", "8192", "--vllm-version", "0.29",
    )  # fmt: skip
    page = _page(
        "vram",
        {
            "config": path.read_text(),
            "gpu": "h200-sxm",
            "tensor_parallel_size": "8",
            "max_model_len": "8192",
            "vllm_version": "0.29",
        },
    )
    assert page["vllm_plan"] == cli["vllm_plan"]
    assert cli["kv_cache_tokens"] > 0
    assert not any("read generically" in note for note in cli["vllm_plan"]["notes"])


def test_cli_and_page_take_vllm_use_v2_model_runner() -> None:
    """VLLM_USE_V2_MODEL_RUNNER=0 keeps vLLM 0.29 on the V1 runner for a dense model, whose
    buffers (inputs_embeds and a block table) replace V2's sampler states; 0.34 refuses it."""
    args = ("--model", "qwen2.5-7b-instruct", "--gpu", "l4", "--max-model-len", "4096")
    cli = json_output("calc", "vram", *args, "--vllm-version", "0.29", "--use-v2-model-runner", "0")
    query = {"model": "qwen2.5-7b-instruct", "gpu": "l4", "max_model_len": "4096"}
    page = _page("vram", {**query, "vllm_version": "0.29", "use_v2_model_runner": "0"})
    assert page == cli
    default = json_output("calc", "vram", *args, "--vllm-version", "0.29")["vllm_plan"]
    v1 = cli["vllm_plan"]
    assert any("V1 model runner" in note for note in v1["notes"])
    assert any("V2 model runner" in note for note in default["notes"])
    assert v1["kv_cache_bytes"] - default["kv_cache_bytes"] == (
        default["runner_buffer_bytes"] - v1["runner_buffer_bytes"]
    )
    errors = calc_compute.compute(
        "vram", {**query, "vllm_version": "0.34", "use_v2_model_runner": "0"}, CATALOG
    )["errors"]
    assert list(errors) == ["use_v2_model_runner"], errors


@pytest.mark.parametrize("kind", ["vram", "fit"])
@pytest.mark.parametrize("version", ["0.0", "0.6.6", "0.35", "99.0"])
def test_cli_and_page_refuse_a_vllm_release_the_plan_does_not_model(
    kind: str, version: str
) -> None:
    # The hostile trial: --vllm-version 0.0 and 99.0 were planned, as 0.34's code or 0.7's, with
    # no word. The plan reads releases 0.7 (its oldest release fact) to 0.34 (vllm_settings).
    words = f"the plan models vLLM 0.7 to 0.34, got '{version}'"
    cli = invoke("calc", kind, "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm",
                 "--vllm-version", version)  # fmt: skip
    assert cli.exit_code == 2, cli.output
    assert cli.stderr.strip() == f"Error: Invalid value for '--vllm-version': {words}"
    query = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "vllm_version": version}
    assert calc_compute.compute(kind, query, CATALOG) == {"errors": {"vllm_version": (
        f"vllm_version: {words}")}}  # fmt: skip
    assert "payload" in calc_compute.compute(kind, {**query, "vllm_version": "0.34.1"}, CATALOG)


# The hostile trial: the pages read every input without the spaces around it (a pasted value),
# where the command line refused ' llama-3.1-8b-instruct' as an unknown id and ' fp8' as no
# choice. Both skins now read a field's text by one rule (calculators.fields.field_text).
PADDED = [
    ("vram", "model", " llama-3.1-8b-instruct "),
    ("vram", "gpu", "h100-sxm "),
    ("vram", "quantization", " fp8"),
    ("vram", "kv_cache_dtype", "fp8 "),
    ("vram", "vllm_version", " 0.29 "),
    ("vram", "cuda_graph_sizes", " 1 2 4 "),
    ("vram", "compilation_config", ' {"cudagraph_capture_sizes": [1, 2]} '),
    ("fit", "gpu", " l4, a100-80gb-sxm "),
    ("fit", "rank_by", "price-per-gb "),
    ("perf", "dataset", " mlperf-llama2-70b"),
]
PLAIN = {
    "vram": {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm"},
    "fit": {"model": "qwen2.5-7b-instruct", "context": "8192", "gpu": "l4,a100-80gb-sxm"},
    "perf": {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "input_len": "1000",
             "output_len": "200", "concurrency": "8"},
}  # fmt: skip


def _cli_args(query: dict[str, str]) -> list[str]:
    """The command line of a page query; a comma list of ids as the option repeated."""
    args = []
    for key, value in query.items():
        values = value.split(",") if key == "gpu" and "," in value else [value]
        args += [part for one in values for part in ("--" + key.replace("_", "-"), one)]
    return args


@pytest.mark.parametrize(
    ("kind", "field", "padded"), PADDED, ids=[f"{k}-{f}" for k, f, _ in PADDED]
)
def test_cli_and_page_read_a_value_with_spaces_around_it_alike(
    kind: str, field: str, padded: str
) -> None:
    query, plain = {**PLAIN[kind], field: padded}, {**PLAIN[kind], field: padded.strip()}
    cli = json_output("calc", kind, *_cli_args(query))
    assert cli == json_output("calc", kind, *_cli_args(plain))
    assert _page(kind, query) == _page(kind, plain)


def test_cli_takes_the_pages_comma_list_of_gpu_ids() -> None:
    args = ["calc", "fit", "--model", "qwen2.5-7b-instruct", "--context", "8192"]
    listed = json_output(*args, "--gpu", "l4, a100-80gb-sxm")
    assert listed == json_output(*args, "--gpu", "l4", "--gpu", "a100-80gb-sxm")
    assert [option["gpu"] for option in listed["options"]] == ["l4", "a100-80gb-sxm"]


# The hostile trial: the perf page's link ?request_rate=2 kept the form's example concurrency
# (16) beside it and was refused ("give exactly one of …"): a link naming one load was read only
# with concurrency= cleared as well. The load inputs are alternatives (their `group`).
@pytest.mark.parametrize(
    ("query", "load", "option"),
    [
        ({"request_rate": "2"}, "request_rate", ["--request-rate", "2"]),
        ({"offline": "1"}, "offline", ["--offline"]),
        ({"static_batch": "4"}, "static_batch", ["--static-batch", "4"]),
        ({"concurrency": "3"}, "concurrency", ["--concurrency", "3"]),
    ],
)
def test_perf_page_link_naming_one_load_is_that_load(
    query: dict[str, str], load: str, option: list[str]
) -> None:
    common = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "input_len": "1000",
              "output_len": "1000"}  # fmt: skip
    page = _page("perf", {**common, **query})
    assert page["load"] == load
    assert page == json_output("calc", "perf", *_cli_args(common), *option)
    both = calc_compute.compute(
        "perf", {**common, "concurrency": "16", "request_rate": "2"}, CATALOG
    )
    assert both["errors"] == {"": "load: give exactly one of concurrency, request_rate, offline "
                                  "or static_batch"}  # fmt: skip


# A reader asking what an H100 costs per 1M tokens at 2,000 in / 200 out got no $ figure on the
# perf page where the roofline bound stands in for the prediction, and one held-out error row
# (28.8 %, the time split) under the target the note beside it said was missed (31.7 % and 37.7 %
# on the other splits).
def test_perf_page_bound_states_its_dollar_figure_and_the_error_of_every_split() -> None:
    query = {**PLAIN["perf"], "input_len": "2000", "output_len": "200", "concurrency": "16"}
    payload = _page("perf", query)
    assert payload == json_output("calc", "perf", *_cli_args(query))
    bound, gpus = payload["roofline_bound_tokens_per_s"], payload["gpu_count"]
    price = payload["price"]["usd_per_gpu_hour"]
    expected = price * gpus / (bound * 3600) * 1e6
    assert payload["roofline_bound_usd_per_million_output_tokens"] == pytest.approx(expected)
    missed = {"shown": "bound", "missed_target": "server: a target missed"}
    shown = calc_html.RENDER["perf"](payload | missed, "../")
    assert 'data-output="roofline_bound_usd_per_million_output_tokens"' in shown
    assert f"${expected:,.4f}" in shown
    splits = payload["error"]["splits"]
    assert splits
    for split, median in splits.items():
        assert f'data-output="error.splits.{split}" data-value="{median!r}"' in shown


def test_fit_page_lists_a_gpu_whose_vllm_does_not_serve_the_weights_apart_as_the_cli_does() -> None:
    # Bug (4a67e181): the CLI printed the MI325X's refusal of NVFP4 on a line of its own, but
    # the fit page listed it under "Does not fit (1)", as if its 256 GB were too small. The
    # payload now says so (`served`), and both read it.
    query = {"model": "llama-3.1-8b-instruct", "context": "8192", "quantization": "nvfp4",
             "gpu": "mi325x,h100-sxm"}  # fmt: skip
    result = calc_compute.compute("fit", query, CATALOG)
    by_gpu = {row["gpu"]: row for row in result["payload"]["options"]}
    assert (by_gpu["mi325x"]["served"], by_gpu["h100-sxm"]["served"]) == (False, True)
    shown = calc_html.RENDER["fit"](result["payload"], "../")
    assert "Not served by their vLLM (1)" in shown
    assert "Does not fit" not in shown
    cli = json_output("calc", "fit", "--model", "llama-3.1-8b-instruct", "--context", "8192",
                      "--quantization", "nvfp4", "--gpu", "mi325x,h100-sxm", "--json")  # fmt: skip
    assert {row["gpu"]: row["served"] for row in cli["options"]} == {
        "mi325x": False,
        "h100-sxm": True,
    }


def test_cli_and_page_fit_refuse_a_context_longer_than_the_model_s() -> None:
    # Both listed an H100 with 'enough headroom' for 2.2 requests of 201,000 tokens of Llama 3.1
    # 8B, whose context is 131,072: vLLM refuses max_model_len 201,000 for it ('User-specified
    # max_model_len … is greater than the derived max_model_len') unless
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, which the fit does not assume.
    given = {"model": "llama-3.1-8b-instruct", "context": "201000", "gpu": "h100-sxm"}
    message = (
        "context: 201,000 tokens is longer than the model's 131,072 (vLLM's max_model_len for "
        "its config), which vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
    )
    errors = calc_compute.compute("fit", given, CATALOG)["errors"]
    assert list(errors) == ["context"]
    assert errors["context"] == message
    args = [part for key, value in given.items() for part in ("--" + key, value)]
    cli = invoke("calc", "fit", *args)
    assert cli.exit_code == 2, cli.output
    assert cli.stderr.startswith(f"Error: {message}")
    within = _page("fit", {**given, "context": "131072"})
    assert [option["fits"] for option in within["options"]] == [True]


def test_cli_and_page_cost_say_an_undated_catalog_price_is_undated() -> None:
    # Both said 'skypilot-hyperstack-n3-h100x1-on-demand: $1.9000/GPU-hour, as of 2026-12-01'
    # of a price only read that day (the H100 PCIe page: 'undated (read 2026-12-01)').
    prices = list(load_prices().values())
    chosen = {gpu: cheapest_prices(gpu, prices).get("on_demand") for gpu in sorted(load_gpus())}
    gpu, price = next((g, p) for g, p in chosen.items() if p is not None and dated(p) is None)
    cli = json_output("calc", "cost", "--gpu", gpu, "--tokens-per-second", "100", "--json")
    page = _page("cost", {"gpu": gpu, "tokens_per_second": "100"})
    for payload in (cli, page):
        assert payload["prices"]["price_per_hour"]["as_of"] == "undated"
    text = invoke("calc", "cost", "--gpu", gpu, "--tokens-per-second", "100").output
    assert f"{price.id}: ${price.usd_per_gpu_hour:,.4f}/GPU-hour, undated" in text
    shown = calc_html.RENDER["cost"](page, "../")
    assert f"as of {price.as_of}" not in text + shown
    assert "/GPU-hour, undated" in re.sub(r"<[^>]+>", "", shown)
    dated_gpu, dated_price = next((g, p) for g, p in chosen.items() if p and dated(p))
    payload = _page("cost", {"gpu": dated_gpu, "tokens_per_second": "100"})
    assert payload["prices"]["price_per_hour"]["as_of"] == dated(dated_price)


def test_cli_and_page_say_what_the_reserved_break_even_is_against() -> None:
    # At 30 % utilization both showed reserved at $4.63/1M beside always-on on-demand at $9.26,
    # and 'reserved pays off above 50% utilization', which holds only against on-demand paid
    # for its busy hours alone (price_tiers.reserved_break_even_utilization).
    given = {"price_per_hour": "10", "reserved_price_per_hour": "5", "tokens_per_second": "1000",
             "utilization": "0.3"}  # fmt: skip
    args = [part for key, value in given.items() for part in ("--" + key.replace("_", "-"), value)]
    text = invoke("calc", "cost", *args).output
    line = next(line for line in text.splitlines() if line.startswith("reserved pays off"))
    assert line.endswith("50% utilization, against on-demand paid for busy hours only")
    shown = re.sub(r"<[^>]+>", "", calc_html.RENDER["cost"](_page("cost", given), "../"))
    assert "Reserved pays off, against on-demand paid for busy hours onlyabove 50% utilization" in (
        shown
    )


def test_cli_and_page_perf_show_no_latency_prediction_beyond_the_batches_its_error_measured() -> (
    None
):
    # 'calc perf … --static-batch 100000' printed 'predicted: median error 8 % over 128 held-out
    # results' beside a TTFT p99 of 19,869,088.8 ms: that error is measured on static batches of
    # 1 to 8 requests only (registry/perf_cases.py), so nothing measured it at 100,000.
    given = {"model": "llama-3.1-8b-instruct", "gpu": "mi300x", "input_len": "1000",
             "output_len": "1000"}  # fmt: skip
    for batch, shown in (("8", "prediction"), ("9", "bound"), ("100000", "bound")):
        query = {**given, "static_batch": batch}
        args = [
            part for key, value in query.items() for part in ("--" + key.replace("_", "-"), value)
        ]
        for payload in (json_output("calc", "perf", *args, "--json"), _page("perf", query)):
            assert payload["kind"] == "latency"
            assert payload["shown"] == shown, batch
            if shown == "bound":
                assert payload["missed_target"] == (
                    "latency: no held-out result measures a static batch above 8 requests "
                    f"(this one: {int(batch):,}), so its error is not known"
                )


def test_cli_and_page_perf_show_no_latency_prediction_on_a_gpu_its_error_never_measured() -> None:
    # 'calc perf … --gpu h100-sxm --static-batch 4' printed 'predicted: median error 8 % over
    # 128 held-out results' though every one of them was measured on mi300x: the error is a
    # claim about the GPUs it was measured on, not about an NVIDIA GPU.
    given = {"model": "llama-3.1-8b-instruct", "input_len": "1000", "output_len": "200",
             "static_batch": "4"}  # fmt: skip
    for gpu, shown in (("mi300x", "prediction"), ("h100-sxm", "bound"), ("mi325x", "bound")):
        query = {**given, "gpu": gpu}
        args = [
            part for key, value in query.items() for part in ("--" + key.replace("_", "-"), value)
        ]
        for payload in (json_output("calc", "perf", *args, "--json"), _page("perf", query)):
            assert payload["kind"] == "latency"
            assert payload["shown"] == shown, gpu
            assert payload["error_label"].endswith("(time split (later releases); all on mi300x)")
            if shown == "bound":
                assert payload["missed_target"] == (
                    f"latency: no held-out result of this kind was measured on {gpu} (only on "
                    "mi300x), so its error there is not known"
                )


def test_cli_and_page_perf_state_no_queue_free_ttft_for_offline() -> None:
    # 'calc perf … --input-len 1000 --output-len 1000 --offline' printed 'TTFT p50 / p99 81.7 ms'
    # as if no request waited, though offline queues every request at once and most wait for a
    # slot; how long depends on how many were queued, which is not an input.
    query = {"model": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "input_len": "1000",
             "output_len": "1000"}  # fmt: skip
    args = [part for key, value in query.items() for part in ("--" + key.replace("_", "-"), value)]
    why = (
        "offline: every request is queued at once, so a request's TTFT counts its wait for those "
        "queued before it, which depends on how many were queued (not an input): none is "
        "predicted, nor an E2E"
    )
    cli = json_output("calc", "perf", *args, "--offline")
    for payload in (cli, _page("perf", {**query, "offline": "true"})):
        assert payload["ttft_ms"] == {"p50": None, "p99": None}
        assert payload["e2e_ms_p50"] is None
        assert payload["ttft_not_predicted"] == why
        assert payload["tpot_ms"]["p50"] > 0
        assert payload["output_tokens_per_s"] > 0
    # offline misses its error target, so the page shows the bound; were it met (a refit), the
    # prediction's page says why it has no TTFT
    page = calc_html.RENDER["perf"]({**cli, "shown": "prediction"}, "")
    assert f'data-output="ttft_not_predicted" data-value="{html.escape(why)}"' in page
    shown = invoke("calc", "perf", *args, "--offline")
    assert f"TTFT p50 / p99      not predicted: {why}" in shown.output
    concurrency = json_output("calc", "perf", *args, "--concurrency", "16")
    assert concurrency["ttft_ms"]["p50"] > 0
    assert concurrency["ttft_not_predicted"] is None


def test_page_cost_drops_the_perf_label_once_the_gpu_or_count_is_another() -> None:
    # The perf page's "cost of this" link opened the cost page at 1 × h100-sxm's roofline
    # bound; changing the GPU to b200 (or the count to 2) kept 'from the perf calculator on
    # 1 × b200, a roofline bound: no run can beat it, so its cost is a floor', though the bound
    # was h100-sxm's: the page recorded the basis but not the deployment it was of.
    link = {"gpu": "h100-sxm", "gpu_count": "1", "tokens_per_second": "13536",
            "tokens_per_second_basis": "bound", "tokens_per_second_gpu": "h100-sxm",
            "tokens_per_second_gpu_count": "1"}  # fmt: skip
    basis = _page("cost", link)["tokens_per_second_basis"]
    assert basis["kind"] == "bound"
    for changed, costed in (({"gpu": "b200"}, "1 × b200"), ({"gpu_count": "2"}, "2 × h100-sxm")):
        payload = _page("cost", {**link, **changed})
        assert payload["tokens_per_second_basis"] == {
            "kind": "other_deployment",
            "basis": "bound",
            "label": f"of 1 × h100-sxm, not the {costed} costed here: neither its measured "
            "error nor its bound speaks for this deployment",
        }
        shown = calc_html.RENDER["cost"](payload, "../")
        assert "a floor" not in shown
        assert f"from the perf calculator on {costed}" not in shown
        query = {**link, **changed}
        flags = [(f"--{key.replace('_', '-')}", value) for key, value in query.items()]
        cli = json_output("calc", "cost", *(part for flag in flags for part in flag))
        assert cli == payload  # the command line says the same
