"""What a contributor states about the run behind the synthetic importer files at the top of
tests/data/importers (README.md there): the facts those files do not say themselves; and where
the importers' test files are."""

from __future__ import annotations

from pathlib import Path

from infermeter.bench.importers import ImportFacts

IMPORTER_FILES = Path(__file__).resolve().parents[1] / "data" / "importers"
"""The importers' test files: the synthetic ones at the top, excerpts of real runs in `real/`."""
SYNTHETIC_VLLM_FILE = IMPORTER_FILES / "vllm-serve-concurrency16.json"
"""The synthetic `vllm bench serve` result (16 concurrent requests) the tests import most."""

SYNTHETIC_FACTS = ImportFacts(
    gpu="h100-sxm",
    gpu_count=1,
    model_id="llama-3.1-8b-instruct",
    engine_version="0.9.1",
    submitter="example-contributor",
    input_len="1024",
    output_len="128",
)
