"""What a session watches while each load point runs: the point's telemetry, and the
launched server's health.

`PointObserver.point_ended` keeps the point's GPU and engine windows (`PointTelemetry`) and
every request's record, and says when the launched vLLM died during the point (every request
failing first gets it `SERVER_EXIT_GRACE_S` to exit, as the connection may reset before).
"""

from __future__ import annotations

from collections.abc import Sequence

from infermeter.bench.client.request_record import RequestRecord
from infermeter.bench.launch.server import VllmServer
from infermeter.bench.result.points import PointTelemetry
from infermeter.bench.run.load import PointPlan
from infermeter.bench.run.point_summary import PointSummary
from infermeter.bench.telemetry.engine_metrics import MetricsSample, engine_window, scrape_metrics
from infermeter.bench.telemetry.sampler import TelemetrySampler, gpu_window

# How long to wait for vLLM to exit once every request of a point failed.
SERVER_EXIT_GRACE_S = 2.0


class PointObserver:
    """Telemetry per point, and the watchdog of a launched server."""

    def __init__(self, sampler: TelemetrySampler, server: VllmServer | None) -> None:
        self.sampler = sampler
        self.server = server
        self.before: MetricsSample | None = None
        self.kept: list[PointTelemetry | None] = []
        self.records: list[tuple[int, bool, Sequence[RequestRecord]]] = []

    def point_started(self, plan: PointPlan) -> None:
        url = self.sampler.engine_url
        self.before = scrape_metrics(url) if url else None
        self.sampler.start()

    def point_ended(
        self, records: Sequence[RequestRecord], summary: PointSummary | None
    ) -> str | None:
        self.sampler.stop()
        url = self.sampler.engine_url
        after = scrape_metrics(url) if url and records else None
        died = self.server.exit_code() if self.server is not None else None
        measured_records = [r for r in records if not r.warmup]
        if (
            died is None
            and self.server is not None
            and measured_records
            and not any(r.ok for r in measured_records)
        ):
            # Every request failed: the connection may reset before the process has exited.
            died = self.server.wait_exit(SERVER_EXIT_GRACE_S)
        kept = summary is not None and died is None
        if records:
            self.records.append((len(self.records) + 1, kept, list(records)))
        if died is not None:
            assert self.server is not None
            log = self.server.config.log_path
            return f"vLLM exited with code {died} during the run (log: {log})"
        if summary is None:
            return None
        measured = [r for r in records if not r.warmup]
        start_ns = min((r.send_ns for r in measured), default=0)
        end_ns = max((r.end_ns for r in measured), default=0)
        gpu = gpu_window(self.sampler.gpu_samples, start_ns, end_ns)
        engine = engine_window(self.before, after, self.sampler.engine_samples, start_ns, end_ns)
        self.kept.append(PointTelemetry(gpu, engine) if gpu or engine else None)
        return None
