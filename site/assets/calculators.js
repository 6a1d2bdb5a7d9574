// Calculator pages: inputs from and to the URL query, results from our Python in a module Web
// Worker (Pyodide, served by this site). A calculator page's <head> creates the worker
// (`window.__imWorker`, see registry_pages.on_post_page) so that Pyodide downloads and compiles
// while the page loads; otherwise (instant navigation from another page) it starts here. It
// outlives page changes made by Material's instant navigation, which keeps this module's context.
const workerUrl = new URL("./calc-worker.js", import.meta.url);

let worker = null;
let nextId = 0;
const pending = new Map();
// Cold start: the phases the worker has finished, and the pages waiting to hear of them.
const PHASES = {
  started: "downloading Python (Pyodide)",
  runtime: "starting Python",
  pyodide: "loading the calculators",
  imported: "computing",
};
const STEPS = Object.keys(PHASES);
let phase = "started";
let live = false;
const listeners = new Set();

function progressText() {
  if (live) return "Recomputing in your browser…";
  const step = STEPS.indexOf(phase) + 1;
  return `Python is starting in your browser: ${PHASES[phase]} (step ${step} of ${STEPS.length}).`;
}

function advance(name) {
  if (STEPS.indexOf(name) > STEPS.indexOf(phase)) phase = name;
  for (const listener of listeners) listener();
}

function startWorker() {
  worker = window.__imWorker || new Worker(workerUrl, { type: "module" });
  for (const name of window.__imProgress || []) advance(name);
  worker.onmessage = (event) => {
    if (event.data.progress) {
      advance(event.data.progress);
      return;
    }
    live = true;
    if (window.__imSearchGo) window.__imSearchGo(); // the theme's search index may load now
    const entry = pending.get(event.data.id);
    if (event.data.timings && window.__imTimings === undefined) {
      // Start-up phases in ms since this page's navigation began (read by the benchmarks).
      window.__imTimings = Object.fromEntries(
        Object.entries(event.data.timings).map(([name, at]) => [name, Math.round(at - performance.timeOrigin)]),
      );
      window.__imStartedFrom = event.data.from; // "snapshot" or "start" (a plain start)
    }
    if (!entry) return;
    pending.delete(event.data.id);
    entry.resolve(event.data);
  };
  worker.onerror = (event) => {
    if (window.__imSearchGo) window.__imSearchGo();
    const message = `the calculator could not start (${event.message || "worker error"})`;
    for (const entry of pending.values()) entry.resolve({ error: message });
    pending.clear();
  };
}

function compute(kind, query, base) {
  if (worker === null) startWorker();
  if (worker.failed) return Promise.resolve({ error: `the calculator could not start (${worker.failed})` });
  const id = ++nextId;
  return new Promise((resolve) => {
    pending.set(id, { resolve });
    worker.postMessage({ id, kind, query, base });
  });
}

function valueOf(element) {
  if (element.type === "checkbox") return element.checked ? "1" : "";
  return element.value;
}

function setValue(element, value) {
  if (element.type === "checkbox") element.checked = ["1", "true", "on", "yes"].includes(value.toLowerCase());
  else {
    // A choice the list does not hold (an address's ?model=nope) is shown and asked as it is,
    // so the reader gets the calculator's own refusal of it, not a blank "required".
    if (element.tagName === "SELECT" && value && ![...element.options].some((option) => option.value === value)) {
      const asked = new Option(value, value);
      asked.dataset.asked = "1";
      element.add(asked);
    }
    element.value = value;
  }
}

// Once the reader picks another choice, a choice only the address asked for leaves the list.
function dropAsked(form) {
  for (const option of form.querySelectorAll("option[data-asked]")) if (!option.selected) option.remove();
}

// Inputs of one data-group are alternatives (perf's load): an address that names one leaves the
// others blank, not at their default (calculators.fields.query_text reads a query so). So the
// address names a group's filled inputs, and its blank ones only where none is filled.
function groupsOf(fields, test) {
  return new Set(fields.filter((element) => element.dataset.group && test(element)).map((element) => element.dataset.group));
}

// An address longer than the page's data-link-chars is refused by common web servers (414):
// the longest inputs are left out of it, named in its data-left-out key, and the note beside
// the form says so (a page opened from the link asks for them again).
function fitLink(root, params) {
  const limit = Number(root.dataset.linkChars);
  const key = root.dataset.leftOut;
  const address = () => new URL(`${location.pathname}?${params}${location.hash}`, location.href).href;
  const left = [];
  while (address().length > limit && [...params.keys()].some((name) => name !== key)) {
    const [name] = [...params.entries()].filter(([name]) => name !== key).sort((a, b) => b[1].length - a[1].length)[0];
    left.push(name);
    params.delete(name);
    params.set(key, left.join(","));
  }
  // Only a calculator's form has the note (and the limit); the answer form's inputs are short.
  const note = root.querySelector("[data-link-note]");
  if (!note) return;
  note.textContent = left.length
    ? `The address leaves out ${left.join(", ")}: with it, the link would be longer than a web server accepts (${limit.toLocaleString("en")} characters). Whoever opens the link is asked to paste it again.`
    : "";
}

function writeUrl(root, fields) {
  const params = new URLSearchParams();
  const named = groupsOf(fields, (element) => valueOf(element) !== (element.dataset.default || ""));
  const filled = groupsOf(fields, (element) => valueOf(element) !== "");
  for (const element of fields) {
    const value = valueOf(element);
    const changed = value !== (element.dataset.default || "");
    const write = named.has(element.dataset.group)
      ? value !== "" || (changed && !filled.has(element.dataset.group))
      : changed;
    if (write) params.set(element.name, value);
  }
  fitLink(root, params);
  const search = params.toString();
  const url = `${location.pathname}${search ? `?${search}` : ""}${location.hash}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(history.state, "", url);
}

function bind(root) {
  if (root.dataset.bound) return;
  root.dataset.bound = "1";
  const kind = root.dataset.calc;
  const base = root.dataset.base;
  const form = root.querySelector("form");
  const fields = [...form.elements].filter((element) => element.name);
  const output = root.querySelector("[data-outputs]");
  const status = root.querySelector("[data-status]");
  const params = new URLSearchParams(location.search);
  const named = groupsOf(fields, (element) => params.has(element.name));
  for (const element of fields) {
    if (params.has(element.name)) setValue(element, params.get(element.name));
    else if (named.has(element.dataset.group)) setValue(element, "");
  }
  let latest = 0;
  // Cost page: the chosen GPU's catalog prices as placeholders of the price fields left empty.
  const gpuPrices = root.dataset.gpuPrices ? JSON.parse(root.dataset.gpuPrices) : null;
  const field = (name) => fields.find((element) => element.name === name);
  const showCatalogPrices = () => {
    if (!gpuPrices) return;
    const prices = gpuPrices[(field("gpu")?.value || "").trim()] || {};
    const tier = field("tier")?.value || "on_demand";
    const tiers = [["price_per_hour", tier], ["interruptible_price_per_hour", "interruptible"], ["reserved_price_per_hour", "reserved"]];
    for (const [name, priceTier] of tiers) {
      const input = field(name);
      if (input) input.placeholder = prices[priceTier] === undefined ? "" : `${prices[priceTier]} (catalog)`;
    }
  };

  const showErrors = (errors) => {
    for (const slot of root.querySelectorAll("[data-error-for]")) {
      const message = errors[slot.dataset.errorFor] || "";
      slot.textContent = message;
      const field = fields.find((element) => element.name === slot.dataset.errorFor);
      if (field) field.setAttribute("aria-invalid", message ? "true" : "false");
    }
  };

  // Until the first live result, the numbers shown are the build's defaults: say so, say how far
  // Python has got, and dim them once an input differs from what they were computed for.
  root.dataset.live = "0";
  const showProgress = () => {
    if (root.dataset.live === "1" || !root.isConnected) {
      listeners.delete(showProgress);
      return;
    }
    status.textContent = `Pre-rendered default, computed when the site was built. ${progressText()}`;
  };
  listeners.add(showProgress);

  const run = async (writeQuery) => {
    showCatalogPrices();
    const mine = ++latest;
    if (writeQuery) writeUrl(root, fields);
    const query = Object.fromEntries(fields.map((element) => [element.name, valueOf(element)]));
    // The inputs the address left out (too long for a link): asked for again where blank.
    const leftOut = new URLSearchParams(location.search).get(root.dataset.leftOut);
    if (leftOut !== null) query[root.dataset.leftOut] = leftOut;
    root.dataset.state = "computing";
    if (root.dataset.live !== "1") showProgress();
    // Stale numbers dim: at once while Python starts, else only if the answer is slow to come.
    const dim = setTimeout(() => output.classList.add("im-stale"), live ? 150 : 0);
    const started = performance.now();
    const reply = await compute(kind, query, base);
    clearTimeout(dim);
    if (mine !== latest || !root.isConnected) return;
    root.dataset.ms = String(Math.round((performance.now() - started) * 10) / 10);
    if (reply.error) {
      root.dataset.state = "failed";
      output.hidden = false;
      output.classList.add("im-stale");
      status.textContent = `The live calculator is unavailable: ${reply.error}. The results shown were computed when the site was built.`;
      return;
    }
    const result = reply.result;
    if (result.errors) {
      showErrors(result.errors);
      // Refused, as the command line refuses it: no figures. Those on the page were computed for
      // other inputs (the build's defaults or the last valid ones), so they are hidden, not dimmed.
      output.hidden = true;
      status.textContent = "No result for these inputs: the marked input is refused, so nothing is computed for them. Fix it to recompute.";
      root.dataset.state = "invalid";
      return;
    }
    showErrors({});
    output.innerHTML = result.html;
    output.hidden = false;
    output.classList.remove("im-stale");
    root.dataset.live = "1";
    status.textContent = `Live: computed in your browser in ${root.dataset.ms} ms.`;
    root.dataset.state = "ready";
    if (window.__imFirstResult === undefined) window.__imFirstResult = performance.now();
  };

  form.addEventListener("input", () => run(true));
  form.addEventListener("change", () => {
    dropAsked(form);
    run(true);
  });
  run(false);
}

function init() {
  for (const root of document.querySelectorAll(".im-calc[data-calc]")) bind(root);
}

if (window.document$ && typeof window.document$.subscribe === "function") window.document$.subscribe(init);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
