"""`infermeter calc perf`: predicted throughput, latency and cost of a deployment at a load
(`calculators.perf_api.perf`), its options built from `calculators.perf_inputs`."""

from typing import Any

import click

from infermeter.bench.cli.calc_options import calc_command, library_errors, print_json
from infermeter.calculators.perf_api import PERF_REQUEST_FIELDS, PerfRequest, perf
from infermeter.calculators.perf_inputs import PERF_INPUTS
from infermeter.calculators.predict import Deployment
from infermeter.registry.lookup import catalog_prices, model_arch, resolve_gpu
from infermeter.registry.perf_cases import gpu_for_prediction


def _format(payload: dict[str, Any]) -> str:
    ttft, tpot = payload["ttft_ms"], payload["tpot_ms"]

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:,.1f} ms"

    lines = [
        f"{payload['model']} on {payload['gpu_count']} x {payload['gpu']} "
        f"({payload['engine']}), load: {payload['load']}",
        f"  output tokens/s     {payload['output_tokens_per_s']:,.0f}"
        f"  (roofline bound {payload['roofline_bound_tokens_per_s']:,.0f})",
        f"  requests/s          {payload['requests_per_s']:,.2f}",
        f"  TTFT p50 / p99      {ms(ttft['p50'])} / {ms(ttft['p99'])}"
        if payload["ttft_not_predicted"] is None
        else f"  TTFT p50 / p99      not predicted: {payload['ttft_not_predicted']}",
        f"  TPOT p50 / p99      {ms(tpot['p50'])} / {ms(tpot['p99'])}",
    ]
    if payload["max_request_rate_at_slo"] is not None:
        lines.append(f"  max rate at SLO     {payload['max_request_rate_at_slo']:,.2f} requests/s")
    if payload["usd_per_million_output_tokens"] is not None:
        lines.append(f"  $ / 1M output       {payload['usd_per_million_output_tokens']:,.4f}")
    if payload["roofline_bound_usd_per_million_output_tokens"] is not None:
        bound_usd = payload["roofline_bound_usd_per_million_output_tokens"]
        lines.append(f"  $ / 1M, bound       {bound_usd:,.4f}  (at best: no run costs less)")
    lines.append(f"  {payload['error_label']}")
    if payload["missed_target"]:
        lines.append(f"  not shown on the site (the bound is instead): {payload['missed_target']}")
    return "\n".join(lines)


@calc_command("perf", PERF_INPUTS)
def perf_command(as_json: bool, **given: Any) -> None:
    """Predicted output tokens/s, TTFT and TPOT (p50, p99), the highest rate meeting an SLO
    and $ per 1M output tokens of a deployment at one load, with the prediction's measured
    error (benchmarks/perf_error.py).

    \b
    Example:
      infermeter calc perf --model llama-3.1-70b-instruct --gpu h100-sxm -tp 4 \\
        --input-len 1000 --output-len 1000 --concurrency 64 --json
    """
    with library_errors():
        gpu = resolve_gpu(given["gpu"])
        deployment = Deployment(
            arch=model_arch(given["model"]),
            gpu=gpu_for_prediction(gpu),
            quantization=given["quantization"] or None,
            kv_cache_dtype=None if given["kv_cache_dtype"] == "auto" else given["kv_cache_dtype"],
            tensor_parallel_size=given["tensor_parallel_size"],
            pipeline_parallel_size=given["pipeline_parallel_size"],
            data_parallel_size=given["data_parallel_size"],
            engine=given["engine"],
        )
        request = PerfRequest(
            model=given["model"],
            deployment=deployment,
            **{name: given[name] for name in PERF_REQUEST_FIELDS},
        )
        payload = perf(request, catalog_prices(gpu.id).get("on_demand"))
    if as_json:
        print_json(payload)
        return
    click.echo(_format(payload))
