"""A STAND-IN for the `vllm` executable (it is not vLLM and runs no model).

`python standin_vllm.py serve MODEL --host H --port P [vllm serve options]` behaves, as seen from
outside, like `vllm serve` on a GPU host: it prints vLLM's startup log lines in their exact
formats (weights, KV cache memory and size, maximum concurrency, CUDA graph capture, the
uvicorn lines), then serves `/health`, `/version`, `/v1/models`, `/metrics` (vLLM's Prometheus
names) and streaming `/v1/completions` and `/v1/chat/completions` (the bench tests' fake
OpenAI server's code), and shuts down on SIGINT or SIGTERM like uvicorn does.

Behaviour the tests choose through the environment:
- `STANDIN_VLLM_MODE`: `ok` (default); `kv_too_small` (the engine's "To serve at least one
  request … estimated maximum model length is N" error, exit 1); `cuda_oom` (a CUDA
  out-of-memory while loading, exit 1); `unsupported` (an unsupported architecture, exit 1);
  `crash` (dies with exit 1 when request `STANDIN_VLLM_CRASH_AFTER` + 1 arrives).
- `STANDIN_VLLM_TTFT_S`, `STANDIN_VLLM_ITL_S`: the fake server's timings (default 0.005, 0.002).
- `STANDIN_VLLM_IGNORE_SIGINT=1`: ignore SIGINT (a server that only SIGTERM stops), saying so in
  its log (`IGNORED_SIGINT`), so a test knows when its launcher has asked it to stop.
- `STANDIN_VLLM_EMPTY_TEXT_EVERY=N`: every N-th token streams as a chunk without text, as the
  real vLLM streams a random model's special tokens and partial characters (0: never).
- `--api-key KEY` (a `vllm serve` option): /v1/* answers 401 without `Authorization: Bearer KEY`.

With `--distributed-executor-backend ray` it does what vLLM's Ray executor does before loading
weights: connects to the Ray cluster named by `RAY_ADDRESS` and reserves a placement group of
tensor × pipeline parallel bundles of one GPU each, packed onto as few nodes as fit (the
process's own placement group if it had one, which a launched `vllm serve` never has); it logs
the address and the nodes the group landed on, fails as vLLM does when the cluster lacks the
GPUs, and releases the group when it stops.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aiohttp import web
from fake_openai_server import FakeOpenAIServer, FakeServerConfig, metric_header

VERSION = "0.9.1"
QUEUE_BUCKETS_S = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0)
QUEUE_TIME_S = 0.002  # every request "waits" this long in the stand-in's queue
KV_CACHE_TOKENS = 434_992
AVAILABLE_KV_GIB = 53.12
WEIGHTS_GIB = 14.9889
GRAPH_GIB = 0.52
STARTED_AT = time.time()
IGNORED_SIGINT = "SIGINT received and ignored (STANDIN_VLLM_IGNORE_SIGINT)"


def log(level: str, where: str, message: str) -> None:
    """One line in vLLM's log format: `INFO 05-12 09:30:01 [file.py:123] message`."""
    stamp = time.strftime("%m-%d %H:%M:%S")
    print(f"{level} {stamp} [{where}] {message}", flush=True)


class StandinVllm(FakeOpenAIServer):
    """The fake OpenAI server plus vLLM's /version and Prometheus metrics."""

    def __init__(
        self,
        model: str,
        port: int,
        max_num_seqs: int,
        crash_after: int | None,
        max_model_len: int = 4096,
        gpu_memory_utilization: float = 0.9,
    ) -> None:
        ttft = float(os.environ.get("STANDIN_VLLM_TTFT_S", "0.005"))
        itl = float(os.environ.get("STANDIN_VLLM_ITL_S", "0.002"))
        empty = int(os.environ.get("STANDIN_VLLM_EMPTY_TEXT_EVERY", "0"))
        config = FakeServerConfig(model=model, ttft_s=ttft, itl_s=itl, empty_text_every=empty)
        super().__init__(config, port=port)
        self.max_num_seqs = max_num_seqs
        self.max_model_len = max_model_len
        self.gpu_memory_utilization = gpu_memory_utilization
        self.crash_after = crash_after
        self.preemptions = 0
        self.prefix_queries = 0.0
        self.prefix_hits = 0.0
        self.queue_count = 0

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": VERSION})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        if self.crash_after is not None and self.stats.requests >= self.crash_after:
            log("ERROR", "core.py:517", "EngineCore encountered a fatal error.")
            print("RuntimeError: CUDA error: an illegal memory access was encountered", flush=True)
            os._exit(1)
        body: dict[str, Any] = await request.json()
        prompt_tokens = len(str(body.get("prompt", body.get("messages", ""))).split())
        # Every request is preempted once; a quarter of its prompt comes from the prefix cache.
        self.preemptions += 1
        self.prefix_queries += prompt_tokens
        self.prefix_hits += prompt_tokens / 4
        self.queue_count += 1
        return await super()._completions(request)

    async def _metrics(self, request: web.Request) -> web.Response:
        labels = f'{{engine="0",model_name="{self.config.model}"}}'
        running = self.stats.in_flight
        usage = min(1.0, running / self.max_num_seqs)
        queue_sum = self.queue_count * QUEUE_TIME_S
        lines = [
            *metric_header("vllm:num_requests_running"),
            f"vllm:num_requests_running{labels} {float(running)}",
            *metric_header("vllm:num_requests_waiting"),
            f"vllm:num_requests_waiting{labels} 0.0",
            *metric_header("vllm:kv_cache_usage_perc"),
            f"vllm:kv_cache_usage_perc{labels} {usage}",
            *metric_header("vllm:num_preemptions_total"),
            f"vllm:num_preemptions_total{labels} {float(self.preemptions)}",
            *metric_header("vllm:prefix_cache_queries_total"),
            f"vllm:prefix_cache_queries_total{labels} {self.prefix_queries}",
            *metric_header("vllm:prefix_cache_hits_total"),
            f"vllm:prefix_cache_hits_total{labels} {self.prefix_hits}",
            *metric_header("vllm:request_queue_time_seconds"),
        ]
        for bound in QUEUE_BUCKETS_S:
            count = self.queue_count if bound >= QUEUE_TIME_S else 0
            bucket_labels = labels[:-1] + f',le="{bound}"}}'
            lines.append(f"vllm:request_queue_time_seconds_bucket{bucket_labels} {float(count)}")
        inf_labels = labels[:-1] + ',le="+Inf"}'
        lines += [
            f"vllm:request_queue_time_seconds_bucket{inf_labels} {float(self.queue_count)}",
            f"vllm:request_queue_time_seconds_count{labels} {float(self.queue_count)}",
            f"vllm:request_queue_time_seconds_sum{labels} {queue_sum}",
        ]
        lines += self._created_and_cache_config(labels)
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")

    def _created_and_cache_config(self, labels: str) -> list[str]:
        """What real vLLM adds beside the figures (checked against it on the CPU:
        tests/bench/test_real_vllm_standin.py): prometheus_client's `_created` gauge of each
        counter and histogram (the time it was made), and the info gauge
        `vllm:cache_config_info`, whose labels state the KV cache plan (a GPU's block size 16)."""
        lines = []
        for name in (
            "vllm:num_preemptions",
            "vllm:prefix_cache_queries",
            "vllm:prefix_cache_hits",
            "vllm:request_queue_time_seconds",
        ):
            lines += [f"# TYPE {name}_created gauge", f"{name}_created{labels} {STARTED_AT}"]
        plan = {
            "block_size": "16",
            "cache_dtype": "auto",
            "enable_prefix_caching": "True",
            "engine": "0",
            "gpu_memory_utilization": str(self.gpu_memory_utilization),
            "kv_cache_max_concurrency": str(KV_CACHE_TOKENS / self.max_model_len),
            "kv_cache_memory_bytes": str(round(AVAILABLE_KV_GIB * 2**30)),
            "kv_cache_size_tokens": str(KV_CACHE_TOKENS),
            "num_gpu_blocks": str(KV_CACHE_TOKENS // 16),
        }
        info = ",".join(f'{key}="{value}"' for key, value in plan.items())
        return [
            *lines,
            *metric_header("vllm:cache_config_info"),
            f"vllm:cache_config_info{{{info}}} 1.0",
        ]


def fail(lines: list[str]) -> None:
    """Print an engine failure the way vLLM does, then exit 1."""
    log("ERROR", "core.py:586", "EngineCore failed to start.")
    print("Traceback (most recent call last):", flush=True)
    for line in lines:
        print(line, flush=True)
    print(
        "RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {}",
        flush=True,
    )
    sys.exit(1)


def reserve_ray_gpus(world_size: int) -> Any:
    """Connect to RAY_ADDRESS and reserve `world_size` GPUs, as vLLM's Ray executor does
    (`initialize_ray_cluster`, vllm/v1/executor/ray_utils.py): the placement group of the
    process if it has one (a `vllm serve` process, a new Ray driver, never does), else a
    new one of `{"GPU": 1}` bundles, packed."""
    import ray
    from ray.util.placement_group import (
        get_current_placement_group,
        placement_group,
        placement_group_table,
    )

    address = os.environ.get("RAY_ADDRESS")
    log("INFO", "ray_utils.py:312", f"Connecting to existing Ray cluster at address: {address}")
    ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    group = get_current_placement_group()
    if group is not None:
        log("INFO", "ray_utils.py:331", "Using the existing placement group")
    else:
        log("INFO", "ray_utils.py:354", "No current placement group found. Creating a new "
            "placement group.")  # fmt: skip
        # vLLM binds the first bundle to its own host ({"node:<ip>": 0.001}); every node here
        # is 127.0.0.1, so that binds nothing and is left out.
        group = placement_group([{"GPU": 1.0}] * world_size, strategy="PACK")
    if not group.wait(timeout_seconds=30):
        fail(
            [
                "ValueError: The number of required GPUs exceeds the total number of "
                "available GPUs in the placement group."
            ]
        )
    nodes = sorted(set(placement_group_table(group)["bundles_to_node_id"].values()))
    log(
        "INFO",
        "ray_distributed_executor.py:178",
        f"world_size={world_size} placement group on {len(nodes)} nodes: {', '.join(nodes)}",
    )
    return ray


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="vllm")
    parser.add_argument("subcommand", choices=["serve"])
    parser.add_argument("model")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--max-model-len", type=int, default=131072)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    parser.add_argument("--max-num-seqs", type=int, default=256)
    parser.add_argument("--api-key", default=None)  # as vLLM: /v1/* then wants the key
    parser.add_argument("--pipeline-parallel-size", type=int, default=1)
    parser.add_argument("--distributed-executor-backend", default=None)
    args, other = parser.parse_known_args(argv)
    mode = os.environ.get("STANDIN_VLLM_MODE", "ok")
    if os.environ.get("STANDIN_VLLM_IGNORE_SIGINT") == "1":
        signal.signal(signal.SIGINT, lambda number, frame: log("INFO", "standin", IGNORED_SIGINT))

    log("INFO", "__init__.py:244", "Automatically detected platform cuda.")
    log("INFO", "api_server.py:1287", f"vLLM API server version {VERSION}")
    # As vLLM logs its arguments: the API key too, a plain string (the real vLLM on the CPU logs
    # `'api_key': '***'`, 0.32 masking it itself; earlier releases printed the key as given).
    given = {"model_tag": args.model, "host": args.host, "port": args.port, "model": args.model}
    if args.api_key is not None:
        given["api_key"] = args.api_key
    log("INFO", "utils.py:326", f"non-default args: {given!r} {other}")
    # vLLM binds its socket before it starts the engine.
    try:
        with socket.socket() as probe:
            probe.bind((args.host, args.port))
    except OSError as error:
        print(f"OSError: [Errno {error.errno}] Address already in use", flush=True)
        return 1
    log("INFO", "core.py:459", "Waiting for init message from front-end.")
    log("INFO", "gpu_model_runner.py:1595", f"Starting to load model {args.model}...")
    if mode == "unsupported":
        fail(
            [
                "ValueError: Model architectures ['StandinForCausalLM'] are not supported for "
                "now. Supported architectures: dict_keys(['LlamaForCausalLM'])"
            ]
        )
    if mode == "cuda_oom":
        fail(
            [
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 "
                "has a total capacity of 79.19 GiB of which 1.02 GiB is free."
            ]
        )
    if args.distributed_executor_backend == "ray":
        ray_cluster = reserve_ray_gpus(args.tensor_parallel_size * args.pipeline_parallel_size)
    log("INFO", "default_loader.py:272", "Loading weights took 3.21 seconds")
    log(
        "INFO",
        "gpu_model_runner.py:1624",
        f"Model loading took {WEIGHTS_GIB:.4f} GiB and 3.512345 seconds",
    )
    log("INFO", "gpu_worker.py:227", f"Available KV cache memory: {AVAILABLE_KV_GIB:.2f} GiB")
    if mode == "kv_too_small":
        fail(
            [
                "ValueError: To serve at least one request with the models's max seq len "
                f"({args.max_model_len}), (16.00 GiB KV cache is needed, which is larger than "
                "the available KV cache memory (7.89 GiB). Based on the available memory, the "
                "estimated maximum model length is 64624. Try increasing "
                "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
                "engine."
            ]
        )
    concurrency = KV_CACHE_TOKENS / args.max_model_len
    # One line, as vLLM 0.2x-0.32 prints it (checked against the real one on the CPU:
    # tests/bench/test_real_vllm_standin.py)
    log(
        "INFO",
        "kv_cache_utils.py:2327",
        f"GPU KV cache size: {KV_CACHE_TOKENS:,} tokens, Maximum concurrency for "
        f"{args.max_model_len:,} tokens per request: {concurrency:.2f}x",
    )
    log(
        "INFO",
        "gpu_model_runner.py:2048",
        f"Graph capturing finished in 12 secs, took {GRAPH_GIB:.2f} GiB",
    )
    log(
        "INFO",
        "core.py:171",
        "init engine (profile, create kv cache, warmup model) took 25.33 seconds",
    )

    crash_after = int(os.environ["STANDIN_VLLM_CRASH_AFTER"]) if mode == "crash" else None
    stopped = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stopped.set()

    signal.signal(signal.SIGTERM, on_signal)
    if os.environ.get("STANDIN_VLLM_IGNORE_SIGINT") != "1":
        signal.signal(signal.SIGINT, on_signal)
    server = StandinVllm(
        args.model, args.port, args.max_num_seqs, crash_after, args.max_model_len,
        args.gpu_memory_utilization,
    )  # fmt: skip
    server.config.api_key = args.api_key
    server.start()
    log(
        "INFO",
        "api_server.py:1351",
        f"Starting vLLM API server 0 on http://{args.host}:{args.port}",
    )
    print(f"INFO:     Started server process [{os.getpid()}]", flush=True)
    print("INFO:     Waiting for application startup.", flush=True)
    print("INFO:     Application startup complete.", flush=True)
    while not stopped.wait(0.1):
        pass
    print("INFO:     Shutting down", flush=True)
    server.stop()
    if args.distributed_executor_backend == "ray":
        ray_cluster.shutdown()  # the placement group goes with the job
    print("INFO:     Finished server process", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
