"""The `infermeter` console script: one click group with the `calc`, `bench` and `registry` groups.

Each group lives in its own module under `bench/commands/`; this file only assembles them.
"""

import click

from bench.commands.bench import bench_group
from bench.commands.calc import calc_group
from bench.commands.fleet import fleet_command, plan_group
from bench.commands.harvest import harvest_group
from bench.commands.migrate import migrate_command
from bench.commands.oneline import OneLineGroup
from bench.commands.registry import registry_group
from bench.commands.registry_answer import answer_command


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
