"""Counts: the numbers of a valid result agree with each other.

Requests add up (completed + failed = sent, failures by kind sum to failed, accepted within
completed), rates agree with counts over the window (tokens ≈ tokens/s × duration), latencies
fit in their window and in the order of a request's tokens (TTFT before E2E), the requests in
flight within what was sent and what the load allows (Little's law), the deployment fits its
GPUs, the run's clock agrees with its windows, and no date is in the future.
"""

import datetime as dt
from collections.abc import Iterator

from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.units import MS_PER_S
from infermeter.registry.checks import Finding, whole
from infermeter.registry.models import LoadPoint, MeasuredSource, Result, load_point_key
from infermeter.registry.models.provenance import GUIDELLM_TOOL

RATE_TOLERANCE = 0.05
"""Relative slack between a rate × duration and its count (rounding, window edges)."""

ENERGY_TOLERANCE = 0.25
"""Relative slack between energy and mean power × duration (sampling versus counters)."""

CLOCK_SLACK_S = 5.0
"""Seconds by which the load points' windows may exceed the run's wall time (clock rounding)."""


def _finding(file: str, path: str, message: str) -> Finding:
    return Finding(file, path, message, "counts")


def _close(rate_count: float, count: float, tolerance: float = RATE_TOLERANCE) -> bool:
    # One unit of absolute slack keeps tiny windows from failing on rounding alone.
    return abs(rate_count - count) <= tolerance * max(abs(count), abs(rate_count)) + 1


def _request_findings(file: str, where: str, point: LoadPoint, result: Result) -> Iterator[Finding]:
    requests = point.requests
    sent, completed, failed, accepted = (
        requests.sent,
        requests.completed,
        requests.failed,
        requests.accepted,
    )
    if (
        sent is not None
        and completed is not None
        and failed is not None
        and completed + failed != sent
    ):
        message = f"completed ({completed}) + failed ({failed}) is not sent ({sent})"
        yield _finding(file, f"{where}.requests", message)
    if accepted is not None and completed is not None and accepted > completed:
        message = f"accepted ({accepted}) is above completed ({completed})"
        yield _finding(file, f"{where}.requests.accepted", message)
    slo = result.slo
    no_limit = slo.ttft_ms is None and slo.tpot_ms is None and slo.e2e_ms is None
    if no_limit and accepted is not None and completed is not None and accepted != completed:
        message = (
            f"slo sets no limit, so every completed request is accepted; got accepted "
            f"({accepted}) and completed ({completed})"
        )
        yield _finding(file, f"{where}.requests.accepted", message)
    if point.failures is not None and failed is not None:
        by_kind = sum(point.failures.model_dump().values())
        if by_kind != failed:
            message = f"failures by kind add up to {by_kind}, but requests.failed is {failed}"
            yield _finding(file, f"{where}.failures", message)
    for name in ("ttft_ms", "tpot_ms", "e2e_ms", "queue_ms"):
        stats = getattr(point, name)
        if stats is not None and stats.n is not None and sent is not None and stats.n > sent:
            message = f"n ({stats.n}) is above the requests sent ({sent})"
            yield _finding(file, f"{where}.{name}.n", message)


def _rate_findings(file: str, where: str, point: LoadPoint) -> Iterator[Finding]:
    tokens, throughput, duration = point.tokens, point.throughput, point.duration_s
    total_tokens = (
        tokens.input + tokens.output
        if tokens.input is not None and tokens.output is not None
        else None
    )
    pairs = (
        (
            "requests_per_s",
            throughput.requests_per_s,
            "requests.completed",
            point.requests.completed,
        ),
        ("output_tokens_per_s", throughput.output_tokens_per_s, "tokens.output", tokens.output),
        (
            "total_tokens_per_s",
            throughput.total_tokens_per_s,
            "tokens.input + output",
            total_tokens,
        ),
        (
            "accepted_output_tokens_per_s",
            throughput.accepted_output_tokens_per_s,
            "tokens.accepted_output",
            tokens.accepted_output,
        ),
    )
    for rate_name, rate, count_name, count in pairs:
        if duration is None or rate is None or count is None:
            continue
        if not _close(rate * duration, count):
            message = (
                f"{rate} × duration_s {duration} = {whole(rate * duration)}, but {count_name} is "
                f"{count} (more than {RATE_TOLERANCE:.0%} apart)"
            )
            yield _finding(file, f"{where}.throughput.{rate_name}", message)
    if (
        tokens.accepted_output is not None
        and tokens.output is not None
        and tokens.accepted_output > tokens.output
    ):
        message = f"accepted_output ({tokens.accepted_output}) is above output ({tokens.output})"
        yield _finding(file, f"{where}.tokens.accepted_output", message)
    output_rate, total_rate = throughput.output_tokens_per_s, throughput.total_tokens_per_s
    if output_rate is not None and total_rate is not None and total_rate < output_rate:
        message = f"total ({total_rate}) is below output_tokens_per_s ({output_rate})"
        yield _finding(file, f"{where}.throughput.total_tokens_per_s", message)
    accepted_rate = throughput.accepted_output_tokens_per_s
    if output_rate is not None and accepted_rate is not None and accepted_rate > output_rate:
        message = f"accepted ({accepted_rate}) is above output_tokens_per_s ({output_rate})"
        yield _finding(file, f"{where}.throughput.accepted_output_tokens_per_s", message)


def _longest_output(result: Result) -> int | None:
    """The most output tokens one request of the workload may produce, where it says."""
    length = result.identity.workload.output_len
    if length.kind == "fixed":
        return length.value
    return length.max


def _length_findings(file: str, where: str, point: LoadPoint, result: Result) -> Iterator[Finding]:
    """Output tokens no workload allows: more than its requests × its longest output (a
    server whose usage reports more tokens than it generated)."""
    longest = _longest_output(result)
    requests = point.requests
    count = requests.sent if requests.sent is not None else requests.completed
    output = point.tokens.output if point.tokens is not None else None
    if longest is None or count is None or output is None:
        return
    bound = longest * count
    if output > bound * (1 + RATE_TOLERANCE):
        message = (
            f"{output} output tokens from {count} requests of at most {longest} tokens each "
            f"(at most {bound}): impossible"
        )
        yield _finding(file, f"{where}.tokens.output", message)


_WITHIN_THE_WINDOW = ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms")
"""Latencies of requests the window measured: none lasts longer than the window (queue_ms is an
engine histogram's estimate, which a bucket's bound may carry past a short window)."""


def _window_findings(file: str, where: str, point: LoadPoint) -> Iterator[Finding]:
    """What no measured window holds: a request that took longer than the window (a unit mixed
    up: seconds read as ms)."""
    duration = point.duration_s
    if duration is None:
        return
    longest_ms = (duration * (1 + RATE_TOLERANCE) + CLOCK_SLACK_S) * MS_PER_S
    for name in _WITHIN_THE_WINDOW:
        stats = getattr(point, name)
        if stats is None:
            continue
        statistic, value = max(stats.given().items(), key=lambda item: item[1], default=("", 0.0))
        if value > longest_ms:
            message = (
                f"{value:.6g} ms is {value / MS_PER_S:.6g} s, longer than the measured window "
                f"(duration_s {duration:g}): impossible"
            )
            yield _finding(file, f"{where}.{name}.{statistic}", message)


def _in_flight_findings(
    file: str, where: str, point: LoadPoint, result: Result
) -> Iterator[Finding]:
    """What the requests in flight allow: on average no more than were sent (with the warm-up
    requests still in flight in the window, which `concurrency_mean` counts), and (Little's
    law: completions per second × their mean E2E is the mean in flight) no more than the
    load's concurrency lets be in flight at once (not a DAG's: its roots' subagents run
    beside them)."""
    sent, in_flight = point.requests.sent, point.concurrency_mean
    warmup = point.requests.warmup_in_flight or 0
    bound = None if sent is None else (sent + warmup) * (1 + RATE_TOLERANCE) + 1
    if in_flight is not None and bound is not None and in_flight > bound:
        also = f" and {warmup} warm-up requests in flight in the window" if warmup else ""
        message = f"{in_flight:g} requests in flight on average, but {sent} sent{also}: impossible"
        yield _finding(file, f"{where}.concurrency_mean", message)
    trace = result.identity.workload.trace
    limit = point.load.concurrency if trace is None or trace.format != "aiperf_dag" else None
    if in_flight is not None and limit is not None and in_flight > limit * (1 + RATE_TOLERANCE):
        message = (
            f"{in_flight:g} requests in flight on average, but load.concurrency allows {limit} "
            "at once: impossible"
        )
        yield _finding(file, f"{where}.concurrency_mean", message)
    rate = point.throughput.requests_per_s
    mean_s = point.e2e_ms.mean / MS_PER_S if point.e2e_ms and point.e2e_ms.mean else None
    if limit is None or rate is None or mean_s is None:
        return
    if rate * mean_s > limit * (1 + RATE_TOLERANCE):
        message = (
            f"{rate:g} requests/s of {mean_s:g} s each (e2e_ms.mean) keep {rate * mean_s:.3g} "
            f"in flight on average, but load.concurrency allows {limit} at once (Little's law): "
            "impossible"
        )
        yield _finding(file, f"{where}.throughput.requests_per_s", message)


def _order_findings(file: str, where: str, point: LoadPoint) -> Iterator[Finding]:
    """What the order of a request's tokens forbids: its first token comes before its last, so
    over the same requests each TTFT statistic is at most E2E's; and no gap between two tokens
    (ITL) or mean gap (TPOT) is longer than the longest request."""
    ttft, e2e = point.ttft_ms, point.e2e_ms
    if e2e is None:
        return
    given = e2e.given()
    if ttft is not None and (ttft.n is None or e2e.n is None or ttft.n == e2e.n):
        above = [
            (statistic, value, given[statistic])
            for statistic, value in ttft.given().items()
            if statistic in given and value > given[statistic]
        ]
        if above:
            (statistic, value, bound), *more = above
            also = f" (and {', '.join(name for name, _, _ in more)} too)" if more else ""
            message = (
                f"{value:g} ms is above e2e_ms.{statistic} ({bound:g} ms){also}: a request's "
                "first token cannot come after its last"
            )
            yield _finding(file, f"{where}.ttft_ms.{statistic}", message)
    longest = given.get("max")
    for name in ("itl_ms", "tpot_ms"):
        stats = getattr(point, name)
        if longest is not None and stats is not None and (stats.max or 0.0) > longest:
            message = f"{stats.max:g} ms is above e2e_ms.max ({longest:g} ms), the longest request"
            yield _finding(file, f"{where}.{name}.max", message)


def _telemetry_findings(file: str, where: str, point: LoadPoint) -> Iterator[Finding]:
    telemetry = point.telemetry
    if telemetry is None:
        return
    engine, gpu = telemetry.engine, telemetry.gpu
    if engine is not None:
        mean, peak = engine.kv_cache_usage_pct_mean, engine.kv_cache_usage_pct_max
        if mean is not None and peak is not None and mean > peak:
            message = f"mean ({mean}) is above kv_cache_usage_pct_max ({peak})"
            yield _finding(file, f"{where}.telemetry.engine.kv_cache_usage_pct_mean", message)
    if gpu is not None and gpu.energy_j is not None and gpu.power_w_mean is not None:
        duration = point.duration_s
        if duration is not None and not _close(
            gpu.power_w_mean * duration, gpu.energy_j, ENERGY_TOLERANCE
        ):
            message = (
                f"{gpu.energy_j} J is not power_w_mean {gpu.power_w_mean} × duration_s "
                f"{duration} = {whole(gpu.power_w_mean * duration)} J (more than "
                f"{ENERGY_TOLERANCE:.0%} apart)"
            )
            yield _finding(file, f"{where}.telemetry.gpu.energy_j", message)


def _deployment_findings(file: str, result: Result) -> Iterator[Finding]:
    gpus = result.identity.gpu.count
    serving = result.identity.serving
    tensor, pipeline = serving.tensor_parallel_size or 1, serving.pipeline_parallel_size or 1
    data = serving.data_parallel_size or 1
    layout = ParallelLayout(tensor, pipeline, data)
    if layout.gpus > gpus:
        message = (
            f"tensor_parallel_size {tensor} × pipeline_parallel_size {pipeline} × "
            f"data_parallel_size {data} needs {layout.gpus} GPUs, but "
            f"identity.gpu.count is {gpus}"
        )
        yield _finding(file, "identity.serving.tensor_parallel_size", message)
    nodes, per_node = result.identity.gpu.nodes, result.identity.gpu.gpus_per_node
    if nodes is not None and per_node is not None and nodes * per_node != gpus:
        message = f"{nodes} nodes × {per_node} GPUs per node is not identity.gpu.count {gpus}"
        yield _finding(file, "identity.gpu.gpus_per_node", message)
    source = result.source
    # A run over several hosts records the fingerprint of one of them: it holds a node's share.
    on_one_host = per_node or (-(-gpus // nodes) if nodes else gpus)
    if isinstance(source, MeasuredSource) and source.host.gpu_count < on_one_host:
        on_host = source.host.gpu_count
        needed = (
            f"identity.gpu.gpus_per_node is {on_one_host}"
            if per_node is not None
            else f"identity.gpu.count is {gpus}"
            if nodes is None
            else f"{gpus} GPUs on {nodes} nodes need {on_one_host} on one"
        )
        message = f"the host has {on_host} GPU{'' if on_host == 1 else 's'}, but {needed}"
        yield _finding(file, "source.host.gpu_count", message)


def _clock_findings(file: str, result: Result, today: dt.date) -> Iterator[Finding]:
    source = result.source
    if isinstance(source, MeasuredSource):
        wall_s = (source.finished_at - source.started_at).total_seconds()
        if wall_s < 0:
            message = f"{source.finished_at.isoformat()} is before started_at"
            yield _finding(file, "source.finished_at", message)
        else:
            windows_s = sum(point.duration_s or 0 for point in result.points)
            if windows_s > wall_s + CLOCK_SLACK_S:
                message = (
                    f"the load points' windows add up to {windows_s:g} s, longer than the run "
                    f"from started_at to finished_at ({wall_s:g} s)"
                )
                yield _finding(file, "points", message)
        dates = {
            "source.started_at": source.started_at.date(),
            "source.finished_at": source.finished_at.date(),
        }
    else:
        dates = {"source.retrieved": dt.date.fromisoformat(source.retrieved)}
        if source.published is not None and len(source.published) == 10:
            dates["source.published"] = dt.date.fromisoformat(source.published)
    for path, date in dates.items():
        if in_the_future(date, today):
            yield _finding(file, path, f"{date.isoformat()} is in the future")


def in_the_future(date: dt.date, today: dt.date) -> bool:
    """Whether `date` is after `today` (UTC) by more than the day a time zone may be ahead."""
    return date > today + dt.timedelta(days=1)


def _window_holds_its_requests(result: Result) -> bool:
    """Whether every request a point counts lies in its window (`duration_s`): infermeter's
    window, vLLM's benchmark duration and AIPerf's run from the first request sent to the last
    answered; GuideLLM's may be crossed (`GUIDELLM_TOOL`), and a report states no window."""
    source = result.source
    return isinstance(source, MeasuredSource) and source.tool.name != GUIDELLM_TOOL


def count_findings(file: str, result: Result, today: dt.date | None = None) -> list[Finding]:
    """Every disagreement between the numbers of one result."""
    today = today or dt.datetime.now(dt.UTC).date()
    findings = list(_deployment_findings(file, result))
    spanned = _window_holds_its_requests(result)
    first_of_load: dict[tuple[object, ...], int] = {}
    for index, point in enumerate(result.points):
        where = f"points[{index}]"
        key = load_point_key(result, point)
        if key in first_of_load:
            message = f"the same load as points[{first_of_load[key]}]; one point per load"
            findings.append(_finding(file, f"{where}.load", message))
        first_of_load.setdefault(key, index)
        findings.extend(_request_findings(file, where, point, result))
        findings.extend(_rate_findings(file, where, point))
        findings.extend(_length_findings(file, where, point, result))
        findings.extend(_order_findings(file, where, point))
        if spanned:
            findings.extend(_window_findings(file, where, point))
            findings.extend(_in_flight_findings(file, where, point, result))
        findings.extend(_telemetry_findings(file, where, point))
    findings.extend(_clock_findings(file, result, today))
    return findings
