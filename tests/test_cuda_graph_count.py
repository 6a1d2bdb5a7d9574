"""How many CUDA graphs vLLM captures by default, against the counts its own logs print; the graph
memory estimate grows with that count (calculators.vllm_overheads.cuda_graph_bytes)."""

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.vllm_overheads import captured_cuda_graphs, cuda_graph_bytes
from infermeter.registry.catalog import load_models


def test_graph_count_matches_the_capture_lists_vllm_logs() -> None:
    # 0.8.5.post1 at the 256-sequence default: "cudagraph_capture_sizes":[512,504,...,8,4,2,1]
    # (github.com/jayashan10/Deepseek-qwen-deployment vllm_server.log): 67 PIECEWISE graphs.
    assert captured_cuda_graphs((0, 8), 256, max_num_batched_tokens=8192) == 67
    # 0.11.0 at --max-num-seqs 128: 35 PIECEWISE (to 256) and 19 FULL (to 128)
    # (github.com/abinavChandar/demo_env_l4 vllm.log).
    assert captured_cuda_graphs((0, 11), 128, max_num_batched_tokens=8192) == 35 + 19
    # 0.21.0 at the 256-sequence default: "PIECEWISE=51 (largest=512), FULL=35 (largest=256)"
    # (LMCache/LMCache#3430).
    assert captured_cuda_graphs((0, 21), 256, max_num_batched_tokens=8192) == 51 + 35


def test_fewer_sequences_capture_fewer_graphs_and_less_graph_memory() -> None:
    arch = parse_config(load_models()["llama-3.1-8b-instruct"].config)
    default = cuda_graph_bytes(arch, False, (0, 19), 1, 1024, max_num_batched_tokens=8192)
    fewer = cuda_graph_bytes(arch, False, (0, 11), 1, 128, max_num_batched_tokens=8192)
    assert 0 < fewer < default * 0.6
    assert cuda_graph_bytes(arch, True, (0, 19), 1, 128, max_num_batched_tokens=8192) == 0
