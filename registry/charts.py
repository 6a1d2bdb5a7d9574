"""The data the result charts draw, from index rows: one function for the site's compare pages
and for `infermeter bench report`, so a set of results is drawn one way (the drawing itself is
`site/assets/charts.js`)."""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from registry.index import IndexRow


def chart_data(rows: Iterable[IndexRow], label_of: Any = None) -> dict[str, Any]:
    """`{"pareto": {label: [[tok/s per user, output tok/s per GPU], …]}, "cost": {label: lowest
    $ per 1M accepted (else output) tokens, on-demand}}`; one label per GPU and count, or
    `label_of(row)` when given."""
    pareto: dict[str, list[list[float]]] = defaultdict(list)
    cost: dict[str, float] = {}
    for row in rows:
        label = label_of(row) if label_of is not None else f"{row.gpu} ×{row.gpu_count}"
        if row.tokens_per_s_per_user is not None and row.output_tokens_per_s_per_gpu is not None:
            pareto[label].append([row.tokens_per_s_per_user, row.output_tokens_per_s_per_gpu])
        usd = (
            row.on_demand_usd_per_million_accepted_tokens
            or row.on_demand_usd_per_million_output_tokens
        )
        if usd is not None:
            cost[label] = min(usd, cost.get(label, usd))
    return {
        "pareto": {label: sorted(points) for label, points in sorted(pareto.items())},
        "cost": dict(sorted(cost.items(), key=lambda item: item[1])),
    }
