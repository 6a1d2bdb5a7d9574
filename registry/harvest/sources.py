"""The harvest sources, each declared once: its name (the `infermeter registry harvest NAME`
command), what it reads and the options it takes, the function that harvests it, the `source`
its GPU names carry in the GPU catalog, and the terms it is published under.

The CLI makes one command of each declaration (`bench/cli/harvest.py`), the Downloads page
states each one's terms (`registry/licences.py`), and the GPU catalog accepts a `source_names`
entry only under a declared source (`registry/catalog.load_gpus`). Adding a source is its module
(which holds its `harvest_<source>(source, options, …)` function, named here as
`module:function`), its entry here, and the GPU names it prints in `registry/catalogs/gpus.yaml`.

This module holds data only: a source's module is imported when it is harvested.
"""

import html
import re
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infermeter.registry.harvest.errors import HarvestError, HarvestOptionError
from infermeter.registry.models.common import URL_PATTERN

if TYPE_CHECKING:
    from infermeter.registry.harvest.options import HarvestOptions
    from infermeter.registry.harvest.outcome import HarvestReport


@dataclass(frozen=True)
class FileCitation:
    """Where a harvested source was published: its public URL, the commit read (or, for a file,
    the commit it was taken from), and where its bytes were read when that is not the
    repository cited. A harvest function takes it whole, as `cited`."""

    url: str | None = None
    commit: str | None = None
    read_from: str | None = None

    def file_commit(self, source: Path, why: str = "") -> str:
        """The commit the file `source` was taken from, as `--commit` names it (a file has no
        history to resolve a branch or tag in); HarvestError when it names none,
        HarvestOptionError when not a commit id (7 to 40 lowercase hex digits)."""
        if self.commit is None:
            raise HarvestError(
                f"--from: {source} is a file; name {why}the commit it was taken from with --commit"
            )
        if not re.fullmatch(COMMIT_ID, self.commit):
            raise HarvestOptionError(
                f"--commit: {self.commit!r} is not a commit id (7 to 40 lowercase hex digits)"
            )
        return self.commit


COMMIT_ID = r"[0-9a-f]{7,40}"
"""A git commit id as a citation names it: the full hash or an abbreviation of it."""

NOT_CITED = FileCitation()
"""The citation of a source whose command was given none of the citing options."""


@dataclass(frozen=True)
class SourceOption:
    """An option one source takes besides `--from` and the options every source takes; its
    value goes to the harvest function as the keyword `keyword`, or, when it `cites`, as the
    field `keyword` of the one `FileCitation` the function takes as `cited`."""

    flag: str
    keyword: str
    help: str
    required: bool = False
    ratio: bool = False
    """A finite number from 0 to 1 (else text)."""
    cites: bool = False


@dataclass(frozen=True)
class HarvestSource:
    """One public source of results or prices."""

    name: str
    """The command (`infermeter registry harvest NAME`)."""
    help: str
    """The command's help: what is harvested, and an example."""
    reads: str
    """What `--from` names."""
    harvest: str
    """`module:function` of the harvest, called as `function(path, options=…, **keywords)`
    (`arguments`: the citing options' values arrive as one `cited=FileCitation(…)`)."""
    gpu_names: str
    """The `source` of the GPU catalog's `source_names` for this source's GPU names; a
    `{cloud}` in it stands for a lowercase name."""
    data: str
    """Which data, in a reader's words (the Downloads page's licence table)."""
    terms: str
    """The terms, as the source states them."""
    terms_url: str
    """The public address where the source states them."""
    options: tuple[SourceOption, ...] = ()

    def names_gpus_as(self, source: str) -> bool:
        """Whether a GPU catalog `source_names` entry of `source` is this source's."""
        pattern = re.escape(self.gpu_names).replace(r"\{cloud\}", "[a-z0-9]+")
        return re.fullmatch(pattern, source) is not None

    def arguments(self, values: dict[str, Any]) -> dict[str, Any]:
        """The harvest function's keywords from the values of this source's options (by
        keyword): the citing ones gathered into one `FileCitation`, `cited`."""
        citing = {option.keyword for option in self.options if option.cites}
        keywords = {key: value for key, value in values.items() if key not in citing}
        for option in self.options:
            url = values.get(option.keyword) if option.cites and option.keyword == "url" else None
            if url is not None and not re.fullmatch(URL_PATTERN, url):
                raise HarvestOptionError(
                    f"{option.flag}: expected an http:// or https:// address, got {url!r}"
                )
        if citing:
            keywords["cited"] = FileCitation(**{key: values.get(key) for key in citing})
        return keywords

    def run(self, path: Path, options: "HarvestOptions", values: dict[str, Any]) -> "HarvestReport":
        """Harvest `path` with this source's function, given the values of its options."""
        module, function = self.harvest.split(":")
        harvest = getattr(import_module(module), function)
        report: HarvestReport = harvest(path, options=options, **self.arguments(values))
        return report


_PAGE_OPTIONS = (
    SourceOption(
        "--commit",
        "commit",
        "Commit to read (default HEAD); for a file, the commit it was taken from.",
        cites=True,
    ),
    SourceOption(
        "--url", "url", "Public URL of the page read (default: the file on GitHub).", cites=True
    ),
)

MLPERF = HarvestSource(
    name="mlperf",
    help="MLPerf Inference datacenter LLM results, closed and open division (Offline, Server,\n"
    "Interactive).\n\n\b\nExample:\n"
    "  infermeter registry harvest mlperf --round 5.1 --from ./inference_results_v5.1",
    reads="Checkout (or bare mirror) of mlcommons/inference_results_v<round>.",
    harvest="infermeter.registry.harvest.mlperf:harvest_mlperf",
    gpu_names="mlperf",
    options=(
        SourceOption("--round", "round_text", "MLPerf Inference round, e.g. 5.1.", required=True),
        SourceOption(
            "--commit",
            "commit",
            "Commit to read (default HEAD); for a plain folder, the commit it was copied from.",
            cites=True,
        ),
        SourceOption(
            "--repository-url",
            "url",
            "Public URL of the repository read (default: mlcommons/inference_results_v<round>).",
            cites=True,
        ),
        SourceOption(
            "--read-from",
            "read_from",
            "Where the bytes were read when not from the repository cited (a fork that holds "
            "its commit); stated in every result's conditions.",
            cites=True,
        ),
    ),
    data="MLPerf Inference results (lane `mlperf`), from mlcommons/inference_results_v<round>",
    terms="MLCommons' submission rules: all submitted code is made under the MLCommons CLA and "
    "is Apache 2 compatible. Using the results is bound by the MLPerf Results Messaging "
    "Guidelines: submitter, benchmark and system named, result ID and round in a footnote, "
    "never compared with non-MLPerf results, and any figure MLCommons did not verify (every "
    "$ figure here) marked as not verified by MLCommons Association. MLPerf is a trademark "
    "of MLCommons Association.",
    terms_url="https://github.com/mlcommons/policies",
)

TRTLLM = HarvestSource(
    name="trtllm",
    help="TensorRT-LLM performance overview: every throughput table of one version or a folder "
    "of them.\n\n\b\nExample:\n"
    "  infermeter registry harvest trtllm --from ./TensorRT-LLM --commit 03e27c7d5ff0\n"
    "  infermeter registry harvest trtllm --from tests/data/harvest/trtllm",
    reads="Checkout of NVIDIA/TensorRT-LLM, the perf-overview.md file of one version, or a "
    "folder of such files, each headed '<!-- Excerpt of PATH in OWNER/REPO at commit SHA'.",
    harvest="infermeter.registry.harvest.trtllm_pages:harvest_trtllm",
    gpu_names="tensorrt-llm",
    options=(
        *_PAGE_OPTIONS,
        SourceOption(
            "--engine-version",
            "engine_version",
            "The TensorRT-LLM release the page documents, where the page names it elsewhere.",
        ),
    ),
    data="NVIDIA TensorRT-LLM performance overview tables (NVIDIA/TensorRT-LLM)",
    terms="Apache License 2.0, the repository's licence; cited to the file and commit read.",
    terms_url="https://github.com/NVIDIA/TensorRT-LLM",
)

AMD = HarvestSource(
    name="amd",
    help="AMD ROCm vLLM docker performance results: the throughput and latency tables of one\n"
    "image release's README.\n\n\b\nExample:\n"
    "  infermeter registry harvest amd --from ./vllm --commit f94ec9beeca1",
    reads="Checkout of ROCm/vllm, or the docs/dev-docker/README.md file of one version.",
    harvest="infermeter.registry.harvest.amd:harvest_amd",
    gpu_names="rocm-vllm",
    options=_PAGE_OPTIONS,
    data="AMD ROCm vLLM docker performance tables (ROCm/vllm docs/dev-docker/README.md)",
    terms="Apache License 2.0, the repository's licence; cited to the file and commit read.",
    terms_url="https://github.com/ROCm/vllm",
)

INFERENCEX = HarvestSource(
    name="inferencex",
    help="InferenceX results from a dump of its database or a saved response of its API\n"
    "(/api/v1/benchmarks); rows not from the official SemiAnalysisAI/InferenceX repository\n"
    "are labelled unofficial.\n\n\b\nExample:\n"
    "  infermeter registry harvest inferencex --from ./inferencex-dump-2026-11-30",
    reads="Folder of an InferenceX database dump (configs.json, workflow_runs.json, "
    "benchmark_results.json), or a file holding a response of its /api/v1/benchmarks.",
    harvest="infermeter.registry.harvest.inferencex:harvest_inferencex",
    gpu_names="inferencex",
    options=(
        SourceOption(
            "--range-ratio",
            "range_ratio",
            "--random-range-ratio of the runs (default 0.8, InferenceX's workflow templates).",
            ratio=True,
        ),
        SourceOption(
            "--commit",
            "commit",
            "For an API response file: the commit it was taken from.",
            cites=True,
        ),
        SourceOption(
            "--url", "url", "For an API response file: its public URL at that commit.", cites=True
        ),
        SourceOption(
            "--read-from",
            "read_from",
            "Where the file's bytes were read when not from the repository cited (a fork that "
            "holds its commit); stated in every result's conditions.",
            cites=True,
        ),
    ),
    data="InferenceX results (SemiAnalysisAI/InferenceX)",
    terms="Its README calls it open source under the Apache 2 licence; InferenceX is a "
    "trademark of SemiAnalysis. Rows not from the official repository are labelled unofficial. "
    "The API response read here is a file of SemiAnalysisAI/InferenceX-app, a repository under "
    "the GNU GPL v3; infermeter's data holds only its measured figures, each cited to its "
    "workflow run and to the file at its commit.",
    terms_url="https://github.com/SemiAnalysisAI/InferenceX",
)

SKYPILOT = HarvestSource(
    name="skypilot",
    help="Cloud GPU prices from SkyPilot's catalog files: on-demand and spot per GPU-hour, with\n"
    "provider, region, date and the file's commit, into "
    "registry/catalogs/prices-skypilot.yaml.\n\n\b\nExample:\n"
    "  infermeter registry harvest skypilot --from tests/data/harvest/skypilot",
    reads="A pinned excerpt of a SkyPilot catalog file (catalogs/v8/<cloud>/vms.csv), or a "
    "folder of them, each headed '# Excerpt of PATH in OWNER/REPO at commit SHA' with its date.",
    harvest="infermeter.registry.harvest.skypilot:harvest_skypilot",
    gpu_names="skypilot-{cloud}",
    data="Cloud prices from SkyPilot's catalog files (skypilot-org/skypilot-catalog)",
    terms="The repository states no licence in its README or the files read. Each price is a "
    "fact its provider publishes (SkyPilot's fetchers copy the providers' price lists and "
    "APIs, or a marketplace's asking prices: Lium, Vast); infermeter's data holds only the "
    "prices, each cited to the file at its commit, and its test suite keeps the header and "
    "the rows read of each file, verbatim, to re-read them.",
    terms_url="https://github.com/skypilot-org/skypilot-catalog",
)

GCP_PRICING = HarvestSource(
    name="gcp-pricing",
    help="Google Cloud's GPU machine prices (on-demand, Spot, 1- and 3-year committed use) per\n"
    "GPU-hour, dated by the file, into registry/catalogs/prices-gcp.yaml.\n\n\b\nExample:\n"
    "  infermeter registry harvest gcp-pricing --from tests/data/harvest/gcp-pricing",
    reads="A pinned excerpt of pricing.yml of Cyclenerd/google-cloud-pricing-cost-calculator, or "
    "a folder of them (*.yml), each headed '# Excerpt of pricing.yml in OWNER/REPO at commit SHA' "
    "with the date the file states.",
    harvest="infermeter.registry.harvest.gcp_pricing:harvest_gcp_pricing",
    gpu_names="gcp-pricing",
    data="Google Cloud list prices from Cyclenerd/google-cloud-pricing-cost-calculator",
    terms="Apache License 2.0 (the repository's LICENSE). Its pricing.yml computes each machine "
    "type's price from the SKU prices of Google's Cloud Billing Catalog API; infermeter's data "
    "holds only the prices, each cited to the file at its commit, and its test suite keeps the "
    "lines read of the file, verbatim, to re-read them.",
    terms_url="https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator",
)

AZURE_RETAIL = HarvestSource(
    name="azure-retail",
    help="Azure's GPU VM list prices (pay as you go, Spot, 1-year savings plan) per GPU-hour,\n"
    "from dated snapshots of the Azure Retail Prices API, into "
    "registry/catalogs/prices-azure.yaml.\n\n\b\nExample:\n"
    "  infermeter registry harvest azure-retail --from tests/data/harvest/azure-retail",
    reads="A pinned excerpt of a region's snapshot (data/latest/vm-<region>.json of "
    "andy-diericks/azure-pricing-radar), or a folder of them (*.txt), each headed '# Excerpt of "
    "PATH in OWNER/REPO at commit SHA' with the snapshot's date.",
    harvest="infermeter.registry.harvest.azure_retail:harvest_azure_retail",
    gpu_names="azure-retail",
    data="Azure list prices from the Azure Retail Prices API, as snapshots of "
    "andy-diericks/azure-pricing-radar",
    terms="MIT License (the repository's LICENSE); its snapshots keep the items of Microsoft's "
    "public Azure Retail Prices API unchanged. infermeter's data holds only the prices, each "
    "cited to the file at its commit, and its test suite keeps the items read, verbatim, to "
    "re-read them.",
    terms_url="https://github.com/andy-diericks/azure-pricing-radar",
)

SOURCES: tuple[HarvestSource, ...] = (
    MLPERF,
    TRTLLM,
    AMD,
    INFERENCEX,
    SKYPILOT,
    GCP_PRICING,
    AZURE_RETAIL,
)
"""Every source, in the order the CLI and the Downloads page list them."""


def gpu_names_sources() -> str:
    """The GPU-name sources as a reader reads them (`mlperf`, …, `skypilot-{cloud}`)."""
    return ", ".join(f"`{source.gpu_names}`" for source in SOURCES)


def sources_markdown() -> str:
    """A Markdown list of the sources, each with what it gives and its examples (for the
    registry's reference page)."""
    lines = []
    for source in SOURCES:
        examples = [
            f"`{line.strip()}`"
            for line in source.help.splitlines()
            if line.strip().startswith("infermeter registry harvest")
        ]
        data = html.escape(source.data, quote=False)  # `<round>` is text, not a tag
        lines.append(f"- `{source.name}`: {data}. " + "; ".join(examples))
    return "\n".join(lines) + "\n"
