"""A result as `bench run` makes it (`bench.result.assemble.build_result` over
`bench.run.metrics.summarize_point`), from request records a test writes: one closed-loop point
of llama-3.1-8b-instruct on one H100 SXM, each request sent 50 ms after the one before."""

from __future__ import annotations

import datetime as dt

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.result.assemble import build_result
from infermeter.bench.result.deployment import Deployment
from infermeter.bench.result.provenance import Provenance
from infermeter.bench.run.config import RunConfig, RunResult
from infermeter.bench.run.metrics import summarize_point
from infermeter.bench.run.point_summary import PointSummary
from infermeter.bench.telemetry.host import host_info
from infermeter.bench.workloads.lengths import parse_length
from infermeter.registry.builder import unchecked
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


def two_token_records(
    count: int, gap_ns: int, latency_ns: int, input_tokens: int = 0
) -> list[RequestRecord]:
    """`count` requests sent `gap_ns` apart, each answered with two tokens of 4 characters: the
    first half of `latency_ns` after it was sent, the second `latency_ns` after."""
    return [
        RequestRecord(
            index=i,
            send_ns=i * gap_ns,
            end_ns=i * gap_ns + latency_ns,
            token_times_ns=[i * gap_ns + latency_ns // 2, i * gap_ns + latency_ns],
            chunk_chars=[4, 4],
            output_tokens=2,
            input_tokens=input_tokens,
        )
        for i in range(count)
    ]


def stored_run(
    run: RunResult,
    config: RunConfig,
    deployment: Deployment,
    command: str = "infermeter bench run",
    at: dt.datetime | None = None,
) -> Result:
    """`run` as `bench run` stores it for `deployment`: started and ended `at` (now when None)
    by octocat, on a host without GPU telemetry, with no SLO or model entry of its own."""
    now = dt.datetime.now(dt.UTC) if at is None else at
    provenance = Provenance(command, now, now, "octocat", host_info(None))
    return build_result(run, config, deployment, [], None, provenance)


def one_point_result(point: PointSummary, deployment: Deployment, output_len: str = "4") -> Result:
    """The result of one `point` of llama-3.1-8b-instruct's chat profile (8-token prompts,
    `output_len`-token answers) for `deployment`, at noon on 1 December 2026."""
    config = RunConfig(
        endpoint="http://127.0.0.1:1",
        input_len=parse_length("8"),
        output_len=parse_length(output_len),
    )
    run = RunResult(
        endpoint=config.endpoint, model="meta-llama/Llama-3.1-8B-Instruct", api="completions",
        profile="chat", seed=0, prompt_salt=0, points=[point],
    )  # fmt: skip
    return stored_run(run, config, deployment, at=dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC))


def measured_result(records: list[RequestRecord]) -> Result:
    """The result of one point at concurrency 2 made of `records` (no SLO of its own)."""
    deployment = h100_deployment("llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct")
    return one_point_result(summarize_point(records, concurrency=2), deployment)
