"""Expert parallelism's all-to-all buffers (calculators.all2all) against vLLM's and DeepEP's own
sizing, per release. The figures below are worked out by hand from the sources the module cites:
DeepEP's `LowLatencyLayout` (csrc/config.hpp at 3861241a5) and vLLM's DeepEP managers
(vllm/distributed/device_communicators/all2all.py in the release sdists, e.g. v0.19.1 at
b1388b1fb and v0.20.0 at b8160878f; the full list is in calculators/all2all.py)."""

import pytest
from catalog_gpus import traits

from infermeter.calculators.all2all import all2all_buffers, low_latency_rdma_bytes
from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import InputError
from infermeter.calculators.memory import memory_report
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.vllm_plan import plan_vllm
from infermeter.calculators.vllm_settings import GIB, MIB, VllmSettings, parse_version
from infermeter.registry.catalog import load_models

MODELS = load_models()
MOE = parse_config(MODELS["qwen3-30b-a3b"].config)  # hidden 2048, 128 experts


def _plan(**settings: object):  # type: ignore[no-untyped-def]
    base: dict[str, object] = {
        "gpu_memory_bytes": 141 * GIB,
        "gpu": traits("h200-sxm"),
        "max_model_len": 8192,
        "data_parallel_size": 2,
        "enable_expert_parallel": True,
    }
    return plan_vllm(MOE, VllmSettings(**(base | settings)))  # type: ignore[arg-type]


def test_deepep_low_latency_rdma_size_is_deepeps_layout_for_deepseek_v3() -> None:
    # DeepSeek-V3: hidden 7168 (56 scales), 256 experts, vLLM's 256 tokens per rank.
    dispatch = 16 + max(7168 * 2, 7168 + 56 * 4)  # 14,352 B: int4 header + BF16 row
    combine = 56 * 4 + 7168 * 2  # 14,560 B: bf16x2 min/max per 128 channels + BF16 row
    send = max(256 * dispatch, 256 * 256 * combine)  # 954,204,160
    receive = 256 * 256 * max(dispatch, combine)  # 954,204,160
    total = 2 * send + 2 * receive + 2 * 1024  # two odd/even sets, 1 KiB signalling each
    assert total == 3_816_818_688
    assert low_latency_rdma_bytes(256, 7168, 256) == total + 128  # DeepEP's extra step
    # Qwen3-30B-A3B at 256 and 8192 tokens: the combine receive buffer rules, linear in tokens
    small = low_latency_rdma_bytes(256, 2048, 128)
    assert small == 2 * 2 * 128 * 256 * (16 * 4 + 2048 * 2) + 2 * 512 + 128
    assert low_latency_rdma_bytes(8192, 2048, 128) - 128 - 1024 == 32 * (small - 128 - 1024)


def test_default_backends_keep_no_buffer_per_release() -> None:
    old, new = _plan(vllm_version="0.10.1"), _plan(vllm_version="0.19")
    assert (old.all2all_backend, new.all2all_backend) == ("naive", "allgather_reducescatter")
    assert old.all2all_buffer_bytes == new.all2all_buffer_bytes == 0
    assert "all2all_buffer_bytes" not in new.estimated_terms
    assert any("allgather_reducescatter (the release's default) keeps no buffer" in note
               for note in new.notes)  # fmt: skip


def test_deepep_high_throughput_buffers_come_off_the_kv_cache() -> None:
    default = _plan()
    intranode = _plan(all2all_backend="deepep_high_throughput")
    # VLLM_DEEPEP_BUFFER_SIZE_MB 1024 of NVLink buffer + DeepEP's 32 MiB workspace, no RDMA
    assert intranode.all2all_buffer_bytes == (1024 + 32) * MIB
    assert default.kv_cache_bytes - intranode.kv_cache_bytes == (1024 + 32) * MIB
    assert "all2all_buffer_bytes" in intranode.estimated_terms
    # 16 ranks span two 8-GPU nodes: an RDMA buffer of the same size
    internode = _plan(all2all_backend="deepep_high_throughput", data_parallel_size=16)
    assert internode.all2all_buffer_bytes == (2 * 1024 + 32) * MIB
    halved = _plan(all2all_backend="deepep_high_throughput", deepep_buffer_size_mb=512)
    assert halved.all2all_buffer_bytes == (512 + 32) * MIB
    # and the simple model's runtime overhead carries them too
    settings = VllmSettings(
        gpu_memory_bytes=141 * GIB,
        max_model_len=8192,
        data_parallel_size=2,
        enable_expert_parallel=True,
        all2all_backend="deepep_high_throughput",
    )
    report = memory_report(MOE, settings, 8192, 2)
    plan = report.plan
    assert report.simple.runtime_overhead_bytes == (
        plan.activation_peak_bytes + plan.non_torch_bytes + (1024 + 32) * MIB
    )


def test_deepep_low_latency_tokens_per_rank_follow_the_release() -> None:
    def rdma(version: str, batched: int) -> int:
        buffers = all2all_buffers(
            MOE,
            parse_version(version),
            backend="deepep_low_latency",
            layout=ParallelLayout(data_parallel_size=2, enable_expert_parallel=True),
            max_num_batched_tokens=batched,
        )
        assert buffers.nvlink_bytes == 1024 * MIB
        return buffers.rdma_bytes

    # up to 0.19 VLLM_MOE_DP_CHUNK_SIZE (256 tokens): 520 MiB, two 512 MiB steps of NVSHMEM's heap
    assert rdma("0.19", 8192) == rdma("0.19", 2048) == 2 * 512 * MIB
    # from 0.20 max_num_batched_tokens: 8192 tokens need 16.25 GiB, 33 steps
    assert rdma("0.20", 8192) == 33 * 512 * MIB
    assert rdma("0.20", 2048) == 9 * 512 * MIB
    assert low_latency_rdma_bytes(8192, 2048, 128) / GIB == pytest.approx(16.25, abs=0.01)
    # and from 0.20 this backend's default max_num_batched_tokens is 256 (batched DP MoE)
    plan = _plan(vllm_version="0.20", all2all_backend="deepep_low_latency")
    assert plan.max_num_batched_tokens == 256
    assert plan.all2all_buffer_bytes == (1024 + 2 * 512 + 32) * MIB
    assert _plan(
        vllm_version="0.19", all2all_backend="deepep_low_latency"
    ).max_num_batched_tokens == (8192)


def test_no_all2all_without_data_and_expert_parallelism() -> None:
    tp_only = _plan(data_parallel_size=1, tensor_parallel_size=2)
    assert (tp_only.all2all_backend, tp_only.all2all_buffer_bytes) == (None, 0)
    assert any("makes its all-to-all manager only with data_parallel_size > 1" in note
               for note in tp_only.notes)  # fmt: skip
    no_ep = _plan(enable_expert_parallel=False, all2all_backend="deepep_low_latency")
    assert (no_ep.all2all_backend, no_ep.all2all_buffer_bytes) == (None, 0)


@pytest.mark.parametrize(
    ("version", "backend", "expected"),
    [
        ("0.16", "pplx", "'pplx''s buffers are not modelled"),
        ("0.19", "mori", "'mori''s buffers are not modelled"),
        ("0.10", "allgather_reducescatter", "first ships in vLLM 0.11"),
        ("0.9", "deepep_low_latency", "first ships in vLLM 0.10"),
        ("0.19", "DeepEP", "expected a lower-case name"),
    ],
)
def test_backends_not_modelled_or_not_in_the_release_are_refused(
    version: str, backend: str, expected: str
) -> None:
    with pytest.raises(InputError, match=r"^all2all_backend: ") as error:
        _plan(vllm_version=version, all2all_backend=backend)
    assert expected in str(error.value)


def test_removed_backends_fall_back_as_vllm_does() -> None:
    assert _plan(vllm_version="0.17", all2all_backend="pplx").all2all_backend == (
        "allgather_reducescatter"
    )
    assert _plan(vllm_version="0.18", all2all_backend="naive").all2all_backend == "naive"
    fallen = _plan(vllm_version="0.19", all2all_backend="naive")
    assert (fallen.all2all_backend, fallen.all2all_buffer_bytes) == ("allgather_reducescatter", 0)
    assert any("replaces the removed naive" in note for note in fallen.notes)
