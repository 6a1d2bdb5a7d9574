"""`infermeter bench …`: measure a live inference server."""

import click


@click.group(name="bench")
def bench_group() -> None:
    """Benchmark an inference server and write a result file.

    \b
    Example:
      infermeter bench --help
    """
