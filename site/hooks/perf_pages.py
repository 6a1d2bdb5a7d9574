"""The Prediction error page: how far the performance predictor (`calculators.predict`) falls
from public results it was not fitted on, from what benchmarks/perf_error.py wrote
(`calculators.perf_fit`: the factors and each kind's held-out error; registry/perf_held_out.json:
every held-out prediction, each linked to its result page)."""

import html
import json
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from infermeter.calculators.perf_fit import FITTED, HELD_OUT, SPLITS
from infermeter.calculators.perf_labels import error_label, missed_target
from infermeter.registry.perf_error import HELD_OUT_FILE, KINDS, TARGETS_PCT

URI = "prediction-error.md"
KIND_NAMES = {
    "offline": "Offline throughput",
    "server": "Throughput at a rate or an SLO (server)",
    "latency": "Latency at low load (static batch of ≤ 8)",
}


def load_held_out(repo: Path) -> list[dict[str, Any]]:
    """The held-out rows the script wrote."""
    data = json.loads((repo / HELD_OUT_FILE).read_text(encoding="utf-8"))
    return list(data["rows"])


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} %"


def _summary(rows: Sequence[Mapping[str, Any]]) -> tuple[int, float | None, float | None]:
    errors = [row["error_pct"] for row in rows]
    if not errors:
        return 0, None, None
    within = sum(1 for error in errors if error <= 25) / len(errors) * 100
    return len(errors), statistics.median(errors), within


def _kind_table() -> str:
    lines = [
        "| Kind | Held-out results | Median error | Within 25 % | Target | Shown on the site |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for kind in KINDS:
        error = HELD_OUT[kind]
        missed = missed_target(kind)
        shown = "the roofline bound (target missed)"
        if missed is None:  # its error holds only on the GPUs its held-out results measured
            shown = f"the prediction on {', '.join(error['gpus'])}; elsewhere the roofline bound"
        lines.append(
            f"| {KIND_NAMES[kind]} | {error['rows']:,} ({html.escape(error['basis'])}) | "
            f"{_pct(error['median_pct'])} | {_pct(error['within_25_pct'])} | "
            f"≤ {TARGETS_PCT[kind]:g} % | {shown} |"
        )
    notes = [f"- {html.escape(missed_target(kind) or '')}" for kind in KINDS if missed_target(kind)]
    return "\n".join(lines) + ("\n\nTargets missed:\n\n" + "\n".join(notes) if notes else "")


def _split_table() -> str:
    lines = ["| Split | Kind | Results | Median error | Within 25 % |", "|---|---|---:|---:|---:|"]
    for split, kinds in SPLITS.items():
        for kind, summary in kinds.items():
            lines.append(
                f"| {html.escape(split)} | {kind} | {summary['rows']:,} | "
                f"{_pct(summary['median_pct'])} | {_pct(summary['within_25_pct'])} |"
            )
    return "\n".join(lines)


def _factor_table() -> str:
    lines = ["| Factor | Value | Fitting results |", "|---|---:|---:|"]
    # Each factor's shown name, its value and its key in `FITTED.rows` (a generation's name
    # may hold a space: 'Ada Lovelace', 'Blackwell Ultra', 'CDNA 3').
    named = {
        "memory": (FITTED.memory, "memory"),
        "compute": (FITTED.compute, "compute"),
        "tensor_parallel (compute, per doubling)": (FITTED.tensor_parallel, "tensor_parallel"),
        "step_overhead_ms": (FITTED.step_overhead_ms, "step_overhead_ms"),
    }
    for group in ("generation", "precision", "engine"):
        for name, value in getattr(FITTED, group).items():
            named[f"{group}:{name}"] = (value, f"{group}:{name}")
    for name, (value, key) in sorted(named.items()):
        count = FITTED.rows.get(key, 0)
        lines.append(f"| `{html.escape(name)}` | {value:.3f} | {count:,} |")
    return "\n".join(lines)


def _folded(attributes: str, summary: str, table: str) -> str:
    """A long table folded under its summary; `attributes` of the details: its class aligns
    the table's figures (infermeter.css)."""
    return (
        f'<details markdown="1" {attributes}><summary>{summary}</summary>\n\n{table}\n\n'
        "</details>\n"
    )


def _breakdown(rows: Iterable[Mapping[str, Any]]) -> str:
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        for attribute in ("gpu", "scenario", "precision"):
            key = (row["split"], row["kind"], attribute, str(row[attribute]))
            groups[key].append(row)
    lines = [
        "| Split | Kind | By | Value | Results | Median error | Within 25 % |",
        # figures right-aligned by `.im-error-breakdown` (infermeter.css), not a style per cell
        "|---|---|---|---|---|---|---|",
    ]
    for (split, kind, attribute, value), members in sorted(groups.items()):
        count, median, within = _summary(members)
        lines.append(
            f"| {html.escape(split)} | {kind} | {attribute} | {html.escape(value)} | {count:,} | "
            f"{_pct(median)} | {_pct(within)} |"
        )
    summary = "Every split, kind, GPU, scenario and precision"
    return _folded('class="im-error-breakdown"', summary, "\n".join(lines))


def _rows_table(rows: Iterable[Mapping[str, Any]]) -> str:
    lines = [
        "| Result | Kind | GPU | Model | Scenario | Precision | Measured | Predicted | Error |",
        # figures right-aligned by `.im-error-rows` (infermeter.css): 80 KB of style= in 993 rows
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        unit = "ms" if row["measured_name"] == "e2e_ms" else "tok/s"
        predicted = "–" if row["predicted"] is None else f"{row['predicted']:,.0f} {unit}"
        result = html.escape(row["result_id"])
        lines.append(
            f'| <a href="../results/{result}/">{html.escape(row["case"])}</a> | {row["kind"]} | '
            f"{html.escape(row['gpu'])} | {html.escape(row['model'])} | "
            f"{html.escape(row['scenario'])} | {row['precision']} | "
            f"{row['measured']:,.0f} {unit} | {predicted} | {row['error_pct']:.1f} % |"
        )
    summary = f"{len(lines) - 2:,} results, each linked"
    return _folded('class="im-error-rows" data-search-exclude', summary, "\n".join(lines))


def error_page(held_out: Sequence[Mapping[str, Any]]) -> str:
    """The page's Markdown."""
    time_rows = [row for row in held_out if row["split"] == "time"]
    return f"""---
title: Prediction error
---

# How far the predictions fall from results they never saw

Where the registry holds no result for a deployment, the calculators predict its throughput and
latency (`infermeter calc perf`): the memory plan says how many sequences fit, a roofline per
decode step (weights, KV cache, the experts a batch picks, the link between GPUs) and per
prefill says how long each takes at peak, and a few fitted efficiencies scale it. This page
measures how wrong that is, on public results the efficiencies were not fitted on, by a protocol
written down before any error was computed (`benchmarks/PERF_PROTOCOL.md`):

- **time split**: fitted on MLPerf rounds up to v5.1 and TensorRT-LLM releases up to 0.20;
  tested on everything later (TensorRT-LLM 1.x tables, AMD's tables, later MLPerf rounds);
- **leave-one-GPU-out** and **leave-one-model-family-out**: fitted without a GPU (a family),
  tested on it.

Error of a result: |predicted − measured| ÷ measured. Reproduce every figure here with
`python benchmarks/perf_error.py --by`.

## Held-out error by kind

Every prediction is labelled with its kind's error, e.g. "{html.escape(error_label("offline"))}".
Where a kind misses its target, the site shows the roofline bound (a ceiling no run passes)
for it instead of the prediction, and says so.

{_kind_table()}

## Every split

{_split_table()}

## The fitted factors

Shares of peak memory bandwidth and compute the physical model's steps reach, then one factor
per GPU generation, weight precision and engine family (1 where no fitting result has it),
each shrunk toward 1 as if four more results had a ratio of 1.

{_factor_table()}

## By GPU, scenario and precision

{_breakdown(held_out)}

## The held-out results of the time split

{_rows_table(time_rows)}"""
