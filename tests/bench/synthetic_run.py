"""What a contributor states about the run behind the synthetic importer files at the top of
tests/data/importers (README.md there): the facts those files do not say themselves."""

from __future__ import annotations

from infermeter.bench.importers import ImportFacts

SYNTHETIC_FACTS = ImportFacts(
    gpu="h100-sxm",
    gpu_count=1,
    model_id="llama-3.1-8b-instruct",
    engine_version="0.9.1",
    submitter="example-contributor",
    input_len="1024",
    output_len="128",
)
