"""A result as `bench run` makes it (`bench.result.assemble.build_result` over
`bench.run.metrics.summarize_point`), from request records a test writes: one closed-loop point
of llama-3.1-8b-instruct on one H100 SXM, each request sent 50 ms after the one before."""

from __future__ import annotations

import datetime as dt

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.result.assemble import build_result
from infermeter.bench.result.deployment import Deployment, unchecked
from infermeter.bench.result.provenance import Provenance
from infermeter.bench.run.config import RunConfig, RunResult
from infermeter.bench.run.metrics import summarize_point
from infermeter.bench.telemetry.host import host_info
from infermeter.bench.workloads.lengths import parse_length
from infermeter.registry.models import EngineIdentity, GpuIdentity, ModelIdentity, Result

MS = 1_000_000  # ns


def request_record(i: int, ttft_ns: int, tokens: int, ok: bool = True) -> RequestRecord:
    """Request `i`, sent i × 50 ms after the first: its first token `ttft_ns` later, then one
    token every 10 ms; a failed one (`ok` false) got HTTP 500 and no token."""
    send = i * 50 * MS
    times = [send + ttft_ns + k * 10 * MS for k in range(tokens)] if ok else []
    return RequestRecord(
        index=i, send_ns=send, end_ns=(times or [send + MS])[-1], token_times_ns=times,
        chunk_chars=[3] * len(times), output_tokens=tokens if ok else None, input_tokens=8,
        error=None if ok else "http_status", http_status=None if ok else 500,
    )  # fmt: skip


def h100_deployment(model_id: str, hf_repo: str, gpu_count: int = 1) -> Deployment:
    """`gpu_count` H100 SXM GPUs serving catalog model `model_id` (`hf_repo`) on vLLM 0.9.1,
    unchecked as a live run's (the builder refuses a bad one)."""
    return Deployment(
        gpu=unchecked(GpuIdentity, id="h100-sxm", count=gpu_count, form_factor="sxm"),
        engine=unchecked(EngineIdentity, name="vllm", version="0.9.1"),
        model=unchecked(ModelIdentity, id=model_id, hf_repo=hf_repo),
    )


def measured_result(records: list[RequestRecord]) -> Result:
    """The result of one point at concurrency 2 made of `records` (no SLO of its own)."""
    config = RunConfig(
        endpoint="http://127.0.0.1:1", input_len=parse_length("8"), output_len=parse_length("4")
    )
    run = RunResult(
        endpoint=config.endpoint, model="meta-llama/Llama-3.1-8B-Instruct", api="completions",
        profile="chat", seed=0, prompt_salt=0, points=[summarize_point(records, concurrency=2)],
    )  # fmt: skip
    now = dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC)
    deployment = h100_deployment("llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct")
    provenance = Provenance("infermeter bench run", now, now, "octocat", host_info(None))
    return build_result(run, config, deployment, [], None, provenance)
