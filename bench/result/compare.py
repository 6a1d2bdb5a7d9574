"""Results side by side: the buyer's figures per load point and at the SLO, with their ratios.

Two results can be ranked only when they measured the same experiment on different hardware or
software: the same model, precision and workload (the `COMPARABLE_PROPERTIES` of the registry
outside `identity.gpu`, `identity.engine` and `identity.serving`, which are what a comparison
is for). Otherwise `NotComparable` names every property that differs and its values.

Load points are matched by their load (`Load.label`, e.g. `concurrency 16`); server-at-SLO points
(a rate search's answer) are matched by their bounds, whatever rate each found. Figures come from
the registry's index rows (`registry.index.index_rows`), so they are the site's own: output
tokens/s per GPU, tokens/s per user, p99 latencies, and $ per 1M output tokens and per 1M
accepted tokens (those of requests within the result's SLO) at the figures' on-demand catalog
price. Each result after the first gets a ratio to the first (×1.25 means a
quarter more; for latencies and cost, lower is better, which the table's header says).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infermeter.bench.errors import BenchError
from infermeter.calculators.plural import counted
from infermeter.registry.errors import InvalidFileError, cut
from infermeter.registry.index_row import FIGURES, IndexRow
from infermeter.registry.index_rows import index_rows
from infermeter.registry.models import (
    COMPARABLE_PROPERTIES,
    RUN_OWNER_PROPERTIES,
    PriceEntry,
    Result,
    comparability_key,
)
from infermeter.registry.models.measurements import slo_bounds_text
from infermeter.registry.prices import PriceBook
from infermeter.registry.result_reader import read_valid_result

# Identity that a comparison varies on purpose; everything else must match.
VARIED_PREFIXES = ("identity.gpu.", "identity.engine.", "identity.serving.")
MUST_MATCH = tuple(p for p in COMPARABLE_PROPERTIES if not p.startswith(VARIED_PREFIXES))


BUYER_COLUMNS = (
    # The buyer's figures, as the index declares how each reads (`registry.index_row.FIGURES`).
    "output_tokens_per_s_per_gpu",
    "tokens_per_s_per_user",
    "ttft_ms_p99",
    "tpot_ms_p99",
    "e2e_ms_p99",
    "on_demand_usd_per_million_output_tokens",
    "on_demand_usd_per_million_accepted_tokens",
)


class CompareError(BenchError):
    """A result file cannot be read (its first problem, and how to see every one)."""


# How many differing properties the error shows with their values; the rest it names.
VALUES_SHOWN = 3


class NotComparable(BenchError):
    """The results measured different experiments: `differences` maps each property that differs
    to who holds which value. The message names every property, with the values of the first
    `VALUES_SHOWN`, so that it stays one readable line."""

    def __init__(self, differences: dict[str, str]) -> None:
        self.differences = differences
        named = list(differences)
        shown = "; ".join(f"{prop} differs ({differences[prop]})" for prop in named[:VALUES_SHOWN])
        rest = named[VALUES_SHOWN:]
        also = f"; {', '.join(rest)} differ{'s' if len(rest) == 1 else ''} too" if rest else ""
        super().__init__(f"not comparable, so not ranked: {shown}{also}")


@dataclass(frozen=True)
class NamedResult:
    """A result and the name it goes by in the table (its file's name)."""

    name: str
    result: Result


def read_results(paths: Sequence[Path]) -> list[NamedResult]:
    """Each file read and checked as the registry checks it; raises CompareError."""
    named = []
    for path in paths:
        try:
            result = read_valid_result(path, str(path))
        except InvalidFileError as error:
            raise CompareError(error.one_line(str(path))) from None
        named.append(NamedResult(path.name, result))
    return named


def differences(results: Sequence[NamedResult]) -> dict[str, str]:
    """Every `MUST_MATCH` property on which the results disagree, with who holds which value."""
    # The key holds COMPARABLE_PROPERTIES, then whose run it is (RUN_OWNER_PROPERTIES).
    paths = COMPARABLE_PROPERTIES + RUN_OWNER_PROPERTIES
    keys = [dict(zip(paths, comparability_key(r.result), strict=True)) for r in results]
    found = {}
    for prop in MUST_MATCH:
        values = [key[prop] for key in keys]
        if len(set(values)) > 1:
            found[prop.removeprefix("identity.")] = _who_has(results, values)
    return found


def _who_has(results: Sequence[NamedResult], values: Sequence[object]) -> str:
    """Each file's value (`a.json fp8, b.json None`); past three files, each value once with
    how many files hold it. A value is cut to 40 characters."""
    if len(results) <= 3:
        return ", ".join(
            f"{r.name} {cut(str(v), 40)}" for r, v in zip(results, values, strict=True)
        )
    held = Counter(cut(str(value), 40) for value in values)  # in the order the files give
    return ", ".join(f"{value} in {counted(count, 'file')}" for value, count in held.items())


def _load_key(row: IndexRow) -> str:
    if row.rate_search_percentile is not None:
        bounds = slo_bounds_text(
            row.rate_search_percentile,
            row.rate_search_ttft_ms,
            row.rate_search_tpot_ms,
            row.rate_search_e2e_ms,
        )
        # A closed loop's highest concurrency is another scenario than an open loop's rate.
        searched = "concurrency" if row.arrival == "closed" else "rate"
        return f"at the SLO, {searched} ({bounds})"
    return row.load_label


@dataclass(frozen=True)
class ComparedLoad:
    """One load, its row in each result (None where a result did not measure it)."""

    load: str
    rows: tuple[IndexRow | None, ...]


def compare(results: Sequence[NamedResult], prices: Iterable[PriceEntry]) -> list[ComparedLoad]:
    """The loads of the results, matched across them (SLO points first, then in the first
    result's order); raises NotComparable when they measured different experiments."""
    if len(results) < 2:
        raise CompareError("give at least two result files to compare", "RESULT.json")
    problems = differences(results)
    if problems:
        raise NotComparable(problems)
    book = PriceBook(prices)
    by_result = [
        {_load_key(row): row for row in index_rows(r.result, r.name, book)} for r in results
    ]
    order: list[str] = []
    for rows in by_result:
        order += [key for key in rows if key not in order]
    order.sort(key=lambda key: not key.startswith("at the SLO"))
    return [ComparedLoad(key, tuple(rows.get(key) for rows in by_result)) for key in order]


def _value(row: IndexRow | None, column: str) -> float | None:
    if row is None:
        return None
    value = row.column(column)
    return float(value) if value is not None else None


def _searched_levels(rows: Sequence[IndexRow | None]) -> list[str]:
    """The answer of each result's search (its highest rate or concurrency at the SLO) and
    its ratio to the first's: the figure a buyer compares first."""
    closed = any(row is not None and row.arrival == "closed" for row in rows)
    levels = [
        None if row is None else (row.concurrency if closed else row.request_rate) for row in rows
    ]
    unit = "" if closed else " req/s"
    base = levels[0]
    return [
        "highest concurrency" if closed else "highest rate",
        *("-" if level is None else f"{level:g}{unit}" for level in levels),
        *(f"×{level / base:.2f}" if base and level is not None else "-" for level in levels[1:]),
    ]


def format_comparison(results: Sequence[NamedResult], loads: Sequence[ComparedLoad]) -> str:
    """The buyer's table: per load, each figure for every result and its ratio to the first."""
    names = [chr(ord("A") + i) if i < 26 else f"R{i + 1}" for i in range(len(results))]
    lines = [
        f"{name} = {r.name}: {r.result.identity.gpu.count}× {r.result.identity.gpu.id}, "
        f"{r.result.identity.engine.name} {r.result.identity.engine.version}"
        for name, r in zip(names, results, strict=True)
    ]
    lines.append(
        f"ratios are to {names[0]} (higher is better for throughput, lower for latency and cost)"
    )
    header = ["load", "figure", *names, *(f"{name}/{names[0]}" for name in names[1:])]
    rows: list[list[str]] = []
    for load in loads:
        if load.load.startswith("at the SLO"):
            rows.append([load.load, *_searched_levels(load.rows)])
        for column in BUYER_COLUMNS:
            figure = FIGURES[column]
            values = [_value(row, column) for row in load.rows]
            if all(value is None for value in values):
                continue
            base = values[0]
            ratios = [
                f"×{value / base:.2f}" if base and value is not None else "-"
                for value in values[1:]
            ]
            cells = ["-" if v is None else f"{v:,.{figure.digits}f}" for v in values]
            rows.append([load.load, figure.label, *cells, *ratios])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    table = [
        "  ".join(
            cell.ljust(w) if i < 2 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [header, *rows]
    ]
    return "\n".join([*lines, "", *table])


def comparison_json(
    results: Sequence[NamedResult], loads: Sequence[ComparedLoad]
) -> dict[str, Any]:
    """The comparison as `bench compare --json` prints it: the results' names, then each load
    with one row per result (None where that result did not measure the load)."""
    return {
        "results": [r.name for r in results],
        "loads": [
            {
                "load": load.load,
                "rows": [row.as_dict() if row else None for row in load.rows],
            }
            for load in loads
        ],
    }
