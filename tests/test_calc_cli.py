"""Tests of `infermeter calc vram|cost|fit` through click's runner: JSON shape, plans that do not
fit, config files, unknown ids, usage errors, tables, and never a traceback."""

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import invoke, json_output, one_line_error
from click.testing import Result

CONFIGS = Path(__file__).parent / "data" / "configs"
HEADROOM_STATES = {"enough_headroom", "near_limit", "over_limit"}
VRAM_KEYS = {
    "weights_bytes",
    "kv_cache_bytes_per_token",
    "kv_cache_tokens",
    "max_concurrency",
    "required_bytes",
    "fits",
    "headroom_state",
    "breakdown",
}


def _invoke(*args: str) -> Result:
    return invoke("calc", *args)


def _json(*args: str) -> dict[str, Any]:
    return json_output("calc", *args)


def _fixtures(prefix: str) -> list[Path]:
    return sorted(CONFIGS.glob(f"{prefix}*.json"))


# --- calc vram ----------------------------------------------------------------------------------


def test_calc_vram_json_has_the_documented_keys_as_integers() -> None:
    payload = _json("vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm")
    assert payload.keys() >= VRAM_KEYS
    for key in ("weights_bytes", "kv_cache_bytes_per_token", "kv_cache_tokens", "required_bytes"):
        assert type(payload[key]) is int, key
    assert all(type(value) is int for value in payload["breakdown"].values())
    assert payload["required_bytes"] == sum(payload["breakdown"].values())
    assert payload["headroom_state"] in HEADROOM_STATES
    assert payload["fits"] is True
    assert payload["kv_cache_bytes_per_token"] == 131072
    assert payload["weights_bytes"] / 1024**3 == pytest.approx(14.99, abs=0.01)


def test_calc_vram_json_plan_that_does_not_fit_is_an_answer() -> None:
    # Llama-3.1-8B at its full 131072-token context on a 24 GB card: vLLM refuses to start.
    payload = _json("vram", "--model", "llama-3.1-8b-instruct", "--gpu", "rtx-3090")
    assert payload["fits"] is False
    assert payload["max_concurrency"] < 1
    assert "estimated maximum model length is" in payload["vllm_error"]
    assert payload["vllm_error"] in payload["reason"]
    assert payload["vllm_plan"]["largest_max_model_len"] < payload["max_model_len"] == 131072


@pytest.mark.parametrize(
    "version",
    [
        pytest.param(
            "0.19",
        ),
        "0.20",
        "0.28",
    ],
)
def test_calc_vram_vllm_suggested_max_model_len_then_fits(version: str) -> None:
    args = ["vram", "--model", "llama-3.1-8b-instruct", "--gpu", "rtx-3090"]
    refused = _json(*args, "--vllm-version", version)
    assert refused["fits"] is False
    largest = str(refused["vllm_plan"]["largest_max_model_len"])
    payload = _json(*args, "--vllm-version", version, "--max-model-len", largest)
    assert payload["fits"] is True
    assert payload["vllm_error"] is None


def test_calc_vram_vllm_options_reach_the_plan() -> None:
    base = ["vram", "--model", "llama-3.1-70b-instruct", "--gpu-memory-gib", "79.2"]
    one = _json(*base, "--max-model-len", "8192")
    two = _json(
        *base,
        "--max-model-len",
        "8192",
        "-tp",
        "2",
        "--kv-cache-dtype",
        "fp8",
        "--gpu-memory-utilization",
        "0.95",
        "--max-num-seqs",
        "64",
        "--enforce-eager",
    )
    assert two["weights_bytes"] < one["weights_bytes"]
    assert two["kv_cache_bytes_per_token"] == one["kv_cache_bytes_per_token"] // 4
    plan = two["vllm_plan"]
    assert (plan["tensor_parallel_size"], plan["max_num_seqs"]) == (2, 64)
    assert plan["gpu_memory_utilization"] == 0.95
    assert plan["cuda_graph_bytes"] == 0


def test_calc_vram_model_from_config_file() -> None:
    path = str(CONFIGS / "tiny-llama.json")
    payload = _json("vram", "--model", path, "--gpu-memory-gib", "24")
    assert payload["fits"] is True
    assert payload["max_model_len"] == 4096
    assert payload["kv_cache_bytes_per_token"] == 4 * 2 * 4 * 32 * 2


def test_calc_vram_quantized_config_file_and_override() -> None:
    path = str(CONFIGS / "llama-3.1-8b-instruct-awq.json")
    args = ["vram", "--model", path, "--gpu", "h100-sxm", "--max-model-len", "8192"]
    awq = _json(*args)
    bf16 = _json(*args, "--quantization", "none")
    assert awq["vllm_plan"]["weight_format"].startswith("AWQ 4-bit")
    assert 5.2 < awq["weights_bytes"] / 1024**3 < 5.6
    assert bf16["weights_bytes"] > 2.5 * awq["weights_bytes"]
    assert awq["kv_cache_tokens"] > bf16["kv_cache_tokens"]


@pytest.mark.parametrize(
    ("args", "suggestions"),
    [
        (["--model", "llama-3.1-8b", "--gpu", "h100-sxm"], ["llama-3.1-8b-instruct"]),
        (["--model", "gpt-oss", "--gpu", "h100-sxm"], ["gpt-oss-20b", "gpt-oss-120b"]),
        (["--model", "llama-3.1-8b-instruct", "--gpu", "h100"], ["h100-sxm", "h100-pcie"]),
    ],
)
def test_calc_vram_unknown_id_lists_closest(args: list[str], suggestions: list[str]) -> None:
    line = one_line_error(_invoke("vram", *args))
    assert "unknown" in line
    assert "closest" in line
    for suggestion in suggestions:
        assert suggestion in line


def test_calc_vram_unknown_gpu_prefix_suggests_its_variants() -> None:
    line = one_line_error(_invoke("vram", "--model", "llama-3.2-1b-instruct", "--gpu", "a100"))
    assert "a100-80gb-sxm" in line
    assert "a100-40gb-pcie" in line


def test_calc_vram_malformed_config_names_the_file() -> None:
    path = str(CONFIGS / "malformed.json")
    line = one_line_error(_invoke("vram", "--model", path, "--gpu", "h100-sxm"))
    assert path in line
    assert "JSON" in line


def test_calc_vram_missing_config_file_names_it(tmp_path: Path) -> None:
    path = str(tmp_path / "config.json")
    line = one_line_error(_invoke("vram", "--model", path, "--gpu", "h100-sxm"))
    assert path in line


def test_calc_vram_config_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("[1, 2, 3]\n")
    line = one_line_error(_invoke("vram", "--model", str(path), "--gpu", "h100-sxm"))
    assert str(path) in line


@pytest.mark.parametrize("path", _fixtures("missing-"), ids=lambda path: path.name)
def test_calc_vram_config_missing_field_names_it(path: Path) -> None:
    field = path.stem.removeprefix("missing-")
    line = one_line_error(_invoke("vram", "--model", str(path), "--gpu", "h100-sxm"))
    assert f"{field}: required field missing" in line


@pytest.mark.parametrize("path", _fixtures("invalid-"), ids=lambda path: path.name)
def test_calc_vram_config_wrongly_typed_field_is_aone_line_error(path: Path) -> None:
    field = path.stem.removeprefix("invalid-")
    result = _invoke("vram", "--model", str(path), "--gpu", "h100-sxm")
    line = one_line_error(result)
    assert field in line


@pytest.mark.parametrize("path", _fixtures("impossible-"), ids=lambda path: path.name)
def test_calc_vram_config_with_a_field_no_real_model_has_is_refused_naming_it(path: Path) -> None:
    # impossible-FIELD.CASE.json: num_key_value_heads 0 or not dividing the heads, no position,
    # more experts a token than experts, quantization groups of 0 (each was planned silently)
    field = path.stem.removeprefix("impossible-").split(".")[0]
    result = _invoke("vram", "--model", str(path), "--gpu", "h100-sxm")
    assert result.exit_code == 1, result.output
    assert field in one_line_error(result)


@pytest.mark.parametrize("path", _fixtures("odd-"), ids=lambda path: path.name)
def test_calc_vram_config_with_zero_width_never_tracebacks(path: Path) -> None:
    result = _invoke("vram", "--model", str(path), "--gpu", "h100-sxm")
    assert result.exit_code in (0, 1)


def test_calc_vram_config_fixtures_are_discovered() -> None:
    assert len(_fixtures("missing-")) >= 2
    assert len(_fixtures("invalid-")) >= 5
    assert len(_fixtures("odd-")) >= 2
    assert len(_fixtures("impossible-")) >= 5


@pytest.mark.parametrize(
    "extra",
    [
        ["--gpu-memory-gib", "0"],
        ["--gpu-memory-gib", "-8"],
        ["--gpu", "h100-sxm", "--gpu-memory-utilization", "1.5"],
        ["--gpu", "h100-sxm", "--gpu-memory-utilization", "0"],
        ["--gpu", "h100-sxm", "--tensor-parallel-size", "0"],
        ["--gpu", "h100-sxm", "--pipeline-parallel-size", "-1"],
        ["--gpu", "h100-sxm", "--max-model-len", "-4096"],
        ["--gpu", "h100-sxm", "--max-model-len", "0"],
        ["--gpu", "h100-sxm", "--max-num-seqs", "0"],
        ["--gpu", "h100-sxm", "--max-num-batched-tokens", "-1"],
        ["--gpu", "h100-sxm", "--context", "0"],
        ["--gpu", "h100-sxm", "--concurrency", "-2"],
        ["--gpu", "h100-sxm", "--quantization", "bitsandbytes"],
        ["--gpu", "h100-sxm", "--kv-cache-dtype", "int4"],
        ["--gpu", "h100-sxm", "--vllm-version", "latest"],
        ["--gpu", "h100-sxm", "--gpu-memory-gib", "80"],
        [],
    ],
    ids=" ".join,
)
def test_calc_vram_impossible_numbers_and_usage_exit_2(extra: list[str]) -> None:
    result = _invoke("vram", "--model", "llama-3.1-8b-instruct", *extra)
    assert result.exit_code == 2, result.output


def test_calc_vram_table_shows_key_figures() -> None:
    args = ["vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm", "--max-model-len"]
    payload = _json(*args, "8192")
    result = _invoke(*args, "8192")
    assert result.exit_code == 0
    assert f"{payload['kv_cache_tokens']:,}" in result.output
    assert "131,072 bytes" in result.output
    assert "14.99 GiB" in result.output
    assert "enough headroom" in result.output
    assert "fits                yes" in result.output


def test_calc_vram_table_for_a_refused_plan_says_why() -> None:
    result = _invoke("vram", "--model", "llama-3.1-8b-instruct", "--gpu", "rtx-3090")
    assert result.exit_code == 0
    assert "no: vLLM would refuse to start" in result.output
    assert "estimated maximum model length is" in result.output


# --- calc cost ----------------------------------------------------------------------------------


def test_calc_cost_json_figures() -> None:
    payload = _json("cost", "--price-per-hour", "2", "--tokens-per-second", "1000")
    assert payload["usd_per_million_tokens"] == pytest.approx(2 / (1000 * 3600) * 1e6)
    assert payload["tokens_per_dollar"] == pytest.approx(1_800_000)


def test_calc_cost_json_effective_and_versus_api() -> None:
    payload = _json(
        "cost",
        "--price-per-hour",
        "2.69",
        "--tokens-per-second",
        "2800",
        "--utilization",
        "0.5",
        "--reserved-price-per-hour",
        "1.5",
        "--api-price-per-million",
        "0.6",
        "--monthly-tokens",
        "1e9",
    )
    assert payload["effective_usd_per_million_tokens"] > payload["usd_per_million_tokens"]
    assert payload["versus_api"]["winner"] in ("self_hosted", "api")


def test_calc_cost_table_shows_key_figures() -> None:
    result = _invoke("cost", "--price-per-hour", "2", "--tokens-per-second", "1000")
    assert result.exit_code == 0
    assert "0.5556" in result.output
    assert "1,800,000" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["--price-per-hour", "0", "--tokens-per-second", "1000"],
        ["--price-per-hour", "-1", "--tokens-per-second", "1000"],
        ["--price-per-hour", "2", "--tokens-per-second", "0"],
        ["--price-per-hour", "2", "--tokens-per-second", "1000", "--utilization", "1.5"],
        ["--price-per-hour", "2", "--tokens-per-second", "1000", "--utilization", "0"],
        ["--price-per-hour", "2", "--tokens-per-second", "1000", "--retry-rate", "1"],
        ["--price-per-hour", "2", "--tokens-per-second", "1000", "--gpu-count", "0"],
        ["--price-per-hour", "2"],
    ],
    ids=" ".join,
)
def test_calc_cost_impossible_numbers_exit_2(args: list[str]) -> None:
    assert _invoke("cost", *args).exit_code == 2


# --- calc fit -----------------------------------------------------------------------------------

FIT_GPUS = ["--gpu", "h100-sxm", "--gpu", "rtx-4090", "--gpu", "l4", "--gpu", "h200-sxm"]


def test_calc_fit_json_lists_options() -> None:
    payload = _json("fit", "--model", "llama-3.1-70b-instruct", "--context", "8192", *FIT_GPUS)
    options = payload["options"]
    assert {option["gpu"] for option in options} == {"h100-sxm", "rtx-4090", "l4", "h200-sxm"}
    for option in options:
        assert {"gpu", "gpu_count", "usd_per_hour", "headroom_state"} <= option.keys()
        assert option["gpu_count"] in (None, 1, 2, 4, 8)
        if option["fits"]:
            assert option["headroom_state"] in HEADROOM_STATES
    by_gpu = {option["gpu"]: option for option in options}
    assert by_gpu["h100-sxm"]["gpu_count"] == 2
    assert by_gpu["h200-sxm"]["gpu_count"] == 2  # 131 GiB of bf16 weights > 0.9 x 141 GB
    fitting = [option for option in options if option["fits"]]
    assert options[: len(fitting)] == fitting
    prices = [option["usd_per_hour"] for option in fitting if option["usd_per_hour"] is not None]
    assert prices == sorted(prices)


def test_calc_fit_table_shows_gpus_and_misfits() -> None:
    result = _invoke("fit", "--model", "deepseek-v3", "--context", "8192", *FIT_GPUS)
    assert result.exit_code == 0
    assert "h200-sxm" in result.output
    assert "does not fit on 8 or fewer: " in result.output
    assert "rtx-4090" in result.output.splitlines()[-1]


def test_calc_fit_unknown_gpu_lists_closest() -> None:
    args = ["fit", "--model", "llama-3.1-8b-instruct", "--context", "8192", "--gpu", "h100"]
    line = one_line_error(_invoke(*args))
    assert "h100-sxm" in line


@pytest.mark.parametrize(
    "extra",
    [
        ["--context", "0"],
        ["--context", "-1"],
        ["--context", "8192", "--concurrency", "0"],
        ["--context", "8192", "--gpu-memory-utilization", "2"],
        ["--context", "8192", "--rank-by", "speed"],
        [],
    ],
    ids=" ".join,
)
def test_calc_fit_impossible_numbers_exit_2(extra: list[str]) -> None:
    assert _invoke("fit", "--model", "llama-3.1-8b-instruct", *extra).exit_code == 2
