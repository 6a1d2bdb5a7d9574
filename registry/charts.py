"""The data the result charts draw, from index rows: one function for the site's compare pages
and for `infermeter bench report`, so a set of results is drawn one way (the drawing itself is
`site/assets/charts.js`).

The speed chart draws only the points `registry.across_rows.with_pareto_front` marked (on the
front or not). A point with no front to be on (offline, server at an SLO, no per-user rate, the
only closed-loop point of its GPU × count) has no place on a throughput-against-speed curve, so
it is left out rather than joined to other work.

A compare page draws one line per GPU × count through its Pareto front, not through all of its
points: one GPU × count holds runs of different deployments (DeepSeek-R1 at 1k → 1k on 8 ×
mi355x: seven InferenceX runs of ATOM and SGLang, FP8 and FP4, with and without MTP), and a line
through all of their points zigzags between them. The front is what a buyer of that GPU × count
can get at each speed per user, whichever deployment gives it, and it is the front table above
the chart, drawn. One line per deployment would put 33 lines with long names (engine,
precision, parallelism, prefill/decode split) on that chart instead of 21, many of two or three
points. `bench report` draws each of its results' sweeps whole (`whole_sweeps`): there a line is
one run, and its points past the knee are part of what it measured."""

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from infermeter.registry.index_row import IndexRow


def default_label(row: IndexRow) -> str:
    """`2 × h100-sxm`: the count and the GPU never run together."""
    return f"{row.gpu_count} × {row.gpu}"


def lowest_usd_per_million(row: IndexRow) -> float | None:
    """On-demand $ per 1M accepted tokens, else per 1M output tokens (no SLO stated)."""
    accepted = row.on_demand.usd_per_million_accepted_tokens
    return accepted if accepted is not None else row.on_demand.usd_per_million_output_tokens


def _drawn(row: IndexRow, whole_sweeps: bool) -> bool:
    if row.tokens_per_s_per_user is None or row.output_tokens_per_s_per_gpu is None:
        return False
    return row.on_pareto_front is True or (whole_sweeps and row.on_pareto_front is not None)


def chart_data(
    rows: Iterable[IndexRow],
    label_of: Callable[[IndexRow], str] | None = None,
    whole_sweeps: bool = False,
) -> dict[str, Any]:
    """`{"pareto": {label: [[tok/s per user, output tok/s per GPU, on the front], …]}, "cost":
    {label: lowest $ per 1M accepted (else output) tokens, on-demand}}`; one label per GPU and
    count, or `label_of(row)` when given. A label's speed points are its Pareto front, or every
    point of its sweeps with `whole_sweeps`."""
    label_of = label_of or default_label
    pareto: dict[str, list[list[Any]]] = defaultdict(list)
    cost: dict[str, float] = {}
    for row in rows:
        label = label_of(row)
        if _drawn(row, whole_sweeps):
            pareto[label].append(
                [row.tokens_per_s_per_user, row.output_tokens_per_s_per_gpu, row.on_pareto_front]
            )
        usd = lowest_usd_per_million(row)
        if usd is not None:
            cost[label] = min(usd, cost.get(label, usd))
    return {
        "pareto": {label: sorted(points) for label, points in sorted(pareto.items())},
        "cost": dict(sorted(cost.items(), key=lambda item: item[1])),
    }
