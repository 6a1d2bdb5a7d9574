"""LoadGen's `mlperf_log_detail.txt`, read where a run's `mlperf_log_summary.txt` is missing.

The detail log holds one `:::MLLOG {json}` line per event; the summary log prints the same
results under other names. The lines read here are renamed to the summary's `key : value`
names (`SUMMARY_NAMES`), so that `mlperf_log.load_point` checks and reads them as it reads a
summary log: validity, scenario, target_qps, the TTFT and TPOT bounds, the completed rates and
the latency statistics. A run whose detail log counts an error (`num_errors`) is refused, as a
summary log's is.
"""

import json
import re

from infermeter.registry.harvest.errors import RowSkipped

DETAIL_LOG = "mlperf_log_detail.txt"

_PERCENTILES = ("50.00", "90.00", "95.00", "99.00")

SUMMARY_NAMES: dict[str, str] = {
    "result_validity": "Result is",
    "effective_scenario": "Scenario",
    "effective_target_qps": "target_qps",
    "requested_server_ttft_latency": "ttft_latency (ns)",
    "requested_server_tpot_latency": "tpot_latency (ns)",
    "result_scheduled_samples_per_sec": "Scheduled samples per second",
    "result_completed_samples_per_sec": "Completed samples per second",
    "result_completed_tokens_per_second": "Completed tokens per second",
    "result_max_latency_ns": "Max latency (ns)",
    "result_mean_latency_ns": "Mean latency (ns)",
    "result_first_token_max_latency_ns": "Max First Token latency (ns)",
    "result_first_token_mean_latency_ns": "Mean First Token latency (ns)",
    "result_time_to_output_token_max": "Max Time to Output Token (ns)",
    "result_time_to_output_token_mean": "Mean Time to Output Token (ns)",
    **{f"result_{p}_percentile_latency_ns": f"{p} percentile latency (ns)" for p in _PERCENTILES},
    **{
        f"result_first_token_{p}_percentile_latency_ns": f"{p} percentile first token latency (ns)"
        for p in _PERCENTILES
    },
    **{
        f"result_time_per_output_token_{p}_percentile_ns": (
            f"{p} percentile time to output token (ns)"
        )
        for p in _PERCENTILES
    },
}
"""A detail log's key → the name its summary log prints the same value under."""

_LINE = re.compile(r"^:::MLLOG (?P<event>\{.*\})\s*$")


def detail_path(log_path: str) -> str:
    """The detail log beside a run's `mlperf_log_summary.txt`."""
    return f"{log_path.rsplit('/', 1)[0]}/{DETAIL_LOG}"


def detail_summary(text: str, where: str) -> dict[str, str]:
    """The summary log's `key : value` pairs that a detail log states (first event of a key
    wins); RowSkipped when it counts an error."""
    values: dict[str, str] = {}
    errors: object = None
    for line in text.splitlines():
        match = _LINE.match(line)
        try:
            event = json.loads(match.group("event")) if match else None
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        key, value = event.get("key"), event.get("value")
        if key == "num_errors":
            errors = value
        name = SUMMARY_NAMES.get(str(key))
        if name is not None and name not in values:
            values[name] = value if isinstance(value, str) else json.dumps(value)
    if errors != 0:
        raise RowSkipped(f"{where}: num_errors is {errors!r}, not 0")
    return values
