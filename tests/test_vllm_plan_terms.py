"""The plan's overhead terms: which vLLM release counts what, and that every plan says which of
its figures are estimates.

CUDA graphs: vLLM's own startup message in 0.21 and later reads "CUDA graph memory profiling is
enabled (default since v0.21.0)" (e.g. a v0.27.1 log in https://github.com/gpustack/runner/pull/251);
in the releases before, the same place logs "In v0.19, CUDA graph memory profiling will be
enabled by default ... To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1"
(https://github.com/vllm-project/vllm/pull/30515), i.e. the graphs were captured after the KV
cache was sized and took memory outside gpu_memory_utilization.
"""

import pytest

from calculators.arch import parse_config
from calculators.vllm_plan import ESTIMATED_TERMS, GIB, VllmSettings, plan_vllm
from registry.catalog import load_models

MODELS = load_models()


def _plan(model_id: str, version: str, **settings: object):  # type: ignore[no-untyped-def]
    arch = parse_config(MODELS[model_id].config)
    return plan_vllm(
        arch,
        VllmSettings(
            gpu_memory_bytes=80 * GIB,
            gpu_memory_utilization=0.9,
            max_model_len=8192,
            vllm_version=version,
            **settings,  # type: ignore[arg-type]
        ),
    )


def test_cuda_graphs_enter_the_kv_budget_in_0_21_not_0_20() -> None:
    before = _plan("llama-3.1-8b-instruct", "0.20")
    after = _plan("llama-3.1-8b-instruct", "0.21")
    assert not before.cuda_graph_in_budget
    assert after.cuda_graph_in_budget
    assert after.cuda_graph_bytes > 0
    assert before.kv_cache_bytes - after.kv_cache_bytes == after.cuda_graph_bytes
    assert any("CUDA graphs are captured after" in note for note in before.notes)


def test_enforce_eager_has_no_cuda_graphs() -> None:
    plan = _plan("llama-3.1-8b-instruct", "0.21", enforce_eager=True)
    assert plan.cuda_graph_bytes == 0
    assert not plan.cuda_graph_in_budget


def test_every_plan_names_its_estimated_terms() -> None:
    plan = _plan("llama-3.1-8b-instruct", "0.19")
    names = plan.as_dict()["estimated_terms"]
    assert set(ESTIMATED_TERMS) <= set(names)
    for name in names:
        assert name in plan.as_dict()  # each names a figure the plan prints


def test_indexer_kv_layout_is_flagged_as_an_estimate() -> None:
    plan = _plan("deepseek-v3.2", "0.19", tensor_parallel_size=8)
    assert "kv_cache_bytes_per_token_per_layer" in plan.estimated_terms


@pytest.mark.parametrize(
    ("model_id", "needle"),
    [
        ("llama-4-scout-17b-16e-instruct", "chunked-attention layers are counted as full"),
        ("deepseek-v3", "multi-token-prediction layer(s)"),
    ],
)
def test_plan_notes_say_what_is_left_out_or_simplified(model_id: str, needle: str) -> None:
    plan = _plan(model_id, "0.19", tensor_parallel_size=8)
    assert any(needle in note for note in plan.notes)
