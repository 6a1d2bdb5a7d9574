"""The `infermeter` console script: one click group with the `calc`, `bench` and `registry` groups.

Each group lives in its own module under `bench/cli/`; this file only assembles them.
"""

import click

from infermeter.bench.cli.bench import bench_group
from infermeter.bench.cli.calc import calc_group
from infermeter.bench.cli.fleet import fleet_command, plan_group
from infermeter.bench.cli.harvest import harvest_group
from infermeter.bench.cli.migrate import migrate_command
from infermeter.bench.cli.oneline import OneLineGroup
from infermeter.bench.cli.registry import registry_group
from infermeter.bench.cli.registry_answer import answer_command


@click.group(
    cls=OneLineGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="infermeter")
def main() -> None:
    """infermeter: what a token really costs on each GPU, measured, not marketed.

    \b
    Example:
      infermeter calc vram --model llama-3.1-8b-instruct --gpu h100-sxm
    """


main.add_command(calc_group)
bench_group.add_command(plan_group)
bench_group.add_command(fleet_command)
main.add_command(bench_group)
main.add_command(registry_group)
registry_group.add_command(migrate_command)
registry_group.add_command(answer_command)
registry_group.add_command(harvest_group)
