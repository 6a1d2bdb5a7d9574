"""`infermeter bench …`: measure a live inference server.

The group only; its commands live beside it: `bench_run` (`bench run`, its options in
`bench_run_options`), `bench_results` (`bench import`, `compare`, `report`) and, added by
`bench.cli.main`, `fleet` (`bench plan`, `bench fleet`). `bench_options` holds what they share.
"""

from __future__ import annotations

import click

from infermeter.bench.cli.bench_results import compare_command, import_command, report_command
from infermeter.bench.cli.bench_run import run_command

__all__ = ["bench_group"]


@click.group(name="bench")
def bench_group() -> None:
    """Benchmark an inference server and write a result file.

    \b
    Example:
      infermeter bench run --endpoint http://127.0.0.1:8000 --concurrency 1,4,16
    """


bench_group.add_command(run_command)
bench_group.add_command(import_command)
bench_group.add_command(compare_command)
bench_group.add_command(report_command)
