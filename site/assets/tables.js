// Compare pages: sort a table by clicking a header, filter its rows, and draw the charts with
// uPlot (vendored from npm). Without JavaScript the tables are still complete and readable.
function cellKey(row, index) {
  const raw = row.cells[index]?.dataset.sort ?? "";
  const number = Number(raw);
  return raw !== "" && Number.isFinite(number) ? number : raw.toLowerCase();
}

function sortable(table) {
  const body = table.tBodies[0];
  [...table.tHead.rows[0].cells].forEach((header, index) => {
    header.tabIndex = 0;
    header.setAttribute("role", "button");
    header.setAttribute("aria-sort", "none");
    const sort = () => {
      const ascending = header.getAttribute("aria-sort") !== "ascending";
      for (const other of table.tHead.rows[0].cells) other.setAttribute("aria-sort", "none");
      header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const rows = [...body.rows];
      rows.sort((a, b) => {
        const x = cellKey(a, index);
        const y = cellKey(b, index);
        if (x === "" || y === "") return x === y ? 0 : x === "" ? 1 : -1; // blanks last
        const order = x < y ? -1 : x > y ? 1 : 0;
        return ascending ? order : -order;
      });
      body.append(...rows);
    };
    header.addEventListener("click", sort);
    header.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); }
    });
  });
}

function filterable(table) {
  const tools = table.closest(".im-scroll")?.previousElementSibling;
  if (!tools || !tools.classList.contains("im-table-tools")) return;
  tools.hidden = false;
  const text = tools.querySelector("[data-filter]");
  const kind = tools.querySelector("[data-filter-kind]");
  const apply = () => {
    const needle = text.value.trim().toLowerCase();
    for (const row of table.tBodies[0].rows) {
      const show = (!needle || row.textContent.toLowerCase().includes(needle))
        && (!kind.value || (row.dataset.kind || "").split(" ").includes(kind.value));
      row.hidden = !show;
    }
  };
  text.addEventListener("input", apply);
  kind.addEventListener("change", apply);
}

async function charts(container) {
  if (!container.dataset.chartData || container.dataset.drawn) return;
  container.dataset.drawn = "1";
  const data = JSON.parse(container.dataset.chartData);
  const { default: uPlot } = await import("./vendor/uplot.esm.js");
  const width = Math.min(container.clientWidth || 640, 760);
  const palette = ["#3f51b5", "#e91e63", "#009688", "#ff9800", "#795548", "#9c27b0", "#607d8b", "#4caf50"];
  const pareto = container.querySelector('[data-chart="pareto"]');
  const labels = Object.keys(data.pareto);
  if (pareto && labels.length) {
    const xs = [...new Set(labels.flatMap((label) => data.pareto[label].map((point) => point[0])))].sort((a, b) => a - b);
    const series = labels.map((label) => {
      const byX = new Map(data.pareto[label].map((point) => [point[0], point[1]]));
      return xs.map((x) => (byX.has(x) ? byX.get(x) : null));
    });
    new uPlot({
      width, height: 320, scales: { x: { time: false } },
      axes: [{ label: "tokens/s per user" }, { label: "output tokens/s per GPU" }],
      series: [{}, ...labels.map((label, i) => ({ label, stroke: palette[i % palette.length], spanGaps: true, points: { show: true, size: 7 } }))],
    }, [xs, ...series], pareto);
  }
  const cost = container.querySelector('[data-chart="cost"]');
  const names = Object.keys(data.cost);
  if (cost && names.length) {
    new uPlot({
      width, height: 300, scales: { x: { time: false, range: [-0.5, names.length - 0.5] } },
      axes: [{ label: "GPU", values: (_u, ticks) => ticks.map((t) => names[t] ?? ""), splits: () => names.map((_n, i) => i) }, { label: "$ per 1M tokens" }],
      series: [{}, { label: "$ / 1M tokens", fill: "#3f51b588", stroke: "#3f51b5", paths: uPlot.paths.bars({ size: [0.6] }), points: { show: false } }],
    }, [names.map((_n, i) => i), names.map((n) => data.cost[n])], cost);
  }
}

function init() {
  for (const table of document.querySelectorAll("table[data-sortable]")) {
    if (table.dataset.ready) continue;
    table.dataset.ready = "1";
    sortable(table);
    filterable(table);
  }
  for (const container of document.querySelectorAll(".im-charts")) charts(container).catch(() => {});
}

if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(init);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
