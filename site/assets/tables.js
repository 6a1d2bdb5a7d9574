// Compare pages: sort a table by clicking a header, filter its rows, and draw the charts with
// uPlot (vendored from npm). Without JavaScript the tables are still complete and readable.
function cellKey(row, index) {
  // a cell whose sort key is its text says it once (compare_table._cell)
  const cell = row.cells[index];
  const raw = cell?.dataset.sort ?? cell?.textContent ?? "";
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
  const { drawCharts } = await import("./charts.js");
  drawCharts(container, data, uPlot);
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
