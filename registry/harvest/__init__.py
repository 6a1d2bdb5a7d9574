"""Harvest: public benchmark results turned into registry result files, one importer per source.

Each source module reads a checkout or file of its source (`tree` reads a folder or a git
repository at a commit) and returns `Harvested` rows: a result, or a row skipped with its
reason. `apply` writes them into a registry and reports what it added, left unchanged, changed
and skipped; running it twice changes nothing. Numbers are copied as the source states them;
what a source does not state stays absent.

Modules: `sources` (each source declared once: its command, options, function, GPU names and
terms), `options` (what every harvest takes), `tree` (reading a source), `outcome` (writing and
the report), `errors`, and one module per source, which holds its `harvest_<source>`: `mlperf`,
`trtllm_pages` (TensorRT-LLM, each layout read by `trtllm`, `trtllm_legacy`, `trtllm_static` or
`trtllm_grid`), `amd`, `inferencex` (a dump, or an `inferencex_api` response), and the prices'
`skypilot`, `gcp_pricing`, `azure_retail`.
"""
