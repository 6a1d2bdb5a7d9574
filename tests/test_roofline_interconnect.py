"""The tensor-parallel traffic term of the roofline bound (`calculators.interconnect`): two ring
all-reduces per layer of batch × hidden × activation bytes, 2 (N − 1) / N of each on every GPU,
over the GPU's link, after the step's memory reads; worked out by hand for Llama 3.1 70B."""

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.decode_batch import DecodeBatch
from infermeter.calculators.errors import InputError
from infermeter.calculators.interconnect import (
    Link,
    decode_step_traffic,
    link_joining,
    ring_allreduce_bytes_per_gpu,
)
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.quantization import WeightFormat, weight_format
from infermeter.calculators.roofline import (
    decode_tokens_per_second_bound,
    deployment_throughput_bound,
)
from infermeter.registry.catalog import gpu_links, load_gpus, load_models

# Llama 3.1 70B: hidden 8192, 80 layers; bf16 activations (2 bytes).
HIDDEN, LAYERS, BF16 = 8192, 80, 2
PCIE5 = Link("PCIe 5.0 x16", 63.0)
GPUS = load_gpus()


def _arch() -> ModelArch:
    return parse_config(load_models()["llama-3.1-70b-instruct"].config)


def test_interconnect_llama_70b_tp8_traffic_is_the_hand_worked_ring() -> None:
    traffic = decode_step_traffic(_arch(), ParallelLayout(8), batch=16, activation_bytes=BF16)
    # 2 all-reduces × 80 layers × 16 × 8192 × 2 bytes = 41,943,040 bytes, 7/4 of it per GPU
    assert traffic.tensor_parallel_bytes == 73_400_320
    assert traffic.pipeline_bytes == 0
    assert ring_allreduce_bytes_per_gpu(1000, 2) == 1000
    assert ring_allreduce_bytes_per_gpu(1000, 1) == 0  # one GPU reduces nothing


def test_interconnect_pipeline_stages_share_the_layers_and_send_their_activations() -> None:
    traffic = decode_step_traffic(_arch(), ParallelLayout(4, 2), batch=16, activation_bytes=BF16)
    # 40 layers a stage: 2 × 40 × 16 × 8192 × 2 × 6/4; one boundary: 16 × 8192 × 2 / 4 ranks
    assert traffic.tensor_parallel_bytes == 2 * 40 * 16 * HIDDEN * BF16 * 6 / 4
    assert traffic.pipeline_bytes == 16 * HIDDEN * BF16 / 4


def test_interconnect_bound_adds_the_link_time_to_the_memory_time() -> None:
    arch = _arch()
    fmt = weight_format(arch)
    sixteen = DecodeBatch(ParallelLayout(8), 1024, 16)
    alone = decode_tokens_per_second_bound(arch, fmt, 1792e9, sixteen)
    linked = decode_tokens_per_second_bound(arch, fmt, 1792e9, sixteen, link=PCIE5)
    assert alone.interconnect_seconds_per_step == 0  # no link given: no traffic counted
    assert linked.interconnect_seconds_per_step == pytest.approx(73_400_320 / 63e9)  # 1.165 ms
    step = alone.bytes_per_step / 1792e9 + 73_400_320 / 63e9
    assert linked.tokens_per_second == pytest.approx(16 / step)
    assert linked.tokens_per_second < alone.tokens_per_second


def test_interconnect_bound_falls_when_the_bytes_double_or_the_link_halves() -> None:
    arch = _arch()
    fmt, fp32 = weight_format(arch), weight_format(arch, None, "float32")

    def traffic_seconds(link: Link, fmt_: WeightFormat = fmt) -> float:
        sixty_four = DecodeBatch(ParallelLayout(8), 1024, 64)
        bound = decode_tokens_per_second_bound(arch, fmt_, 1792e9, sixty_four, link=link)
        return bound.interconnect_seconds_per_step

    base = traffic_seconds(PCIE5)
    assert traffic_seconds(Link("half", 31.5)) == pytest.approx(2 * base)
    assert traffic_seconds(PCIE5, fp32) == pytest.approx(2 * base)  # 4-byte activations
    sixty_four = DecodeBatch(ParallelLayout(8), batch=64)
    wide = deployment_throughput_bound(arch, fmt, 1792e9, None, sixty_four, links=[PCIE5])
    narrow = deployment_throughput_bound(
        arch, fmt, 1792e9, None, sixty_four, links=[Link("half", 31.5)]
    )
    assert narrow.tokens_per_second < wide.tokens_per_second
    assert narrow.interconnect_seconds_per_step == pytest.approx(
        2 * wide.interconnect_seconds_per_step
    )


def test_interconnect_link_joining_takes_the_fastest_link_that_joins_the_gpus() -> None:
    bridge = Link("NVLink bridge", 300.0, max_gpus=2)
    assert link_joining([PCIE5, bridge], 2) == bridge
    assert link_joining([PCIE5, bridge], 4) == PCIE5
    assert link_joining([bridge], 4) is None
    assert link_joining([], 2) is None


def test_interconnect_label_names_the_link_or_says_none_is_sourced() -> None:
    arch = _arch()
    fmt = weight_format(arch)

    def label(gpu_id: str, count: int) -> str:
        gpu = GPUS[gpu_id]
        return deployment_throughput_bound(
            arch,
            fmt,
            gpu.memory_bandwidth_gb_s * 1e9,
            None,
            DecodeBatch(ParallelLayout(count), batch=8),
            links=gpu_links(gpu),
        ).interconnect

    assert label("rtx-5090", 8) == "includes TP all-reduce over PCIe 5.0 x16"
    assert label("h100-sxm", 8) == "includes TP all-reduce over NVLink 4"
    assert label("h100-pcie", 2) == "includes TP all-reduce over NVLink 4 bridge"
    assert label("h100-pcie", 4) == "includes TP all-reduce over PCIe 5.0 x16"
    assert GPUS["rtx-pro-6000"].interconnect_links == []  # its PCIe 5.0 is not cited
    assert label("rtx-pro-6000", 2) == (
        "TP all-reduce not included: no sourced interconnect figure for 2 GPUs"
    )
    assert label("h100-sxm", 16) == (  # an 8-GPU baseboard's NVLink joins 8
        "TP all-reduce not included: no sourced interconnect figure for 16 GPUs"
    )
    assert label("h100-sxm", 1) == "one GPU: no traffic between GPUs"


def test_interconnect_rejects_a_batch_or_parallel_size_below_one() -> None:
    with pytest.raises(InputError, match="batch"):
        decode_step_traffic(_arch(), ParallelLayout(), 0, BF16)
    with pytest.raises(InputError, match="tensor_parallel_size"):
        decode_step_traffic(_arch(), ParallelLayout(0), 1, BF16)
