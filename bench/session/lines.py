"""The lines a session tells: vLLM's startup figures, a split over nodes, and why an
incomplete run stopped and what of it was written where."""

from __future__ import annotations

from pathlib import Path

from infermeter.bench.launch.multinode import NodeSplit
from infermeter.bench.launch.vllm_log import StartupFigures
from infermeter.bench.session.config import SessionOutcome
from infermeter.calculators.plural import counted


def incomplete_line(outcome: SessionOutcome, output: Path | None) -> str:
    """Why an incomplete run stopped, and what of it was written where (`output`: the
    result's path the run was given, None when it was to write none)."""
    line = f"the run is incomplete: {outcome.run.stop_reason}"
    if outcome.output is not None:
        return f"{line}; the measured points are in {outcome.output}"
    if output is None:
        return line
    if outcome.raw_records is not None:
        return (
            f"{line}; no measured request of a load point completed, so there is no result; "
            f"the raw records of the requests that finished are in {outcome.raw_records}"
        )
    return f"{line}; no request finished, so nothing was written"


def startup_line(startup: StartupFigures) -> str:
    """vLLM's startup figures on one line: weights, KV cache, max concurrency, CUDA graphs."""
    parts = []
    if startup.weights_gib is not None:
        parts.append(f"weights {startup.weights_gib:g} GiB")
    if startup.available_kv_cache_gib is not None:
        parts.append(f"KV cache memory {startup.available_kv_cache_gib:g} GiB")
    if startup.kv_cache_tokens is not None:
        parts.append(f"KV cache {startup.kv_cache_tokens:,} tokens")
    if startup.max_concurrency is not None:
        tokens = startup.max_concurrency_tokens
        at = f" at {tokens:,} tokens" if tokens else ""
        parts.append(f"max concurrency {startup.max_concurrency:g}x{at}")
    if startup.cuda_graph_gib is not None:
        parts.append(f"CUDA graphs {startup.cuda_graph_gib:g} GiB")
    return ", ".join(parts) or "no startup figures in the log"


def split_line(split: NodeSplit) -> str:
    """`2 nodes × 8 GPUs`."""
    return f"{counted(split.nodes, 'node')} × {counted(split.gpus_per_node, 'GPU')}"
