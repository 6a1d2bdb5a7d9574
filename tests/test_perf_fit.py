"""The published error figures (calculators/perf_fit.py, registry/perf_held_out.json, written by
benchmarks/perf_error.py --write) held to the script, and the fitted factors shown to matter:
doubling any of them breaks the held-out error (mutation test)."""

import html
import json
import statistics
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from infermeter.calculators.perf_fit import FITTED, HELD_OUT, SPLITS
from infermeter.calculators.perf_labels import missed_target
from infermeter.calculators.predict import Factors
from infermeter.registry.perf_error import (
    HELD_OUT_FILE,
    KINDS,
    Ready,
    Scored,
    Summary,
    fit,
    fit_loss,
    predicted,
    ready_cases,
)

REPO = Path(__file__).resolve().parent.parent


def _published_rows() -> list[dict[str, Any]]:
    return list(json.loads((REPO / HELD_OUT_FILE).read_text(encoding="utf-8"))["rows"])


def test_perf_fit_tables_are_the_held_out_rows_summarised() -> None:
    rows = _published_rows()
    for split, kinds in SPLITS.items():
        for kind, summary in kinds.items():
            errors = [r["error_pct"] for r in rows if r["split"] == split and r["kind"] == kind]
            assert summary["rows"] == len(errors), (split, kind)
            if errors:
                median = statistics.median(float(e) for e in errors)
                assert summary["median_pct"] == pytest.approx(median, abs=0.06), (split, kind)


def test_perf_fit_targets_are_judged_as_the_protocol_says() -> None:
    """A kind meets its target only where every held-out split does (a miss on any one shows
    the bound), each split's median as the split tables state it."""
    for kind in KINDS:
        figure = HELD_OUT[kind]
        medians = figure["splits"]
        assert medians == {
            split: kinds[kind]["median_pct"]
            for split, kinds in SPLITS.items()
            if kinds[kind]["rows"]
        }
        assert figure["met"] == (
            bool(medians) and all(median <= figure["target_pct"] for median in medians.values())
        )


@cache
def _ready() -> tuple[Ready, ...]:
    rows, _ = ready_cases(REPO)
    return tuple(rows)


def _time_split() -> tuple[list[Ready], list[Ready]]:
    rows = _ready()
    return [r for r in rows if r.case.fitting], [r for r in rows if not r.case.fitting]


@pytest.mark.slow
def test_perf_fit_factors_and_time_split_errors_are_the_scripts() -> None:
    fitting, testing = _time_split()
    factors = fit(fitting)
    for name in ("memory", "compute", "tensor_parallel", "step_overhead_ms"):
        assert getattr(factors, name) == pytest.approx(getattr(FITTED, name), abs=1e-4), name
    for group in ("generation", "precision", "engine"):
        assert getattr(factors, group) == pytest.approx(dict(getattr(FITTED, group)), abs=1e-4)
    assert dict(factors.rows) == dict(FITTED.rows)
    published = {r["case"]: r for r in _published_rows() if r["split"] == "time"}
    assert len(published) == len(testing)
    for ready in testing:
        value = predicted(ready, FITTED) or None
        row = published[ready.case.case_id]
        if value is None or row["predicted"] is None:
            assert value == row["predicted"], ready.case.case_id
        else:
            assert value == pytest.approx(row["predicted"], rel=1e-3), ready.case.case_id


# Factors whose doubling does not break the held-out error, as measured, with the reason
# (strict xfail: a refit that mends one fails here, to be updated). The step overhead, picked
# from a grid of 0, 1, 2, 4, 8 ms before the fit became a real minimisation, had improved the
# held-out error when doubled (24.1 -> 21.9 %). Blackwell Ultra's, fitted on 6 rows, was here
# (34.5 -> 34.8 % on its 135 held-out v6.1 B300/GB300 rows) until the rows of MLPerf's
# llama3.1-8b, whose data set's lengths became known, joined them: 36.0 -> 67.6 % on 145.
UNDER_FITTED: dict[str, str] = {}


BASE = ("memory", "compute", "tensor_parallel", "step_overhead_ms")


def _factor_names() -> list[Any]:
    names = list(BASE)
    for group in ("generation", "precision", "engine"):
        names += [f"{group}:{name}" for name in getattr(FITTED, group)]
    return [
        pytest.param(name, marks=pytest.mark.xfail(reason=UNDER_FITTED[name], strict=True))
        if name in UNDER_FITTED
        else name
        for name in names
    ]


def _doubled(name: str) -> Factors:
    if name in BASE:
        return replace(FITTED, **{name: getattr(FITTED, name) * 2})
    group, key = name.split(":", 1)
    values: dict[str, float] = dict(getattr(FITTED, group))
    values[key] *= 2
    if group == "generation":
        return replace(FITTED, generation=values)
    if group == "precision":
        return replace(FITTED, precision=values)
    return replace(FITTED, engine=values)


def _uses(name: str) -> Callable[[Ready], bool]:
    if name == "tensor_parallel":  # 1 at tensor parallel 1, whatever its value
        return lambda ready: ready.prepared.tensor_parallel_size > 1
    if ":" not in name:
        return lambda ready: True
    group, key = name.split(":", 1)
    return lambda ready: ready.group(group) == key


def _median_error(rows: list[Ready], factors: Factors) -> float:
    return statistics.median(Scored(r.case, predicted(r, factors)).error_pct for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("name", _factor_names())
def test_perf_fit_doubling_any_factor_breaks_the_held_out_error(name: str) -> None:
    """On the held-out rows that use the factor (the fitting rows where no held-out row does):
    the median error with the factor doubled is at least 5 points worse, and past 20 % (the
    tightest target: the doubled factor's predictions would miss it outright). CDNA 3's and
    vLLM's held-out rows, mostly AMD's low-load vLLM batches whose per-step overhead no factor
    scales, moved 11.1 -> 23.1 % and 12.2 -> 24.5 % when written."""
    fitting, testing = _time_split()
    rows = [r for r in testing if _uses(name)(r)] or [r for r in fitting if _uses(name)(r)]
    assert rows, name
    published = _median_error(rows, FITTED)
    mutated = _median_error(rows, _doubled(name))
    assert mutated >= published + 5, (name, published, mutated)
    assert mutated > 20, (name, published, mutated)


@pytest.mark.slow
@pytest.mark.parametrize("name", BASE)
def test_perf_fit_base_factors_sit_at_the_fitting_rows_minimum(name: str) -> None:
    """The fit is a minimisation: moving any base factor a quarter either way from its fitted
    value does not lower the loss it was fitted on (the fitting split's offline rows)."""
    fitting, _ = _time_split()
    offline = [r for r in fitting if r.case.kind == "offline"]
    fitted = fit_loss(offline, FITTED)
    for scale in (0.75, 1.25):
        moved = replace(FITTED, **{name: getattr(FITTED, name) * scale})
        assert fit_loss(offline, moved) >= fitted, (name, scale)


def test_perf_fit_held_out_figures_follow_the_published_rows() -> None:
    # The kind's figure is the time split's where it has rows, else both leave-one-out splits'.
    rows = _published_rows()
    for kind in KINDS:
        basis_time = HELD_OUT[kind]["basis"].startswith("time")
        chosen = [r for r in rows if r["kind"] == kind and ((r["split"] == "time") == basis_time)]
        summary = Summary(
            len(chosen),
            # Unrounded: the rows' errors are rounded to 0.01 and the figure to 0.1, so rounding
            # their median again could move it a further 0.1 (30.549 -> 30.5, but 30.55 -> 30.6).
            statistics.median(float(r["error_pct"]) for r in chosen) if chosen else None,
            None,
        )
        assert HELD_OUT[kind]["rows"] == summary.rows, kind
        # the GPUs its error holds on (calculators.perf_labels.beyond_measured)
        assert HELD_OUT[kind]["gpus"] == sorted({r["gpu"] for r in chosen}), kind
        if chosen:
            assert HELD_OUT[kind]["median_pct"] == pytest.approx(summary.median_pct, abs=0.06)


def test_perf_fit_error_page_states_the_published_figures_and_links_every_result() -> None:
    import perf_pages

    rows = _published_rows()
    page = perf_pages.error_page(rows)
    for kind in KINDS:
        figure = HELD_OUT[kind]
        if figure["median_pct"] is not None:
            assert f"{figure['median_pct']:.1f} %" in page, kind
        if not figure["met"]:
            worst = max(m for m in figure["splits"].values() if m > figure["target_pct"])
            assert f"({worst - figure['target_pct']:.1f} points over)" in page
            assert html.escape(missed_target(kind) or "") in page
        else:  # shown only where its held-out results were measured
            gpus = ", ".join(figure["gpus"])
            assert f"the prediction on {gpus}; elsewhere the roofline bound" in page, kind
    for row in rows:
        if row["split"] == "time":
            assert f'href="../results/{row["result_id"]}/"' in page, row["case"]


def test_perf_fit_error_page_counts_each_factor_s_own_fitting_results() -> None:
    # The table looked a factor's count up by its name's first word: 'generation:Ada Lovelace'
    # and 'generation:CDNA 3' showed 0 fitting results (beside a factor that is 1 only where
    # none has it) and 'generation:Blackwell Ultra' showed Blackwell's 196 for its own 6.
    import perf_pages

    page = perf_pages.error_page(_published_rows())
    for group in ("generation", "precision", "engine"):
        for name, value in getattr(FITTED, group).items():
            row = f"| `{html.escape(f'{group}:{name}')}` | {value:.3f} |"
            assert f"{row} {FITTED.rows[f'{group}:{name}']:,} |" in page, name
    row = "| `tensor_parallel (compute, per doubling)` |"
    assert f"{row} {FITTED.tensor_parallel:.3f} | {FITTED.rows['tensor_parallel']:,} |" in page
