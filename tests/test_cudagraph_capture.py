"""Tests of calculators.cudagraph_capture: vLLM's --max-cudagraph-capture-size, --cuda-graph-sizes
and -O / --compilation-config capture settings, and how many graphs the plan counts with them."""

from typing import Any

import pytest
from catalog_gpus import traits
from cli_helpers import json_output

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.cudagraph_capture import capture_sizes
from infermeter.calculators.errors import InputError
from infermeter.calculators.vllm_overheads import captured_cuda_graphs
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, VllmSettings
from infermeter.registry.catalog import load_models

LLAMA = parse_config(load_models()["llama-3.1-8b-instruct"].config)


def captured(version: tuple[int, int], max_num_seqs: int, **capture: Any) -> int:
    """The graphs counted at a max_num_batched_tokens (8192) above every size these tests give."""
    return captured_cuda_graphs(version, max_num_seqs, **capture, max_num_batched_tokens=8192)


def test_a_largest_capture_size_cuts_the_default_pattern() -> None:
    # akamaslabs' study 10 on vLLM 0.29: --max-num-seqs 256 --max-cudagraph-capture-size 256:
    # 1, 2, 4 and every 8 to 256 (35 sizes), each also a FULL decode graph; the default captures
    # up to 512 (51 PIECEWISE).
    assert captured((0, 29), 256, max_capture_size=256) == 35 + 35
    assert captured((0, 29), 256) == 51 + 35
    # Past 512 the pattern goes on every 16 sizes.
    assert captured((0, 19), 1024, max_capture_size=1024) == 2 * (51 + 32)
    assert captured((0, 10), 256, max_capture_size=16) == 5  # 1 2 4 8 16, no FULL


@pytest.mark.parametrize(
    ("mode", "graphs"),
    [
        (None, 35 + 19),  # 0.11's default, FULL_AND_PIECEWISE (the L4 log of 0.11.0 at 128)
        ("FULL_AND_PIECEWISE", 35 + 19),
        ("PIECEWISE", 35),
        ("FULL", 35),
        ("FULL_DECODE_ONLY", 19),
        ("NONE", 0),
    ],
)
def test_the_cudagraph_mode_sets_which_graphs_each_size_gets(mode: str | None, graphs: int) -> None:
    assert captured((0, 11), 128, mode=mode) == graphs


def test_a_capture_list_is_taken_as_it_is() -> None:
    # V0 0.8.3's engine line in vllm#14447: "cudagraph_capture_sizes":[8,4,2,1]
    assert captured((0, 8), 256, capture_sizes=(1, 2, 4, 8)) == 4
    assert captured((0, 21), 4, capture_sizes=(1, 2, 4, 8)) == 4 + 3


@pytest.mark.parametrize(
    ("max_size", "cuda_graph_sizes", "config", "sizes", "largest"),
    [
        (None, None, None, None, None),
        (256, None, None, None, 256),
        (None, "256", None, None, 256),
        (None, "8, 4 2 1", None, (1, 2, 4, 8), None),
        (None, None, '{"cudagraph_capture_sizes": [8, 4, 2, 1]}', (1, 2, 4, 8), None),
        (None, None, '{"max_cudagraph_capture_size": 128}', None, 128),
        (8, None, '{"cudagraph_capture_sizes": [1, 8]}', (1, 8), None),
        (None, None, '{"cudagraph_mode": "piecewise"}', None, None),
    ],
)
def test_capture_sizes_from_vllm_options(
    max_size: int | None,
    cuda_graph_sizes: str | None,
    config: str | None,
    sizes: tuple[int, ...] | None,
    largest: int | None,
) -> None:
    capture = capture_sizes(max_size, cuda_graph_sizes, config)
    assert (capture.sizes, capture.max_size) == (sizes, largest)
    assert capture.mode == ("PIECEWISE" if config and "mode" in config else None)


@pytest.mark.parametrize(
    ("max_size", "cuda_graph_sizes", "config", "message"),
    [
        (None, None, "3", r"^compilation_config: the optimization level -O3 is not modelled"),
        (None, None, "{level: 3", r"^compilation_config: expected a JSON object"),
        (None, None, "[1, 2]", r"^compilation_config: expected a JSON object"),
        (None, None, '{"cudagraph_capture_sizes": [0]}', r"cudagraph_capture_sizes: expected"),
        (None, None, '{"cudagraph_capture_sizes": 8}', r"cudagraph_capture_sizes: expected a n"),
        (None, "1 two", None, r"^cuda_graph_sizes: expected integers"),
        (256, "512", None, r"^max_cudagraph_capture_size and cuda_graph_sizes: disagree"),
        (None, "1 2", '{"cudagraph_capture_sizes": [1, 4]}', r"two different capture lists"),
        (4, None, '{"cudagraph_capture_sizes": [1, 8]}', r"disagree on the largest"),
        (None, None, '{"cudagraph_mode": "SOMETIMES"}', r"^compilation_config.cudagraph_mode: "),
    ],
)
def test_capture_sizes_refuses_what_vllm_would_not_take(
    max_size: int | None, cuda_graph_sizes: str | None, config: str, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        capture_sizes(max_size, cuda_graph_sizes, config)


def test_plan_counts_fewer_graphs_names_unread_keys_and_eager_has_none() -> None:
    base = VllmSettings(gpu_memory_bytes=80 * GIB, gpu=traits("h100-sxm"), vllm_version="0.29",
                        max_num_seqs=256)  # fmt: skip
    default = plan_vllm(LLAMA, base)
    capped = plan_vllm(LLAMA, VllmSettings(**{**base.__dict__, "max_cudagraph_capture_size": 256}))
    assert capped.cuda_graph_bytes / default.cuda_graph_bytes == pytest.approx(70 / 86, rel=1e-6)
    assert capped.kv_cache_bytes > default.kv_cache_bytes  # 0.29 takes graphs off the budget
    noted = plan_vllm(
        LLAMA, VllmSettings(**{**base.__dict__, "compilation_config_unread": ("level",)})
    )
    assert "compilation_config keys the plan does not read: level" in noted.notes
    none = VllmSettings(**{**base.__dict__, "cudagraph_mode": "NONE"})
    assert plan_vllm(LLAMA, none).cuda_graph_bytes == 0
    eager = VllmSettings(
        **{**base.__dict__, "enforce_eager": True, "cudagraph_capture_sizes": (1, 2)}
    )
    assert plan_vllm(LLAMA, eager).cuda_graph_bytes == 0


def test_calc_vram_reads_vllms_capture_options() -> None:
    args = ("calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm",
            "--vllm-version", "0.29", "--max-num-seqs", "256")  # fmt: skip
    default = json_output(*args)["vllm_plan"]
    capped = json_output(*args, "--max-cudagraph-capture-size", "256")["vllm_plan"]
    listed = json_output(*args, "-O", '{"cudagraph_capture_sizes": [1, 2, 4, 8], "level": 3}')
    assert capped["cuda_graph_bytes"] / default["cuda_graph_bytes"] == pytest.approx(70 / 86, 1e-6)
    graphs = listed["vllm_plan"]["cuda_graph_bytes"]
    assert graphs / default["cuda_graph_bytes"] == pytest.approx(8 / 86, rel=1e-6)
    assert "compilation_config keys the plan does not read: level" in listed["vllm_plan"]["notes"]


def test_no_size_above_max_num_batched_tokens_is_captured() -> None:
    # vllm/config/vllm.py VllmConfig._set_cudagraph_sizes (0.11.1 on): the largest size is
    # min(max_num_batched_tokens, max_cudagraph_capture_size); a given list loses larger sizes.
    batched = {"max_num_batched_tokens": 256}
    assert captured_cuda_graphs((0, 29), 256, None, 10**8, **batched) == 35 + 35
    assert captured_cuda_graphs((0, 29), 256, None, None, **batched) == 35 + 35
    assert captured_cuda_graphs((0, 29), 4, (1, 2, 4, 8, 4096), **batched) == 4 + 3


def test_calc_vram_clamps_a_capture_size_above_max_num_batched_tokens() -> None:
    # The hostile trial: a capture size of 10^8 at 2048 batched tokens planned 56,488 GiB of
    # graphs; vLLM captures up to 2048, as if the capture size were 2048.
    args = ("calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm",
            "--vllm-version", "0.29", "--max-num-batched-tokens", "2048")  # fmt: skip
    huge = json_output(*args, "--max-cudagraph-capture-size", "100000000")["vllm_plan"]
    clamped = json_output(*args, "--max-cudagraph-capture-size", "2048")["vllm_plan"]
    assert huge["cuda_graph_bytes"] == clamped["cuda_graph_bytes"] < 10 * GIB
    listed = json_output(*args, "--cuda-graph-sizes", "1 2 4 8 100000000")["vllm_plan"]
    few = json_output(*args, "--cuda-graph-sizes", "1 2 4 8")["vllm_plan"]
    assert listed["cuda_graph_bytes"] == few["cuda_graph_bytes"]


def test_the_default_sizes_step_by_16_above_256_from_the_0_11_1_patch() -> None:
    # VllmConfig._set_cudagraph_sizes: 1, 2, 4 and every 8 up to the largest size in 0.11.0
    # (vllm/config/__init__.py of its sdist: range(8, n + 1, 8)); every 16 above 256 from 0.11.1
    # (vllm/config/vllm.py: range(256, n + 1, 16)). The plan read 0.11.1 as 0.11, stepping by 8.
    assert captured((0, 11, 0), 256) == 67 + 35
    assert captured((0, 11, 1), 256) == 51 + 35
    base = VllmSettings(gpu_memory_bytes=80 * GIB, gpu=traits("h100-sxm"), max_num_seqs=256)
    older = plan_vllm(LLAMA, VllmSettings(**{**base.__dict__, "vllm_version": "0.11.0"}))
    newer = plan_vllm(LLAMA, VllmSettings(**{**base.__dict__, "vllm_version": "0.11.1"}))
    assert newer.cuda_graph_bytes / older.cuda_graph_bytes == pytest.approx(86 / 102, rel=1e-3)


def test_a_compiled_list_above_max_num_batched_tokens_fails_before_0_11_1() -> None:
    # 0.8.5-0.11.0 cut only the list they built themselves at max_num_batched_tokens; a
    # --compilation-config cudagraph_capture_sizes list replaced it whole, and capturing a size
    # above max_num_batched_tokens failed GPUModelRunner._dummy_run's assertion. 0.11.1 drops it.
    args = ("calc", "vram", "--model", "llama-3.1-8b-instruct", "--gpu", "h100-sxm",
            "--max-num-batched-tokens", "256")  # fmt: skip
    listed = ("-O", '{"cudagraph_capture_sizes": [1, 2, 4, 8, 512]}')
    old = json_output(*args, *listed, "--vllm-version", "0.11.0")
    assert old["fits"] is False
    assert old["reason"].startswith(
        "vLLM would refuse to start: AssertionError capturing CUDA graphs: "
        "compilation_config.cudagraph_capture_sizes goes up to 512, above max_num_batched_tokens "
        "(256); vLLM 0.11.0 captures every size listed (0.11.1 drops the larger ones)"
    )
    assert json_output(*args, *listed, "--vllm-version", "0.11.1")["fits"] is True
    # --cuda-graph-sizes was the scheduler's list, which 0.11.0 cut: it starts.
    cut = json_output(*args, "--cuda-graph-sizes", "1 2 4 8 512", "--vllm-version", "0.11.0")
    assert cut["fits"] is True


def test_before_0_10_the_default_sizes_go_to_512_whatever_max_num_seqs() -> None:
    # vllm/config.py of the 0.7.3 and 0.8.5 sdists: the V1 engine's list is [1, 2, 4] +
    # range(8, 513, 8); 0.9.0 and 0.9.2 default SchedulerConfig.cuda_graph_sizes to [512]; 0.10.0
    # sets it to [min(max_num_seqs x 2, 512)]. The plan capped 0.8 and 0.9 at 2 x max_num_seqs.
    assert captured((0, 9), 64) == 67
    assert captured((0, 8), 64, max_capture_size=128) == 19  # --cuda-graph-sizes 128 (0.9)
    assert captured((0, 10), 64) == 19
    base = VllmSettings(gpu_memory_bytes=80 * GIB, gpu=traits("h100-sxm"), max_num_seqs=64)
    plans = {
        version: plan_vllm(LLAMA, VllmSettings(**{**base.__dict__, "vllm_version": version}))
        for version in ("0.9.2", "0.10.0")
    }
    graphs = plans["0.9.2"].cuda_graph_bytes / plans["0.10.0"].cuda_graph_bytes
    assert graphs == pytest.approx(67 / 19, rel=1e-3)
