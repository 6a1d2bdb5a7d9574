// Module Web Worker: runs our `calculators` Python on Pyodide, served by this site (no CDN, no
// micropip). It starts Pyodide as soon as it is created, before any message: the page creates it
// from its <head>, so the downloads (wasm, stdlib) and the compile overlap the page's own load.
// Messages in: {id, kind, query, base}. Messages out: {id, result, ms} or {id, error}; the first
// reply also carries `timings`, wall-clock marks (ms since the epoch) of the start-up phases.
// While it starts, {progress: phase} after each phase (runtime, pyodide, imported), so the page
// can say how far the cold start is.
import { loadPyodide } from "./pyodide/pyodide.mjs";

const timings = { worker: performance.timeOrigin, started: performance.timeOrigin + performance.now() };
const mark = (name) => {
  timings[name] = performance.timeOrigin + performance.now();
  if (name !== "first") self.postMessage({ progress: name });
};

function fetchChecked(url, as) {
  return fetch(url).then((response) => {
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    return as === "text" ? response.text() : response.arrayBuffer();
  });
}

async function start() {
  const here = (name) => new URL(name, import.meta.url).href;
  const archive = fetchChecked(here("./calculators.zip"), "buffer");
  const catalog = fetchChecked(here("./catalog.json"), "text");
  // Only the stdlib and our archive: the site's lock file lists no package.
  const pyodide = await loadPyodide({ indexURL: here("./pyodide/"), fsInit: async () => mark("runtime") });
  mark("pyodide");
  // Imported straight from the zip (zipimport is already loaded for the stdlib): unpacking it
  // would import shutil, tempfile and zipfile first.
  pyodide.FS.writeFile("/home/pyodide/calculators.zip", new Uint8Array(await archive));
  pyodide.globals.set("CATALOG_TEXT", await catalog);
  pyodide.runPython(`
import json, sys
sys.path.insert(0, "/home/pyodide/calculators.zip")
import calc_api
CATALOG = json.loads(CATALOG_TEXT)
del CATALOG_TEXT
def run(kind, query_json, base):
    return calc_api.render_json(kind, query_json, CATALOG, base)
`);
  mark("imported");
  return pyodide.globals.get("run");
}

const runtime = start();
runtime.catch(() => {}); // reported to each message below

self.onmessage = async (event) => {
  const { id, kind, query, base } = event.data;
  try {
    const run = await runtime;
    const started = performance.now();
    const result = JSON.parse(run(kind, JSON.stringify(query), base));
    const reply = { id, result, ms: performance.now() - started };
    if (timings.first === undefined) {
      mark("first");
      reply.timings = timings;
    }
    self.postMessage(reply);
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
};
