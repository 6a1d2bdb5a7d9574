"""`infermeter calc cost`: dollars per token at a GPU's price (`calculators.api.cost`)."""

import json
from typing import Any, TextIO

import click

import infermeter.calculators.api as api
from infermeter.bench.cli.calc_options import (
    calc_command,
    library_errors,
    print_json,
)
from infermeter.bench.cli.calc_tables import format_cost
from infermeter.bench.cli.oneline import UsageLine
from infermeter.bench.cli.parsed_options import from_options
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.inputs import COST
from infermeter.calculators.json_text import json_loads
from infermeter.calculators.perf_api import PredictedThroughput, predicted_throughput
from infermeter.registry.input_files import LIMITS_BYTES, MIB
from infermeter.registry.lookup import catalog_prices

_FROM_PERF = click.option(
    "--from-perf",
    type=click.File("r"),
    help="A `calc perf --json` output ('-': stdin): the output tokens/s it shows (the prediction, "
    "at its SLO where it has one, or the roofline bound where the prediction's kind missed its "
    "error target), GPU and count (--gpu and --gpu-count, if given, must be its own), labelled "
    "so (instead of --tokens-per-second).",
)


@calc_command("cost", COST, options=[_FROM_PERF])
def cost_command(
    price_per_hour: float | None,
    gpu: str | None,
    tier: str,
    tokens_per_second: float | None,
    tokens_per_second_basis: str | None,
    tokens_per_second_gpu: str | None,
    tokens_per_second_gpu_count: int | None,
    from_perf: TextIO | None,
    accepted_tokens_per_second: float | None,
    gpu_count: int,
    utilization: float,
    retry_rate: float,
    overhead_per_hour: float,
    interruptible_price_per_hour: float | None,
    reserved_price_per_hour: float | None,
    serverless_price_per_hour: float | None,
    api_price_per_million: float | None,
    monthly_tokens: float | None,
    scale_to_zero: bool,
    as_json: bool,
) -> None:
    """Dollars per 1M tokens, tokens per dollar, effective cost and break-evens.

    The price comes from --price-per-hour, or from the catalog with --gpu (the price of
    --tier the site's figures use, and the interruptible and reserved prices for the tier
    comparison).

    \b
    Example:
      infermeter calc cost --gpu h100-sxm --tokens-per-second 2800 --utilization 0.6
      infermeter calc perf --model llama-3.1-8b-instruct --gpu h100-sxm --offline \\
        --input-len 1000 --output-len 1000 --json | infermeter calc cost --from-perf -
    """
    predicted = _predicted(from_perf, tokens_per_second)
    if predicted is not None:
        for name, value in (
            ("--tokens-per-second-basis", tokens_per_second_basis),
            ("--tokens-per-second-gpu", tokens_per_second_gpu),
            ("--tokens-per-second-gpu-count", tokens_per_second_gpu_count),
        ):
            if value is not None:  # the perf output says them
                raise UsageLine(f"give {name} with --tokens-per-second only")
        _check_same_deployment(predicted, gpu, gpu_count)
        tokens_per_second = predicted.tokens_per_second
        tokens_per_second_basis = predicted.basis
        gpu, gpu_count = predicted.gpu, predicted.gpu_count
    if gpu is None and price_per_hour is None:
        raise UsageLine("give --price-per-hour or --gpu ID (its catalog price)")
    request = from_options(
        api.CostRequest,
        gpu=gpu,
        tokens_per_second=tokens_per_second or 0.0,
        tokens_per_second_basis=tokens_per_second_basis,
        gpu_count=gpu_count,
    )
    _show(_cost(request), tier, as_json)


def _cost(request: api.CostRequest) -> dict[str, Any]:
    """The cost payload; a catalog without the tier's price names --price-per-hour."""
    gpu = request.gpu
    with library_errors():
        try:
            return api.cost(request, catalog_prices(gpu) if gpu is not None else None)
        except CalculatorError as error:  # name the option, as the command line spells it
            if not str(error).startswith("price_per_hour: the catalog has no"):
                raise
            raise click.ClickException(
                str(error).removeprefix("price_per_hour: ").replace("a price", "--price-per-hour")
            ) from None


def _show(payload: dict[str, Any], tier: str, as_json: bool) -> None:
    """Print the payload, as JSON or as a table; a throughput of the perf calculator says so."""
    if as_json:
        print_json(payload)
        return
    click.echo(format_cost(payload, tier))
    basis = payload["tokens_per_second_basis"]
    if basis["kind"] != "given":
        of = " " if basis["kind"] == "other_deployment" else ": "  # its label says "of …"
        click.echo(
            f"tokens/s {payload['tokens_per_second']:,.0f} from the perf calculator{of}"
            f"{basis['label']}"
        )


def _check_same_deployment(predicted: PredictedThroughput, gpu: str | None, count: int) -> None:
    """A usage error where --gpu or --gpu-count names another deployment than the one whose
    throughput --from-perf gives: its tokens/s priced at another GPU's price, or as fewer GPUs',
    is no one's cost (an explicit --gpu-count 1 is told from the default by its source)."""
    given_count = click.get_current_context().get_parameter_source("gpu_count")
    count_given = given_count is not click.core.ParameterSource.DEFAULT
    for name, value, expected in (
        ("--gpu", gpu, predicted.gpu),
        ("--gpu-count", count if count_given else None, predicted.gpu_count),
    ):
        if value is not None and value != expected:
            raise UsageLine(
                f"{name} {value}: the --from-perf throughput is of {predicted.gpu_count} × "
                f"{predicted.gpu}; leave it out, or cost that deployment by its own perf output"
            )


def _predicted(
    from_perf: TextIO | None, tokens_per_second: float | None
) -> PredictedThroughput | None:
    """The predicted throughput of --from-perf; a usage error unless exactly one throughput."""
    if (from_perf is None) == (tokens_per_second is None):
        raise UsageLine("give exactly one of --tokens-per-second or --from-perf FILE")
    if from_perf is None:
        return None
    name = "--from-perf"
    limit = LIMITS_BYTES["prediction"]
    text = from_perf.read(limit + 1)  # a stream may have no end (/dev/zero)
    if len(text) > limit:
        raise click.ClickException(
            f"{name}: more than {limit / MIB:g} MiB; `calc perf --json` writes a few kB"
        )
    try:
        data = json_loads(text)
    except json.JSONDecodeError as error:
        raise click.ClickException(f"{name}: not JSON: {error.msg} (line {error.lineno})") from None
    try:
        return predicted_throughput(data, name)
    except CalculatorError as error:  # a bad file, not a bad option: exit 1
        raise click.ClickException(str(error)) from None
