"""Harvest: public benchmark results turned into registry result files, one importer per source.

Each source module reads a checkout or file of its source (`tree` reads a folder or a git
repository at a commit) and returns `Harvested` rows: a result, or a row skipped with its
reason. `apply` writes them into a registry and reports what it added, left unchanged, changed
and skipped; running it twice changes nothing. Numbers are copied as the source states them;
what a source does not state stays absent.

Modules: `sources` (each source declared once: its command, options, function, GPU names and
terms), `tree` (reading a source), `outcome` (writing and the report), `errors`, `run`, and the
sources `mlperf`, `trtllm`, `amd`, `inferencex`, `skypilot`, `gcp_pricing` (prices).
"""
