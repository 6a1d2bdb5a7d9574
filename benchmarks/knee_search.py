"""How close `bench run --find-max-rate` comes to a known knee against a live server.

The server is the tests' stand-in (tests/bench/fake_openai_server.py) in its own process on
127.0.0.1, with TTFT = 50 ms + 16 ms per req/s of arrivals: a p99 TTFT bound of 1650 ms is met
up to exactly 100 req/s (`knee_rate_for_ttft`). The test suite holds the search's precision on
that latency model without a clock (tests/bench/test_bench_search.py); this prints what a live
run finds on this machine, where a busy client adds latency and so can only find less.

    .venv/bin/python benchmarks/knee_search.py               # precision 2 %, starts at 50 req/s
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "bench"))

from bench_helpers import server_process
from fake_openai_server import FakeServerConfig, knee_rate_for_ttft

from infermeter.bench.run.config import RunConfig
from infermeter.bench.run.point_summary import VerdictThresholds
from infermeter.bench.run.runner import run_benchmark
from infermeter.bench.run.search import SearchSpec, describe_search
from infermeter.bench.workloads.lengths import parse_length
from infermeter.registry.models import Slo

LINEAR = {"ttft_s": 0.05, "ttft_s_per_rate": 0.016, "itl_s": 0.001}
TTFT_BOUND_MS = 1650.0


def main() -> None:
    truth = knee_rate_for_ttft(FakeServerConfig(**LINEAR), TTFT_BOUND_MS / 1000)  # type: ignore[arg-type]
    slo = Slo(ttft_ms=TTFT_BOUND_MS, tpot_ms=50.0)
    started = time.monotonic()
    with server_process(**LINEAR) as url:
        config = RunConfig(
            endpoint=url,
            input_len=parse_length("16"),
            output_len=parse_length("4"),
            num_requests=100,
            burstiness=1000.0,
            slo=slo,
            search=SearchSpec("rate", slo, start=50.0, precision=0.02),
            thresholds=VerdictThresholds(send_lag_p99_ms=300.0),
        )
        run = run_benchmark(config)
    search = run.search
    assert search is not None
    print("\n".join(describe_search(search)))
    found = search.best.load if search.best is not None else 0.0
    print(
        f"true knee {truth:.2f} req/s, found {found:g} req/s ({found / truth - 1:+.1%}), "
        f"{len(search.probes)} probes, {time.monotonic() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
