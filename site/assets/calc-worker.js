// Module Web Worker: runs our `calculators` Python on Pyodide, served by this site (no CDN, no
// micropip). Messages in:  {id, kind, query, base, archive, catalog}  (archive and catalog are
// absolute URLs, read once). Messages out: {id, result} or {id, error} when Python cannot start.
import { loadPyodide } from "./pyodide/pyodide.mjs";

let runtime = null;

async function start(archiveUrl, catalogUrl) {
  const [pyodide, archive, catalog] = await Promise.all([
    loadPyodide({ indexURL: new URL("./pyodide/", import.meta.url).href }),
    fetch(archiveUrl).then((response) => {
      if (!response.ok) throw new Error(`${archiveUrl}: HTTP ${response.status}`);
      return response.arrayBuffer();
    }),
    fetch(catalogUrl).then((response) => {
      if (!response.ok) throw new Error(`${catalogUrl}: HTTP ${response.status}`);
      return response.text();
    }),
  ]);
  pyodide.unpackArchive(archive, "zip", { extractDir: "/home/pyodide/infermeter" });
  pyodide.globals.set("CATALOG_TEXT", catalog);
  pyodide.runPython(`
import json, sys
sys.path.insert(0, "/home/pyodide/infermeter")
import calc_api
CATALOG = json.loads(CATALOG_TEXT)
del CATALOG_TEXT
def run(kind, query_json, base):
    return calc_api.render_json(kind, query_json, CATALOG, base)
`);
  return pyodide.globals.get("run");
}

self.onmessage = async (event) => {
  const { id, kind, query, base, archive, catalog } = event.data;
  try {
    if (runtime === null) runtime = start(archive, catalog);
    const run = await runtime;
    const started = performance.now();
    const result = JSON.parse(run(kind, JSON.stringify(query), base));
    self.postMessage({ id, result, ms: performance.now() - started });
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
};
