"""`infermeter registry answer`: the buyer's answer for one question, from the registry."""

from pathlib import Path

import click

from infermeter.bench.cli.oneline import POSITIVE_FLOAT, FiniteFloatRange, OneLineCommand
from infermeter.bench.cli.output_options import json_option
from infermeter.bench.cli.registry_options import registry_option, resolve_registry


@click.command(name="answer", cls=OneLineCommand)
@click.option("--model", required=True, help="Model catalog id, e.g. llama-3.1-70b-instruct.")
@click.option(
    "--workload",
    default=None,
    help="Workload key, or its label as the site shows it; default: each in turn.",
)
@click.option(
    "--precision", default=None, help="Weight precision (fp8, fp4, 16-bit …); default: each."
)
@click.option(
    "--percentile",
    type=FiniteFloatRange(min=0, max=100, min_open=True),
    default=99.0,
    show_default=True,
    help="The percentile every latency bound applies to.",
)
@click.option("--slo-ttft-ms", type=POSITIVE_FLOAT, help="TTFT bound, ms.")
@click.option("--slo-tpot-ms", type=POSITIVE_FLOAT, help="TPOT bound, ms.")
@click.option("--slo-e2e-ms", type=POSITIVE_FLOAT, help="End-to-end bound, ms.")
@click.option("--tier", default="on_demand", show_default=True, help="Price tier.")
@click.option(
    "--no-estimate",
    is_flag=True,
    help="Skip the estimate (prediction or roofline bound) shown where nothing qualifies.",
)
@json_option("text")
@registry_option("its results and price catalog are the evidence")
def answer_command(
    model: str,
    workload: str | None,
    precision: str | None,
    percentile: float,
    slo_ttft_ms: float | None,
    slo_tpot_ms: float | None,
    slo_e2e_ms: float | None,
    tier: str,
    no_estimate: bool,
    as_json: bool,
    registry_root: Path | None,
) -> None:
    """Rank deployments (GPU x count) by $ per 1M accepted output tokens for a model, workload,
    weight precision, SLO and price tier; no SLO bound asks the batch question. Nothing is
    ranked across precisions, workloads, MLPerf scenarios or lanes.

    \b
    Examples:
      infermeter registry answer --model llama-3.1-70b-instruct --percentile 95 --slo-ttft-ms 1000
      infermeter registry answer --model llama-2-70b-chat --slo-ttft-ms 2000 --slo-tpot-ms 200
    """
    import json

    from infermeter.calculators.accepted import Slo
    from infermeter.registry.answers import answer_question, answer_text, answers_payload
    from infermeter.registry.errors import RegistryError

    root = resolve_registry(registry_root)
    slo = Slo(percentile, slo_ttft_ms, slo_tpot_ms, slo_e2e_ms)
    try:
        question, answers = answer_question(
            root, model, slo, tier, workload, precision, estimate=not no_estimate
        )
    except RegistryError as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        payload = answers_payload(question, answers)
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    click.echo(answer_text(answers))
