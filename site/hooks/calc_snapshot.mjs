// Writes the calculators' Pyodide memory snapshot (run by calc_snapshot.py at site build time):
// Python started, our archive on sys.path and `calc_api` imported, as the browser worker would
// have it after its cold start. The worker restores it instead of starting Python (seconds of
// interpreter start-up skipped) and falls back to a plain start when it cannot.
//
//   node calc_snapshot.mjs RUNTIME_DIR ARCHIVE OUT
//
// RUNTIME_DIR is node_modules/pyodide (the same build the site serves: a snapshot only loads
// into the build that made it), ARCHIVE the site's calculators.zip, OUT the gzip file to write (a temporary
// name: the caller renames it into place).
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const [runtimeDir, archivePath, outPath] = process.argv.slice(2);
if (!outPath) {
  console.error("usage: node calc_snapshot.mjs RUNTIME_DIR ARCHIVE OUT");
  process.exit(2);
}

async function main() {
  const { loadPyodide } = await import(pathToFileURL(`${runtimeDir}/pyodide.mjs`).href);
  const pyodide = await loadPyodide({ indexURL: `${runtimeDir}/`, _makeSnapshot: true });
  // The worker writes the archive to the same path before it restores the snapshot: zipimport
  // reads modules imported later from it.
  pyodide.FS.writeFile("/home/pyodide/calculators.zip", readFileSync(archivePath));
  pyodide.runPython(`
import json, sys
sys.path.insert(0, "/home/pyodide/calculators.zip")
import calc_api
`);
  const snapshot = pyodide.makeMemorySnapshot();
  // Mostly zeros: gzip makes 30 MB about 6 MB; the worker inflates it with DecompressionStream.
  writeFileSync(outPath, gzipSync(snapshot, { level: 6 }));
}

// One line on stderr for the build's error message (no stack trace).
main().catch((error) => {
  console.error(String((error && error.message) || error).split("\n")[0]);
  process.exit(1);
});
