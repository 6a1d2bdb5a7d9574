"""The options of `infermeter bench run`, in the order `--help` lists them.

`run_options` puts them on a command; their values go, unchanged, into `bench.plan.RunOptions`
(all but --plan, --quiet and --json, which steer the command itself).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from bench.commands.bench_options import (
    extra_body,
    index_list,
    int_list,
    length,
    positive,
    rate_list,
)
from bench.trace import DEFAULT_BLOCK_SIZE
from bench.workloads import PROFILES

F = TypeVar("F", bound=Callable[..., Any])

_RUN_OPTIONS = (
    click.option(
        "--endpoint",
        metavar="URL",
        help="Root URL of a running OpenAI-compatible server (default: launch vLLM with --model).",
    ),
    click.option(
        "--model",
        help="Model to serve with vLLM (Hugging Face id or path); with --endpoint, the model id "
        "to request (default: the first that /v1/models lists).",
    ),
    click.option(
        "--tensor-parallel-size",
        "-tp",
        type=click.IntRange(min=1),
        help="vLLM: GPUs one replica is split over (also the result's GPU count with --endpoint).",
    ),
    click.option(
        "--pipeline-parallel-size",
        "-pp",
        type=click.IntRange(min=1),
        help="vLLM: pipeline stages of one replica; GPUs = tensor × pipeline parallel size.",
    ),
    click.option(
        "--ray-address",
        metavar="HOST:PORT",
        help="Launch vLLM over this Ray cluster (--distributed-executor-backend ray, RAY_ADDRESS), "
        "its ranks across the nodes; the result records nodes and GPUs per node.",
    ),
    click.option(
        "--max-model-len", type=click.IntRange(min=1), help="vLLM: longest sequence, tokens."
    ),
    click.option(
        "--gpu-memory-utilization",
        type=click.FloatRange(min=0, max=1, min_open=True),
        help="vLLM: fraction of GPU memory it may use.",
    ),
    click.option("--quantization", help="vLLM: weight quantization method, e.g. fp8, awq."),
    click.option("--kv-cache-dtype", help="vLLM: KV cache dtype, e.g. auto, fp8."),
    click.option(
        "--max-num-seqs", type=click.IntRange(min=1), help="vLLM: most sequences per batch."
    ),
    click.option("--load-format", help="vLLM: weight loading, e.g. dummy for random weights."),
    click.option(
        "--vllm-arg",
        "vllm_args",
        multiple=True,
        metavar="ARG",
        help="Any other `vllm serve` argument, repeatable; split like a shell would "
        "(--vllm-arg '--max-num-batched-tokens 8192').",
    ),
    click.option(
        "--vllm-executable",
        metavar="PATH",
        help="The vllm executable to run (default: vllm on PATH).",
    ),
    click.option(
        "--port",
        type=click.IntRange(min=1, max=65535),
        help="Port for the launched vLLM (default: a free one).",
    ),
    click.option(
        "--startup-timeout",
        type=float,
        default=1800.0,
        show_default=True,
        callback=positive,
        metavar="SECONDS",
        help="How long vLLM may take to answer /health.",
    ),
    click.option(
        "--output",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Result file to write (launching vLLM: default ./infermeter-result.json; with "
        "--endpoint: none unless given). vLLM's log goes beside it as <stem>.vllm.log.",
    ),
    click.option(
        "--raw-records",
        is_flag=True,
        help="Also write every request's record as <stem>.requests.jsonl.gz beside the result.",
    ),
    click.option(
        "--gpu",
        "gpu_id",
        metavar="ID",
        help="GPU catalog id for the result (default: detected through NVML where obvious).",
    ),
    click.option(
        "--model-id",
        metavar="ID",
        help="Model catalog id for the result (default: the catalog entry of --model's "
        "repository).",
    ),
    click.option(
        "--gpu-indices",
        callback=index_list,
        metavar="I[,I…]",
        help="With --endpoint: the GPUs the server runs on, as nvidia-smi numbers them, for GPU "
        "telemetry (default: CUDA_VISIBLE_DEVICES, else the only GPU or the busy ones).",
    ),
    click.option(
        "--engine",
        metavar="NAME",
        help="With --endpoint: the engine, e.g. sglang, tgi, llama.cpp, tensorrt-llm "
        "(default: what the server says; needed with --output when it says nothing).",
    ),
    click.option("--engine-version", metavar="V", help="With --engine: the engine's version."),
    click.option(
        "--server-command",
        metavar="COMMAND",
        help="With --endpoint: the command that started the server there, e.g. 'vllm serve MODEL "
        "--max-model-len 8192'; kept in the result, and its vLLM options are the serving settings.",
    ),
    click.option(
        "--nodes",
        type=click.IntRange(min=1),
        help="With --endpoint: the hosts its server spans (vLLM over a Ray cluster, e.g. a "
        "LeaderWorkerSet's pods); the result records the nodes and GPUs per node.",
    ),
    click.option(
        "--submitter", help="GitHub user name in the result (default: git's github.user)."
    ),
    click.option(
        "--price-per-hour",
        type=float,
        callback=positive,
        metavar="USD",
        help="Price of one GPU-hour for the cost table (default: cheapest on-demand in the "
        "catalog).",
    ),
    click.option(
        "--utilization",
        type=click.FloatRange(min=0, max=1, min_open=True),
        default=1.0,
        show_default=True,
        help="Fraction of paid hours doing useful work, for the effective hourly cost.",
    ),
    click.option(
        "--profile",
        type=click.Choice(sorted(PROFILES)),
        default="chat",
        show_default=True,
        help="Traffic profile: its input/output length distributions and default sweep.",
    ),
    click.option(
        "--concurrency",
        callback=int_list,
        metavar="N[,N…]",
        help="Closed loop: concurrent requests per point, e.g. 1,4,16,64.",
    ),
    click.option(
        "--request-rate",
        callback=rate_list,
        metavar="R[,R…]",
        help="Open loop: requests per second per point, e.g. 1,5,10.",
    ),
    click.option(
        "--turns",
        callback=length,
        metavar="SPEC",
        help="chat-multiturn: turns per session, same syntax as --input-len (default uniform:2:6).",
    ),
    click.option(
        "--think-time",
        type=click.FloatRange(min=0),
        metavar="SECONDS",
        help="chat-multiturn: mean pause between a reply and the next user message (default 2).",
    ),
    click.option(
        "--find-max-rate",
        is_flag=True,
        help="Search the highest open-loop rate whose p99 TTFT/TPOT/E2E meet the --slo-* bounds "
        "(MLPerf Server): a bracket from --search-start, then a bisection; every probe is a point.",
    ),
    click.option(
        "--find-max-concurrency",
        is_flag=True,
        help="The same search over closed-loop concurrency.",
    ),
    click.option(
        "--search-start",
        type=float,
        callback=positive,
        metavar="LOAD",
        help="First probe of a search (default: 1 req/s, or concurrency 1).",
    ),
    click.option(
        "--search-precision",
        type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
        default=0.05,
        show_default=True,
        help="A search stops when the load that met and the one that missed lie this close.",
    ),
    click.option(
        "--max-probes",
        type=click.IntRange(min=2),
        default=16,
        show_default=True,
        help="Most load points a search measures.",
    ),
    click.option(
        "--stop-when-saturated",
        is_flag=True,
        help="End a sweep past the knee: an open loop whose completions fall behind its rate, or "
        "a concurrency that brought under 5 % more throughput.",
    ),
    click.option(
        "--max-concurrency",
        type=click.IntRange(min=1),
        metavar="N",
        help="Open loop: at most N requests in flight; a request whose time has come waits for a "
        "free slot (as vllm bench serve --max-concurrency).",
    ),
    click.option(
        "--extra-body",
        callback=extra_body,
        metavar="JSON",
        help='Extra fields for every request body, e.g. \'{"top_p": 0.9, "temperature": 0.7}\' '
        "(sampling parameters; not the fields the workload sets).",
    ),
    click.option(
        "--burstiness",
        type=float,
        default=1.0,
        show_default=True,
        callback=positive,
        help="Open loop: gamma shape of the arrival gaps (1 = Poisson; < 1 burstier).",
    ),
    click.option(
        "--num-requests",
        type=click.IntRange(min=1),
        help="Measured requests per point (default: max(100, 4 × concurrency)).",
    ),
    click.option(
        "--duration",
        type=float,
        callback=positive,
        metavar="SECONDS",
        help="Stop sending a point's requests after this long.",
    ),
    click.option(
        "--warmup",
        type=click.IntRange(min=0),
        help="Warm-up requests per point, excluded (default: one per concurrency slot).",
    ),
    click.option(
        "--input-len",
        callback=length,
        metavar="SPEC",
        help="Prompt tokens: N, uniform:LO:HI, normal:MEAN:STD or lognormal:MEDIAN:SIGMA.",
    ),
    click.option(
        "--output-len",
        callback=length,
        metavar="SPEC",
        help="Output tokens, same syntax as --input-len.",
    ),
    click.option(
        "--dataset",
        type=click.Path(dir_okay=False, path_type=Path),
        help="ShareGPT-format JSONL file to take prompts from.",
    ),
    click.option(
        "--trace",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE[.gz]",
        help="Replay a request trace (Mooncake JSONL, or infermeter's own format) with its "
        "arrival times and shared prefix blocks, as one open-loop point; --num-requests or "
        "--duration cut it.",
    ),
    click.option(
        "--trace-speed",
        type=float,
        default=1.0,
        show_default=True,
        metavar="X",
        help="Replay the trace's arrivals X times as fast (--request-rate re-times them instead).",
    ),
    click.option(
        "--trace-block-size",
        type=click.IntRange(min=1),
        metavar="TOKENS",
        help=f"Tokens per hash_ids block of a Mooncake trace (default {DEFAULT_BLOCK_SIZE}, as "
        "Mooncake's published traces use).",
    ),
    click.option(
        "--tokenizer",
        metavar="PATH|ID",
        help="tokenizer.json (or a Hugging Face id) for exact prompt lengths.",
    ),
    click.option(
        "--seed",
        type=int,
        default=0,
        show_default=True,
        help="Seed of lengths, prompts and arrival schedules.",
    ),
    click.option(
        "--prompt-salt",
        type=int,
        default=0,
        show_default=True,
        help="Changes the prompt text but not the lengths (defeats a warm prefix cache).",
    ),
    click.option("--slo-ttft-ms", type=float, callback=positive, help="SLO: time to first token."),
    click.option(
        "--slo-tpot-ms", type=float, callback=positive, help="SLO: time per output token."
    ),
    click.option("--slo-e2e-ms", type=float, callback=positive, help="SLO: end-to-end latency."),
    click.option(
        "--api",
        type=click.Choice(["completions", "chat"]),
        default="completions",
        show_default=True,
        help="Which OpenAI API to call.",
    ),
    click.option(
        "--timeout",
        type=float,
        default=600.0,
        show_default=True,
        callback=positive,
        metavar="SECONDS",
        help="Per-request timeout.",
    ),
    click.option(
        "--ignore-eos/--no-ignore-eos",
        default=True,
        show_default=True,
        help="Ask the server to generate exactly the requested output length.",
    ),
    click.option(
        "--continuous-usage-stats",
        is_flag=True,
        help="Ask for a token count in every chunk (vLLM): exact per-token timing.",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        metavar="N",
        help="Client processes per load point, each with its share of the streams: for loads "
        "one process cannot parse (about 500k streamed tokens/s).",
    ),
    click.option(
        "--shared-prefix-tokens",
        type=click.IntRange(min=0),
        default=0,
        metavar="N",
        help="Start every prompt with the same N-token prefix (the rest unique), to measure "
        "prefix caching on purpose; the result's workload says so.",
    ),
    click.option(
        "--plan",
        "plan_path",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE.yaml",
        help="Run every run of a plan file in turn (see bench/plans/example.yaml); the other run "
        "options go in the file.",
    ),
    click.option(
        "--api-key",
        metavar="KEY",
        help="For a server that wants one: sent as `Authorization: Bearer KEY`, never stored or "
        "printed (default: $OPENAI_API_KEY; a launched vLLM's own --api-key).",
    ),
    click.option("--quiet", is_flag=True, help="No progress display on stderr."),
    click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON object instead of a table."
    ),
)


def run_options(command: F) -> F:
    """`command` with every `bench run` option, as that many `@click.option` lines would."""
    for option in reversed(_RUN_OPTIONS):
        command = option(command)
    return command
