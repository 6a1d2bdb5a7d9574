// Module Web Worker: runs our `calculators` Python on Pyodide, served by this site (no CDN, no
// micropip). It starts Pyodide as soon as it is created, before any message: the page creates it
// from its <head>, so the downloads (wasm, stdlib) and the compile overlap the page's own load.
// Messages in: {id, kind, query, base}. Messages out: {id, result, ms} or {id, error}; the first
// reply also carries `timings`, wall-clock marks (ms since the epoch) of the start-up phases.
// While it starts, {progress: phase} after each phase (runtime, pyodide, imported), so the page
// can say how far the cold start is. The first reply's `from` says whether Python was restored
// from the site's memory snapshot ("snapshot") or started from scratch ("start").
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

// The memory snapshot the site build made (calc_snapshot.py): Python started, our archive
// imported. Gzipped, and inflated as it arrives; a server that sent it with Content-Encoding has
// inflated it already (then it does not start with gzip's magic bytes).
async function fetchSnapshot(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const reader = response.body.getReader();
  let head = new Uint8Array(0);
  let done = false;
  while (head.length < 2 && !done) {
    const chunk = await reader.read();
    done = chunk.done;
    if (chunk.value) head = head.length ? new Uint8Array([...head, ...chunk.value]) : chunk.value;
  }
  const body = new ReadableStream({
    start(controller) {
      if (head.length) controller.enqueue(head);
      if (done) controller.close();
    },
    async pull(controller) {
      const chunk = await reader.read();
      if (chunk.done) controller.close();
      else controller.enqueue(chunk.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const gzipped = head[0] === 0x1f && head[1] === 0x8b;
  const bytes = await new Response(gzipped ? body.pipeThrough(new DecompressionStream("gzip")) : body).arrayBuffer();
  timings.snapshot = performance.timeOrigin + performance.now();
  return new Uint8Array(bytes);
}

// Pyodide fetches its runtime files itself, but only once its own script has loaded. The worker
// starts each download at once and hands Pyodide's own request for that URL the response it
// has (once; any later request goes out as usual).
function handOver(urls) {
  const early = new Map(urls.map((url) => [url, fetch(url)]));
  const downloads = new Map(early);
  const realFetch = self.fetch;
  self.fetch = (input, init) => {
    const url = new URL(String(input), self.location.href).href;
    const response = early.get(url);
    if (response === undefined) return realFetch(input, init);
    early.delete(url);
    return response;
  };
  return downloads;
}

// Pyodide compiles its wasm only once it holds the snapshot (it sizes the memory from it). This
// compiles it meanwhile, from the download handed to Pyodide, and gives the compiled module to
// Pyodide's instantiateStreaming call; should the early compile fail, that call goes ahead on
// the download as Pyodide made it.
function compileEarly(download) {
  const compiled = WebAssembly.compileStreaming(download.then((response) => response.clone()));
  compiled.catch(() => {});
  const instantiateStreaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = async (source, imports) => {
    let module;
    try {
      module = await compiled;
    } catch {
      return instantiateStreaming(source, imports);
    }
    Promise.resolve(source).then((response) => response.body && response.body.cancel()).catch(() => {});
    return { module, instance: await WebAssembly.instantiate(module, imports) };
  };
}

const ARCHIVE = "/home/pyodide/calculators.zip";
let startedFrom = null;

async function start() {
  // Every download starts at once, before Pyodide's scripts have loaded (both imported at once
  // too: Pyodide's own import of the second finds it loaded).
  const here = (name) => new URL(name, import.meta.url).href;
  const snapshot = fetchSnapshot(here("./calculators-snapshot.bin"));
  snapshot.catch(() => {}); // a failed one means a plain start, below
  const runtimeFiles = ["pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];
  const downloads = handOver(runtimeFiles.map((name) => here(`./pyodide/${name}`)));
  compileEarly(downloads.get(here("./pyodide/pyodide.asm.wasm")));
  const archive = fetchChecked(here("./calculators.zip"), "buffer");
  const catalog = fetchChecked(here("./catalog.json"), "text");
  const [{ loadPyodide }] = await Promise.all([
    import("./pyodide/pyodide.mjs"),
    import("./pyodide/pyodide.asm.mjs").catch(() => {}), // Pyodide reports a failure itself
  ]);
  const options = {
    indexURL: here("./pyodide/"),
    // Before Python starts or is restored, the archive where sys.path names it: zipimport reads
    // from it what is imported later. Imported straight from the zip: unpacking it would import
    // shutil, tempfile and zipfile first. (A failed download is reported after the start.)
    fsInit: async (FS) => {
      mark("runtime");
      FS.writeFile(ARCHIVE, new Uint8Array(await archive.catch(() => new ArrayBuffer(0))));
    },
  };
  // Only the stdlib and our archive: the site's lock file lists no package.
  let pyodide;
  try {
    pyodide = await loadPyodide({ ...options, _loadSnapshot: snapshot });
    startedFrom = "snapshot";
  } catch (error) {
    // No snapshot, or one this runtime cannot restore: Python starts from scratch (slower).
    console.warn(`calculators: Python starts without its snapshot (${error && error.message})`);
    pyodide = await loadPyodide(options);
    startedFrom = "start";
  }
  mark("pyodide");
  await archive;
  pyodide.globals.set("CATALOG_TEXT", await catalog);
  // After a snapshot's restore, calc_api is imported already.
  pyodide.runPython(`
import json, sys
if "${ARCHIVE}" not in sys.path:
    sys.path.insert(0, "${ARCHIVE}")
import calc_api
CATALOG = json.loads(CATALOG_TEXT)
del CATALOG_TEXT
def run(kind, query_json, base):
    return calc_api.render_json(kind, query_json, CATALOG, base)
def run_answer(evidence_text, query_json, base):
    import answer_render
    if evidence_text:  # "" once it is loaded
        answer_render.load(evidence_text, CATALOG)
    return answer_render.render_json(query_json, base)
`);
  mark("imported");
  return { run: pyodide.globals.get("run"), runAnswer: pyodide.globals.get("run_answer") };
}

// The answer page's evidence (data/evidence.json), fetched on its first question only: the
// calculator pages never need it.
let evidence = null;

async function compute(runtime, kind, query, base) {
  if (kind !== "answer") return runtime.run(kind, JSON.stringify(query), base);
  const first = evidence === null;
  if (first) evidence = fetchChecked(new URL("../data/evidence.json", import.meta.url).href, "text");
  const text = await evidence.catch((error) => {
    evidence = null;
    throw error;
  });
  return runtime.runAnswer(first ? text : "", JSON.stringify(query), base);
}

const runtime = start();
runtime.catch(() => {}); // reported to each message below

self.onmessage = async (event) => {
  const { id, kind, query, base } = event.data;
  try {
    const ready = await runtime;
    const started = performance.now();
    const result = JSON.parse(await compute(ready, kind, query, base));
    const reply = { id, result, ms: performance.now() - started };
    if (timings.first === undefined) {
      mark("first");
      reply.timings = timings;
      reply.from = startedFrom;
    }
    self.postMessage(reply);
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
};
