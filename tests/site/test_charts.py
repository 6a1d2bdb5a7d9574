"""The compare pages' charts as drawn in a real headless Chromium, read from their uPlot
instances (charts.js keeps each on its element): bars start at zero, the Pareto charts' axes at
their 0 tick, axis titles never overlap the tick labels, no point is clipped by the plot's edge
(on every Pareto chart of the page), each Pareto line falls as speed per user rises (it is a
GPU × count's front, no zigzag) and looks different from the others without hovering (its GPU's
colour, its own dash and marker), and the GPU names under the bars do not overlap one another
or run off the canvas, on a desktop and on a phone's width."""

import itertools
import math
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

# Per axis: the room its tick labels need from the axis line (ticks, gap, then the labels'
# reach: their width on a left axis, their height on a bottom one, or the rotated box's
# height) against the room it has (`_size`; the title sits beyond it, in `labelSize`).
_CHART = """el => {
  const u = el._uplot;
  const ctx = document.createElement('canvas').getContext('2d');
  const axes = u.axes.map((a) => {
    ctx.font = a.font[0].replace(/[0-9.]+px/, a.font[2] + 'px');
    const values = (a._values || []).map((v) => (v == null ? '' : String(v)));
    const angle = Math.abs(a._rotate || 0) * Math.PI / 180;
    const widths = values.map((v) => ctx.measureText(v).width);
    const h = a.font[2];
    const reach = (w) => a.side % 2 ? w
      : (angle ? w * Math.sin(angle) + h * Math.cos(angle) : h);
    return {
      side: a.side, size: a._size, titleFont: a.labelFont[2], labelSize: a.labelSize,
      need: a.ticks.size + a.gap + Math.max(0, ...widths.map(reach)),
      angle, height: h, widths, values,
      positions: (a._splits || []).map((s) => u.valToPos(s, a.scale)),
    };
  });
  const points = [];
  u.data.slice(1).forEach((ys, i) => {
    const series = u.series[i + 1];
    const radius = series.points.show ? series.points.size / 2 : 0;
    ys.forEach((y, j) => {
      if (y != null) points.push([u.valToPos(u.data[0][j], 'x'), u.valToPos(y, 'y'), radius]);
    });
  });
  const values = u.data.slice(1).flat().filter((v) => v != null);
  return {
    xmin: u.scales.x.min, ymin: u.scales.y.min, ymax: u.scales.y.max,
    zero: [u.valToPos(0, 'x'), u.valToPos(0, 'y')],
    firstTicks: u.axes.map((a) => (a._splits || [])[0]),
    left: u.bbox.left / devicePixelRatio, width: u.bbox.width / devicePixelRatio,
    height: u.bbox.height / devicePixelRatio, largest: Math.max(...values), axes, points,
    lines: u.data.slice(1).map((ys) => ys.filter((y) => y != null)),
  };
}"""

DRAWN = "() => !!document.querySelector('[data-chart=\"cost\"]')?._uplot"
# every section's charts drawn: tables.js draws them one after another
ALL_DRAWN = """() => [...document.querySelectorAll('.im-charts')].every((c) => {
  const data = JSON.parse(c.dataset.chartData || '{"pareto": {}, "cost": {}}');
  return [['pareto', data.pareto], ['cost', data.cost]].every(([name, values]) => {
    const el = c.querySelector(`[data-chart="${name}"]`);
    return !el || !Object.keys(values).length || !!el._uplot;
  });
})"""
# A Pareto chart's scales reach one marker's room (its radius and 2 px, as charts.js leaves)
# past zero; its axes' first ticks are zero all the same.
ROOM = 7 / 2 + 2


def _assert_drawn_whole(name: str, chart: dict[str, Any]) -> None:
    for axis in chart["axes"]:
        assert axis["need"] <= axis["size"] + 0.5, (name, axis)  # titles clear the ticks
        assert axis["titleFont"] <= axis["labelSize"], (name, axis)
    for x, y, radius in chart["points"]:  # every point whole inside the plot
        assert radius <= x <= chart["width"] - radius, (name, x)
        assert radius <= y <= chart["height"] - radius, (name, y)


def _assert_pareto_from_zero(chart: dict[str, Any]) -> None:
    assert chart["firstTicks"] == [0, 0], chart["firstTicks"]
    x, y = chart["zero"]  # zero a marker's room from the plot's left and bottom, no further
    assert ROOM - 0.5 <= x <= ROOM + 0.5, chart["zero"]
    assert ROOM - 0.5 <= chart["height"] - y <= ROOM + 0.5, chart["zero"]


# Hover the first point of the chart's longest line: that line stays whole, the others fade.
_HOVER_TARGET = """el => {
  const u = el._uplot;
  const lengths = u.data.slice(1).map((ys) => ys.filter((y) => y != null).length);
  const series = lengths.indexOf(Math.max(...lengths)) + 1;
  const index = u.data[series].findIndex((y) => y != null);
  const box = u.over.getBoundingClientRect();
  return {
    series, x: box.left + u.valToPos(u.data[0][index], 'x'),
    y: box.top + u.valToPos(u.data[series][index], 'y'),
  };
}"""


def _open_drawn(page: Any, url: str, width: int) -> None:
    """Open a compare page at `width` and wait until its cost chart and every chart is drawn."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url)
    page.wait_for_function(DRAWN)
    page.wait_for_function(ALL_DRAWN)


def test_charts_hovering_a_point_brings_its_line_forward(
    page: Any, site_url: str, built_site: Path
) -> None:
    _open_drawn(page, f"{site_url}/compare/deepseek-r1--custom/", 1280)
    chart = page.locator('[data-chart="pareto"]').last
    chart.scroll_into_view_if_needed()
    target = chart.evaluate(_HOVER_TARGET)
    page.mouse.move(target["x"], target["y"])
    alphas = chart.evaluate("el => el._uplot.series.slice(1).map((s) => s.alpha ?? 1)")
    assert len(alphas) >= 20  # many more lines than the 10 colours
    assert alphas[target["series"] - 1] == 1
    assert sorted(set(alphas)) == [0.25, 1]
    assert alphas.count(1) == 1
    # the legend in GPU families, each counting by value: 4 × … and 8 × … before 12 × …
    labels = chart.evaluate("el => el._uplot.series.slice(1).map((s) => s.label)")
    families = [(label.split(" × ")[1], int(label.split(" × ")[0])) for label in labels]
    assert families == sorted(families), labels


# Each Pareto line as drawn (colour, dash, marker shape) and as its legend row shows it.
_LOOKS = """el => el._uplot.series.slice(1).map((s, i) => {
  const row = el._uplot.root.querySelectorAll('.u-legend .u-series')[i];
  return {
    label: s.label, stroke: s.stroke(el._uplot, i + 1), dash: s.dash ?? [], shape: s.shape ?? null,
    swatch: !!row.querySelector('.u-marker canvas'), legend: row.textContent.trim(),
  };
})"""


def test_charts_every_pareto_line_looks_different_without_hovering(
    page: Any, site_url: str, built_site: Path
) -> None:
    _open_drawn(page, f"{site_url}/compare/deepseek-r1--custom/", 1280)
    charts = page.eval_on_selector_all(
        '[data-chart="pareto"]', f"els => els.filter((e) => e._uplot).map({_LOOKS})"
    )
    assert max(len(lines) for lines in charts) > 20  # many more lines than colours
    for lines in charts:
        looks = [(line["stroke"], tuple(line["dash"]), line["shape"]) for line in lines]
        assert len(set(looks)) == len(looks), looks  # colour, dash and marker: never all three
        colour_of_gpu = {line["label"].split(" × ")[1]: line["stroke"] for line in lines}
        for line in lines:  # a GPU's fronts share its colour, and no other GPU has it
            assert line["stroke"] == colour_of_gpu[line["label"].split(" × ")[1]], line
        assert len(set(colour_of_gpu.values())) == len(colour_of_gpu), colour_of_gpu
        assert all(line["swatch"] for line in lines)  # the legend draws each line's look
        # one legend row per line, named as the line (no row for the x series, 'Value: --')
        assert [line["legend"] for line in lines] == [line["label"] for line in lines]


@pytest.mark.parametrize("width", [1280, 390])
def test_charts_start_at_zero_and_nothing_overlaps_or_is_clipped(
    page: Any, site_url: str, built_site: Path, width: int
) -> None:
    # the compare page with the most rows: the most GPUs under its bars
    pages = {p.parent.name: p.read_text() for p in (built_site / "compare").glob("*/index.html")}
    slug = max(pages, key=lambda s: pages[s].count("data-kind="))
    _open_drawn(page, f"{site_url}/compare/{slug}/", width)
    cost = page.eval_on_selector('[data-chart="cost"]', _CHART)
    assert cost["ymin"] == 0  # bars start at zero
    assert cost["ymax"] >= cost["largest"]
    _assert_drawn_whole("cost", cost)
    paretos = page.eval_on_selector_all(
        '[data-chart="pareto"]', f"els => els.filter((e) => e._uplot).map({_CHART})"
    )
    assert paretos  # the page with the most rows has sweeps to draw
    for chart in paretos:
        _assert_pareto_from_zero(chart)
        _assert_drawn_whole("pareto", chart)
        for line in chart["lines"]:  # each line a GPU × count's front: no zigzag
            assert all(a > b for a, b in itertools.pairwise(line)), line
    # the GPU names under the bars: apart from one another, and inside the canvas
    bottom = next(axis for axis in cost["axes"] if axis["side"] == 2)
    shown = [
        (position, label_width)
        for position, label_width, value in zip(
            bottom["positions"], bottom["widths"], bottom["values"], strict=True
        )
        if value
    ]
    assert len(shown) >= 2
    for (left, left_width), (right, right_width) in itertools.pairwise(shown):
        if bottom["angle"]:  # parallel slanted labels: the distance between their baselines
            assert (right - left) * math.sin(bottom["angle"]) >= bottom["height"], bottom
        else:
            assert right - left >= (left_width + right_width) / 2 + 2, bottom
    first, first_width = shown[0]
    reach = first_width * math.cos(bottom["angle"]) if bottom["angle"] else first_width / 2
    assert cost["left"] + first - reach >= 0, bottom


def test_cost_chart_live_legend_names_the_bar_under_the_cursor(
    page: Any, site_url: str, built_site: Path
) -> None:
    # uPlot's default x row reads "Value" and the bar's index (0, 1, …), which says nothing
    _open_drawn(page, f"{site_url}/compare/deepseek-r1--custom/", 1280)
    shown = page.eval_on_selector(
        '[data-chart="cost"]',
        """el => {
          const u = el._uplot;
          u.setCursor({ left: u.valToPos(1, 'x'), top: u.valToPos(u.data[1][1], 'y') });
          const rows = [...el.querySelectorAll('.u-legend tr')];
          const text = (r) => [...r.children].map((c) => c.innerText.trim()).join(' ');
          return { rows: rows.map(text),
                   name: u.axes[0]._values[1], price: u.data[1][1] };
        }""",
    )
    assert shown["name"]  # the second bar's GPU, as its axis names it
    assert shown["rows"][0] == f"GPU {shown['name']}", shown
    assert shown["rows"][1].startswith("$ / 1M tokens "), shown
