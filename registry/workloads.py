"""What makes two load points comparable on a page: the same workload and the same scenario.

A workload is the requests' input and output lengths (fixed, a range, a distribution or a
dataset's own) and the dataset (by name, and by its file's SHA-256 where the result records
it: two files of one name are two workloads); a scenario is what the load point measured: a
closed loop at a concurrency, an open loop at a rate, offline (every request queued at once),
a server at an SLO (the highest rate that met stated bounds) or a static batch (requests
started together).
Throughput under 128→2048 tokens and under 1000→1000 tokens measures different work, and an
offline maximum is not a per-user figure: the site compares only within one model × workload ×
scenario.
"""

import hashlib
import json

from infermeter.calculators.perf_datasets import dataset_key, dataset_lengths
from infermeter.registry.models.identity import (
    DatasetLength,
    FixedLength,
    LengthDistribution,
    NormalLength,
    UniformLength,
    Workload,
)
from infermeter.registry.models.measurements import Load

SCENARIOS = {
    "closed": "closed loop (fixed concurrency)",
    "open": "open loop (arrival rate)",
    "offline": "offline (all requests queued at once)",
    "server_at_slo": "server at an SLO (highest rate or concurrency within stated bounds)",
    "static_batch": "static batch (requests started together and run as one batch)",
}


def _length(distribution: LengthDistribution) -> str:
    if isinstance(distribution, FixedLength):
        return f"{distribution.value:,}"
    if isinstance(distribution, UniformLength):
        return f"{distribution.min:,}–{distribution.max:,}"
    if isinstance(distribution, NormalLength):
        return f"~{distribution.mean:,.0f}"
    return "dataset" if distribution.mean is None else f"dataset (mean {distribution.mean:,.0f})"


def _dataset_lengths(workload: Workload) -> str | None:
    """A named data set's own lengths, where the workload states none of its own: a mean where
    the calculators know it from a source (`its prompts → mean 3,886 tokens`; their input
    means are mostly typical figures, not stated ones), else `its prompts → its outputs`; None
    for any other workload."""
    lengths = (workload.input_len, workload.output_len)
    if not workload.dataset or any(
        not isinstance(length, DatasetLength) or length.mean is not None for length in lengths
    ):
        return None
    if dataset_key(workload.dataset) is None:
        return "its prompts → its outputs"
    known = dataset_lengths(workload.dataset)
    prompts = "its prompts" if known.input_approximate else f"mean {known.input_tokens:,.0f}"
    return f"{prompts} → mean {known.output_tokens:,.0f} tokens"


def workload_label(workload: Workload) -> str:
    """The workload in a reader's words, e.g. `1,000 → 1,000 tokens`, `dataset (mean 250) →
    dataset (mean 180) tokens, open-orca` or `its prompts → mean 3,886 tokens, MLPerf
    Inference deepseek-r1 data set` (a data set's own lengths: `_dataset_lengths`)."""
    if workload.trace is not None:
        return trace_label(workload)
    own = _dataset_lengths(workload)
    text = own or f"{_length(workload.input_len)} → {_length(workload.output_len)} tokens"
    if workload.turns is not None:
        text += f", {_length(workload.turns)} turns"
    if workload.dataset_sha256 is not None:  # two files of one name read apart
        text += f", {workload.dataset or 'dataset'} (sha256 {workload.dataset_sha256[:8]})"
        return text
    return f"{text}, {workload.dataset}" if workload.dataset else text


def trace_label(workload: Workload) -> str:
    """A trace replay in a reader's words, e.g. `trace conversation_trace.jsonl (sha256
    1a2b3c4d), 40 of 12,031 requests, speed 2×, 512-token blocks`."""
    trace = workload.trace
    assert trace is not None
    if trace.speed is not None:
        pace = f"speed {trace.speed:g}×"
    elif trace.rate is not None:
        pace = f"re-timed {trace.rate:g} req/s"
    else:
        pace = f"{trace.concurrency} roots at once"
    share = (
        f"{trace.requests:,} requests"
        if trace.requests == trace.requests_in_file
        else f"{trace.requests:,} of {trace.requests_in_file:,} requests"
    )
    blocks = f", {trace.block_size}-token blocks" if trace.block_size is not None else ""
    return f"trace {trace.name} (sha256 {trace.sha256[:8]}), {share}, {pace}{blocks}"


def workload_key(workload: Workload) -> str:
    """A short hash of what makes two workloads the same: lengths, turns and dataset (its
    name, and its file's content hash when the result records one)."""
    data = {
        "input_len": workload.input_len.model_dump(mode="json"),
        "output_len": workload.output_len.model_dump(mode="json"),
        "turns": None if workload.turns is None else workload.turns.model_dump(mode="json"),
        "dataset": workload.dataset,
    }
    if workload.dataset_sha256 is not None:  # absent, a result's key is what it always was
        data["dataset_sha256"] = workload.dataset_sha256
    if workload.trace is not None:  # a replay: the trace, its cut and its pace, not lengths
        trace = workload.trace
        data["trace"] = {
            "sha256": trace.sha256,
            "block_size": trace.block_size,
            "requests": trace.requests,
            "speed": trace.speed,
            "rate": trace.rate,
        }
    text = json.dumps(data, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def scenario(load: Load) -> str:
    """`closed`, `open`, `offline`, `server_at_slo` or `static_batch` (a key of `SCENARIOS`): a
    rate or a concurrency search's answer is a server at an SLO, whatever its arrival."""
    if load.slo_search is not None:
        return "server_at_slo"
    if load.arrival in ("offline", "static_batch"):
        return load.arrival
    return "closed" if load.arrival == "closed" else "open"
