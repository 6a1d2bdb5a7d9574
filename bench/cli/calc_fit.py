"""`infermeter calc fit`: the GPUs that serve a model, fewest first (`calculators.api.fit`)."""

import click

import infermeter.calculators.api as api
from infermeter.bench.cli.calc_options import (
    calc_command,
    library_errors,
    print_json,
)
from infermeter.bench.cli.calc_tables import format_fit
from infermeter.bench.cli.parsed_options import from_options
from infermeter.calculators.inputs import FIT
from infermeter.registry.lookup import gpu_options, model_arch


@calc_command("fit", FIT, engine=True)
def fit_command(
    model: str,
    context: int,
    concurrency: int,
    engine: api.EngineRequest,
    gpu: tuple[str, ...],
    tier: str,
    rank_by: str,
    as_json: bool,
) -> None:
    """Which GPUs serve a model at a context and concurrency, with the fewest GPUs (1, 2, 4, 8).

    The count is one replica's tensor parallel size; with --data-parallel-size the deployment
    takes that many times as many GPUs (the GPUs column), and its $/hour is theirs. The
    concurrency is the deployment's: each replica holds ceil(concurrency / DP) requests.

    \b
    Example:
      infermeter calc fit --model llama-3.1-70b-instruct --context 32768 --concurrency 16
    """
    with library_errors():
        request = from_options(api.FitRequest, arch=model_arch(model), engine=engine)
        payload = api.fit(request, gpu_options(tier, gpu or None))
    if as_json:
        print_json(payload)
        return
    click.echo(format_fit(payload))
