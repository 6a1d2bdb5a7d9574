"""`infermeter registry answer`: the buyer's answer for one question, from the registry. Its
options are the answer page's fields (`calculators.inputs.ANSWER`), read by the same rules."""

from pathlib import Path

import click

from infermeter.bench.cli.calc_options import field_options
from infermeter.bench.cli.oneline import OneLineCommand
from infermeter.bench.cli.output_options import json_option
from infermeter.bench.cli.registry_options import registry_option, resolve_registry
from infermeter.calculators.inputs import ANSWER


@click.command(name="answer", cls=OneLineCommand)
@field_options(ANSWER)
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
    ttft_ms: float | None,
    tpot_ms: float | None,
    e2e_ms: float | None,
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
    slo = Slo(percentile, ttft_ms, tpot_ms, e2e_ms)
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
