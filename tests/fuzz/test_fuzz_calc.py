"""`infermeter calc …` under hostile numbers and config.json files: one line, never a traceback.

The named cases are the ones a hostile tester found (each crashed, hung or answered nonsense);
the hypothesis cases throw random option values at the three commands.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzz_helpers import check_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.json_text import TOO_DEEP
from infermeter.registry.catalog import load_models

LLAMA = "llama-3.1-8b-instruct"
VRAM = ["calc", "vram", "--model", LLAMA, "--gpu", "h100-sxm"]
BIG = "9" * 400

# (arguments, exit code, text the error line must hold)
NAMED = [
    (["calc", "vram", "--model", LLAMA, "--gpu-memory-gib", "nan"], 2, "--gpu-memory-gib"),
    (["calc", "vram", "--model", LLAMA, "--gpu-memory-gib", "inf"], 2, "--gpu-memory-gib"),
    (["calc", "vram", "--model", LLAMA, "--gpu-memory-gib", "1e308"], 2, "--gpu-memory-gib"),
    # below one byte: 'gpu_memory_bytes: expected a number > 0, got 0'
    (["calc", "vram", "--model", LLAMA, "--gpu-memory-gib", "1e-10"], 2,
     "--gpu-memory-gib: expected at least one byte (9.3e-10 GiB), got 1e-10"),
    ([*VRAM, "--max-model-len", "9" * 111], 2, "--max-model-len"),
    ([*VRAM, "-tp", BIG], 2, "--tensor-parallel-size"),
    ([*VRAM, "-tp", "65536"], 2, "tensor_parallel_size: 65536 does not divide"),
    ([*VRAM, "-pp", "1000000000", "--json"], 2, "--pipeline-parallel-size"),
    ([*VRAM, "-pp", "33", "--json"], 2, "pipeline_parallel_size: 33 stages"),
    ([*VRAM, "--vllm-version", "-1.-1"], 2, "--vllm-version"),
    ([*VRAM, "--vllm-version", "0.1" + "1" * 5000], 2, "--vllm-version"),
    ([*VRAM, "--vllm-version", ""], 2, "--vllm-version"),  # was the default
    ([*VRAM, "--vllm-version", "0.9e9"], 2, "--vllm-version"),  # a number, not a release
    (["calc", "cost", "--gpu", "h100-sxm", "--tokens-per-second", "2800", "--utilization",
      "1e-320", "--json"], 2, "utilization"),  # printed Infinity
    (["calc", "cost", "--price-per-hour", "2", "--tokens-per-second", "1e-320", "--json"], 2,
     "tokens_per_second"),
    (["calc", "cost", "--price-per-hour", "1e308", "--tokens-per-second", "1e-308", "--json"], 2,
     "price_per_hour: expected"),
    (["calc", "fit", "--model", LLAMA, "--context", BIG, "--json"], 2, "--context"),
    # $ / 1M output tokens printed as inf (Infinity in --json)
    (["calc", "perf", "--model", LLAMA, "--gpu", "b200", "-tp", "8", "--input-len", "1000",
      "--output-len", "200", "--request-rate", "1", "--price-per-hour", "1e308", "--json"], 2,
     "price_per_hour: expected a number > 0 up to 1e+15, got 1e+308"),
    (["calc", "perf", "--model", LLAMA, "--gpu", "b200", "-tp", "8", "--input-len", "1000",
      "--output-len", "200", "--request-rate", "1e-300", "--price-per-hour", "1e15", "--json"], 2,
     "request_rate: expected at least 1e-09, got 1e-300"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "code", "named"), NAMED, ids=[" ".join(a)[:60] for a, _, _ in NAMED]
)
def test_fuzz_calc_named_case_is_refused_in_one_line(
    args: list[str], code: int, named: str
) -> None:
    result = check_cli(args, "calc")
    assert result.exit_code == code, result.output
    assert named in result.stderr


@pytest.mark.parametrize("make", [lambda path: path, lambda path: Path("/dev/zero")],
                         ids=["2 MiB file", "/dev/zero"])  # fmt: skip
def test_fuzz_calc_cost_from_perf_larger_than_a_prediction_is_not_read_whole(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    big = tmp_path / "perf.json"
    big.write_text(" " * 2 * 1024 * 1024 + "{}")
    result = check_cli(["calc", "cost", "--from-perf", str(make(big)), "--price-per-hour", "2"],
                       "calc")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "--from-perf: more than 1 MiB" in result.stderr


# A `calc perf --json` output edited: each was costed as it was (10^12 GPUs: 'tokens per $ 0'),
# refused naming an option not given with exit 2 (gpu_count 0, a throughput of 1e308), printed
# whole (a 3,000-character GPU id) or drove the terminal (a label holding ESC and a newline;
# the label is now the library's, from the figure shown and its kind, which are refused here).
# The run is at a concurrency, whose figure shown is the roofline bound.
FROM_PERF = [
    ("gpu_count 0", {"gpu_count": 0}, "--from-perf: gpu_count: expected an integer from 1 to"),
    ("gpu_count 10^12", {"gpu_count": 10**12}, "gpu_count: expected an integer from 1 to 100,000"),
    ("throughput 1e308", {"roofline_bound_tokens_per_s": 1e308},
     "--from-perf: roofline_bound_tokens_per_s: expected a number > 0 up to 1e+15"),
    ("throughput 1e-300", {"roofline_bound_tokens_per_s": 1e-300},
     "roofline_bound_tokens_per_s: expected at least"),
    ("GPU id of 3,000 characters", {"gpu": "x" * 3000},
     "--from-perf: gpu: expected a text on one line of at most 64 characters"),
    ("figure shown with ESC and a newline", {"shown": "\x1b]0;title\x07\nforged"},
     "--from-perf: shown: expected prediction or bound, got '\\x1b]0;title"),
    ("kind not of the error table", {"kind": "<b>exact</b>"},
     "--from-perf: kind: expected latency or offline or server, got '<b>exact</b>'"),
    ("no rate meets the SLO", {"output_tokens_per_s_at_slo": 0.0},
     "output_tokens_per_s_at_slo: 0, no request rate meets the prediction's SLO"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("edits", "named"), [case[1:] for case in FROM_PERF], ids=[case[0] for case in FROM_PERF]
)
def test_fuzz_calc_cost_from_perf_holding_what_no_prediction_does(
    tmp_path: Path, edits: dict[str, object], named: str
) -> None:
    perf = check_cli(["calc", "perf", "--model", LLAMA, "--gpu", "h100-sxm", "--input-len", "1000",
                      "--output-len", "100", "--concurrency", "4", "--json"], "calc")  # fmt: skip
    path = tmp_path / "perf.json"
    path.write_text(json.dumps({**json.loads(perf.stdout), **edits}))
    result = check_cli(["calc", "cost", "--from-perf", str(path)], "calc")
    assert result.exit_code == 1, result.output
    assert named in result.stderr
    assert result.stderr.strip().isprintable()


def test_fuzz_calc_vram_real_settings_still_answer() -> None:
    result = check_cli([*VRAM, "-pp", "2", "--vllm-version", "v0.10.1.1", "--json"], "calc")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["fits"] is True


LARGEST_CAPTURE = {
    "--max-cudagraph-capture-size": ["--max-cudagraph-capture-size", "100000000"],
    "--cuda-graph-sizes": ["--cuda-graph-sizes", "100000000"],
    "-O": ["-O", '{"max_cudagraph_capture_size": 100000000}'],
}


@pytest.mark.parametrize("given", LARGEST_CAPTURE.values(), ids=LARGEST_CAPTURE.keys())
def test_fuzz_calc_fit_with_the_largest_capture_size_answers_in_time(given: list[str]) -> None:
    # The default capture sizes up to 10^8 were listed, 6 million a plan: fit took 40 s
    result = check_cli(["calc", "fit", "--model", LLAMA, "--context", "4096", *given, "--json"],
                       "calc", 5)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["options"]


def _llama() -> dict[str, object]:
    return _config(LLAMA)


def _config(model: str) -> dict[str, object]:
    return dict(load_models()[model].config)


ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192}  # fmt: skip
# (file name, its text from the real Llama 3.1 8B config, the field the error must name)
HOSTILE_CONFIGS = [
    ("layers-1e8", lambda c: json.dumps({**c, "num_hidden_layers": 10**8}), "num_hidden_layers"),
    ("layers-1e12", lambda c: json.dumps({**c, "num_hidden_layers": 10**12}), "num_hidden_layers"),
    ("hidden-1e400", lambda c: json.dumps({**c, "hidden_size": 10**400}), "hidden_size"),
    ("rope-nan", lambda c: json.dumps({**c, "rope_scaling": {**ROPE, "factor": float("nan")}}),
     "rope_scaling.factor"),
    ("rope-inf", lambda c: json.dumps({**c, "rope_scaling": {**ROPE, "factor": float("inf")}}),
     "rope_scaling.factor"),
    ("rope-1e308", lambda c: json.dumps({**c, "rope_scaling": {**ROPE, "factor": 1e308}}),
     "rope_scaling.factor"),
    ("sparse-step-0", lambda c: json.dumps({**c, "num_local_experts": 8, "num_experts_per_tok": 2,
                                            "decoder_sparse_step": 0}), "decoder_sparse_step"),
    ("patch-0", lambda c: json.dumps({"model_type": "gemma3", "text_config": c, "vision_config": {
        "hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
        "image_size": 896, "patch_size": 0}}), "vision_config.patch_size"),
    ("bits-0", lambda c: json.dumps({**c, "quantization_config": {"quant_method": "awq", "bits": 0,
                                                                  "group_size": 128}}), "bits"),
    ("nested-100k-lists", lambda c: "[" * 100_000 + "]" * 100_000, f"not valid JSON: {TOO_DEEP}"),
    ("nested-100k-objects", lambda c: '{"a":' * 100_000 + "1" + "}" * 100_000,
     f"not valid JSON: {TOO_DEEP}"),
    ("nested-40", lambda c: json.dumps({**c, "x": json.loads("[" * 40 + "]" * 40)}),
     "nested deeper than 32"),
    ("null", lambda c: "null", "expected a JSON object"),
    # a list or an object where the readers look a type up: a TypeError's traceback
    ("model-type-list", lambda c: json.dumps({**c, "model_type": ["llama"]}),
     "model_type: expected a string such as 'llama', got ['llama']"),
    ("text-model-type-object", lambda c: json.dumps({"model_type": "llava", "text_config": {
        **c, "model_type": {}}}), "text_config.model_type: expected a string"),
    ("model-type-true", lambda c: json.dumps({**c, "model_type": True}), "got True"),
    # a field under another name is bounded as the field: 10^7 layers took 25 s (10^9: hung)
    ("gptj-n-layer-1e7", lambda c: json.dumps({**_config("gpt-j-6b"), "n_layer": 10**7}),
     "n_layer: expected an integer from 0 to 10,000, got 10000000"),
    ("huge-int-elsewhere", lambda c: json.dumps({**c, "eos_token_id": 10**30}), "eos_token_id"),
    # more digits than Python converts: a ValueError's traceback (the pages: "unavailable")
    ("int-5000-digits", lambda c: json.dumps(c)[:-1] + ', "x": ' + "9" * 5000 + "}",
     "not valid JSON: a number of more than 4,300 digits"),
]  # fmt: skip


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as stream:
        stream.truncate(size)
    return path


def _link(path: Path, target: str) -> Path:
    path.symlink_to(target)
    return path


# A config.json that is no regular file of a config's size: the FIFO hung, 3 GB were read whole.
CONFIG_FILES: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "FIFO": lambda d: (_fifo(d / "config.json"), "is a FIFO (named pipe); a model config must"),
    "/dev/zero as x.json": lambda d: (_link(d / "x.json", "/dev/zero"), "is a device"),
    "3 GB": lambda d: (_sparse(d / "config.json", 3 * 1024**3), "above the limit of 16 MiB"),
    "folder": lambda d: (d / "sub.json", "is a folder"),
}


@pytest.mark.parametrize("case", list(CONFIG_FILES))
@pytest.mark.parametrize("command", ["vram", "fit"])
def test_fuzz_calc_config_file_that_is_no_config_is_refused(
    tmp_path: Path, case: str, command: str
) -> None:
    (tmp_path / "sub.json").mkdir()
    path, named = CONFIG_FILES[case](tmp_path)
    target = ["--gpu", "h100-sxm"] if command == "vram" else ["--context", "4096"]
    result = check_cli(["calc", command, "--model", str(path), *target], "calc", 10)
    assert result.exit_code == 1, result.output
    assert f"{path}: " in result.stderr
    assert named in result.stderr


# Read when the plan is made (the weight format), not with the file: the error names the field.
PLANNED_CONFIGS = [
    # an AttributeError's traceback ('str' object has no attribute 'values')
    ("ct-groups-text", lambda c: json.dumps({**c, "quantization_config": {
        "quant_method": "compressed-tensors", "config_groups": "x"}}),
     "quantization_config.config_groups: expected a JSON object of quantization groups, got 'x'"),
    ("ct-groups-list", lambda c: json.dumps({**c, "quantization_config": {
        "quant_method": "compressed-tensors", "config_groups": [{"weights": {}}]}}),
     "config_groups: expected a JSON object of quantization groups, got [{'weights': {}}]"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "make", "field"),
    HOSTILE_CONFIGS + PLANNED_CONFIGS,
    ids=[c[0] for c in HOSTILE_CONFIGS + PLANNED_CONFIGS],
)
@pytest.mark.parametrize("command", ["vram", "fit"])
def test_fuzz_calc_hostile_config_json_is_refused_fast(
    tmp_path: Path, name: str, make: object, field: str, command: str
) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(make(_llama()))  # type: ignore[operator]
    target = ["--gpu", "h100-sxm"] if command == "vram" else ["--context", "4096"]
    result = check_cli(["calc", command, "--model", str(path), *target, "--json"], "calc", 10)
    assert result.exit_code == 1, result.output
    assert field in result.stderr
    planned = name in {case[0] for case in PLANNED_CONFIGS}
    assert planned or str(path) in result.stderr


CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"


def _family(name: str, **fields: object) -> str:
    """tests/data/configs/NAME.json with `fields` set (each read by that family's own module)."""
    return json.dumps({**json.loads((CONFIGS / f"{name}.json").read_text()), **fields})


def _inkling_towers(**vision: object) -> str:
    """An inkling_mm_model wrapper of tests/data/configs/inkling.json with an HMLP vision tower
    (test_inkling's), `vision` set."""
    text = json.loads(_family("inkling"))
    text.pop("model_type")
    return json.dumps({"model_type": "inkling_mm_model", "text_config": text, "vision_config": {
        "vision_encoder_type": "hmlp", "decoder_dmodel": 6144, "patch_size": 40,
        "temporal_patch_size": 2, "n_channels": 3, "n_layers": 3, **vision}})  # fmt: skip


# (case, the config's text, what the error line must hold): fields a family's module reads
# itself, each a traceback, a hang or an overflow before.
FAMILY_CONFIGS = [
    ("inkling d_rel text", _family("inkling", d_rel="16"),
     "d_rel: expected a non-negative integer, got '16'"),  # TypeError
    ("inkling vocab_size text", _family("inkling", vocab_size="x"), "vocab_size"),
    ("inkling swa_head_dim 1e308", _family("inkling", swa_head_dim=1e308),
     "swa_head_dim: expected a non-negative integer, got 1e+308"),  # OverflowError
    ("inkling head_dim 0", _family("inkling", head_dim=0),
     "head_dim: expected an integer > 0, got 0"),  # ZeroDivisionError
    ("inkling flag a list", _family("inkling", use_gate_bias=[1]),
     "use_gate_bias: expected true or false, got [1]"),  # TypeError
    ("inkling HMLP of 19 layers over 39 scales", _inkling_towers(
        patch_size=2**19, temporal_patch_size=2**19, n_layers=19),
     "vision_config.n_layers: 19 HMLP layers over the 39 scales"),  # hung
    ("inkling HMLP temporal 2^53", _inkling_towers(temporal_patch_size=2**53 - 111),
     "vision_config.temporal_patch_size: expected an integer from 1"),  # 7 s
    ("inkling HMLP of 0 layers", _inkling_towers(n_layers=0),
     "vision_config.n_layers: expected an integer > 0"),  # ZeroDivisionError
    ("inkling HMLP no channels", _inkling_towers(n_channels=0),
     "vision_config.n_channels: expected an integer > 0"),  # math domain error
    ("mistral-large-4 kv_lora_rank 0", _family("mistral-large-4", kv_lora_rank=0),
     "kv_lora_rank: Mistral Large 4's attention is latent (MLA)"),  # AssertionError
    ("deepseek-v4 o_groups 0", _family("deepseek-v4-flash", o_groups=0),
     "o_groups: expected an integer > 0, got 0"),  # ZeroDivisionError
    ("deepseek-v4 qk_rope_head_dim text", _family("deepseek-v4-flash", qk_rope_head_dim="x"),
     "qk_rope_head_dim: expected a non-negative integer, got 'x'"),  # ValueError
    ("domyn-edge KV heads null", _family("domyn-edge", num_key_value_heads=None),
     "num_key_value_heads: required field missing"),  # KeyError
    ("qwen4-exp heads_per_ngram 0", _family("qwen4-exp-flash-next", heads_per_ngram=0),
     "heads_per_ngram: (ngram_size - 1) x heads_per_ngram n-gram heads is 0"),  # ZeroDivision
    ("qwen4-exp mamba_ssm_dtype a list", _family("qwen4-exp-flash-next",
     mamba_ssm_dtype=["float32"]), "mamba_ssm_dtype: expected one of"),  # TypeError
    ("zaya head_dim 0", _family("zaya1-8b", head_dim=0),
     "head_dim: expected an integer >= 1"),  # ZeroDivisionError
    ("lfm2 block_ffn_dim_multiplier 1e308", _family("lfm2-1.2b", block_ffn_dim_multiplier=1e308),
     "block_ffn_dim_multiplier: expected a number from 1e-06 to 1e+06"),  # OverflowError
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "named"), [case[1:] for case in FAMILY_CONFIGS], ids=[c[0] for c in FAMILY_CONFIGS]
)
def test_fuzz_calc_family_config_is_refused_naming_the_field(
    tmp_path: Path, text: str, named: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    result = check_cli(["calc", "vram", "--model", str(path), "--gpu", "b300", "--json"], "calc", 5)
    assert result.exit_code == 1, result.output
    assert named in result.stderr


@pytest.mark.parametrize("model", ["deepseek-v3", "qwen3-30b-a3b"])
def test_fuzz_calc_fit_of_a_moe_at_the_layer_bound_answers_in_time(
    tmp_path: Path, model: str
) -> None:
    # 10,000 layers, the bound: each layer's count made a set of the MoE layers (10 s a fit)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**_config(model), "num_hidden_layers": 10_000}))
    result = check_cli(["calc", "fit", "--model", str(path), "--context", "4096", "--json"],
                       "calc", 5)  # fmt: skip
    assert result.exit_code == 0, result.output


def test_fuzz_calc_config_bounds_hold_in_the_library_the_browser_runs() -> None:
    # The browser calculator calls parse_config on a pasted config: the same bounds apply.
    with pytest.raises(ConfigError, match="num_hidden_layers"):
        parse_config({**_llama(), "num_hidden_layers": 10**8})
    parse_config({**_llama(), "num_hidden_layers": 10_000})  # the bound itself is allowed


NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e308", "0", "-1", BIG, "", " ", "1_000", "0x10",
                     "１２", "1e-320", "\x00", "--json"]),
)  # fmt: skip
VRAM_OPTIONS = ["--gpu-memory-gib", "-tp", "-pp", "--max-model-len",
                "--gpu-memory-utilization", "--max-num-seqs", "--max-num-batched-tokens",
                "--context", "--concurrency"]  # fmt: skip
COST_OPTIONS = ["--price-per-hour", "--tokens-per-second", "--accepted-tokens-per-second",
                "--gpu-count", "--utilization", "--retry-rate", "--overhead-per-hour",
                "--api-price-per-million", "--monthly-tokens"]  # fmt: skip
FIT_OPTIONS = ["--context", "--concurrency", "-tp", "--max-model-len", "--gpu-memory-utilization"]
FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _options(names: list[str]) -> st.SearchStrategy[list[str]]:
    pairs = st.lists(st.tuples(st.sampled_from(names), NUMBERS), min_size=1, max_size=4)
    return pairs.map(lambda items: [part for name, value in items for part in (name, value)])


@FUZZ
@given(_options(VRAM_OPTIONS))
def test_fuzz_calc_vram_random_options(options: list[str]) -> None:
    base = ["calc", "vram", "--model", LLAMA, "--json"]
    if "--gpu-memory-gib" not in options:
        base += ["--gpu", "h100-sxm"]
    check_cli([*base, *options], "calc")


@FUZZ
@given(_options(COST_OPTIONS))
def test_fuzz_calc_cost_random_options(options: list[str]) -> None:
    check_cli(["calc", "cost", "--gpu", "h100-sxm", "--tokens-per-second", "1000", *options,
               "--json"], "calc")  # fmt: skip


@FUZZ
@given(_options(FIT_OPTIONS))
def test_fuzz_calc_fit_random_options(options: list[str]) -> None:
    check_cli(["calc", "fit", "--model", LLAMA, "--context", "4096", *options, "--json"], "calc")
