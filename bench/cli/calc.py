"""`infermeter calc …`: the calculators on the command line (vram, cost, fit, perf).

Each command turns its options into the calculators' inputs, calls one library function and
prints a table (`bench.cli.calc_tables`), or one JSON object with `--json`. The commands live
beside this group: `calc_vram`, `calc_cost`, `calc_fit`; `calc_options` holds what they share.
"""

import click

from infermeter.bench.cli.calc_cost import cost_command
from infermeter.bench.cli.calc_fit import fit_command
from infermeter.bench.cli.calc_perf import perf_command
from infermeter.bench.cli.calc_vram import vram_command

__all__ = ["calc_group"]


@click.group(name="calc", commands=[vram_command, cost_command, fit_command, perf_command])
def calc_group() -> None:
    """Memory plan, cost per token, GPU fit and predicted performance.

    \b
    Example:
      infermeter calc vram --model llama-3.1-8b-instruct --gpu h100-sxm
    """
