"""`infermeter calc …`: the calculators on the command line."""

import click


@click.group(name="calc")
def calc_group() -> None:
    """Memory plan, cost per token and GPU fit.

    \b
    Example:
      infermeter calc vram --model llama-3.1-8b-instruct --gpu h100-sxm
    """
