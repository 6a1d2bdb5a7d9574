// Runs the theme's own search worker (the built site's assets/javascripts/workers/search.*.js)
// in Node, through the messages the page sends it: one to index the site's search_index.json,
// then one per query. Prints one JSON line per query: its results and the worker's warnings
// (Material answers a query the index throws on with "Invalid query" and no results).
// Usage: node search_worker.cjs WORKER INDEX QUERIES_JSON
"use strict";
const fs = require("fs");

const [workerPath, indexPath, queriesPath] = process.argv.slice(2);
let handler = null;
let reply = null;
let warnings = [];
globalThis.self = globalThis;
globalThis.addEventListener = (type, listener) => { handler = listener; };
globalThis.postMessage = (message) => { reply = message; };
globalThis.importScripts = () => { throw new Error("the index asks for another language"); };
console.warn = (...parts) => { warnings.push(parts.map(String).join(" ")); };
(0, eval)(fs.readFileSync(workerPath, "utf8"));

async function ask(type, data) {
  reply = null;
  warnings = [];
  await handler({ data: { type, data } });
  return reply;
}

(async () => {
  const index = JSON.parse(fs.readFileSync(indexPath, "utf8"));
  const ready = await ask(0, { config: index.config, docs: index.docs, options: { suggest: false } });
  if (!ready || ready.type !== 1) throw new Error("the worker did not index the site");
  for (const query of JSON.parse(fs.readFileSync(queriesPath, "utf8"))) {
    const answer = await ask(2, query);
    const results = answer.data.items.length;
    process.stdout.write(JSON.stringify({ query, results, warnings }) + "\n");
  }
})().catch((error) => { process.stderr.write(String(error.stack || error) + "\n"); process.exit(1); });
