"""The terms the registry's data is published under: infermeter's own data, and each imported
source's terms as that source states them. Declared once here; the Downloads page and
`data/licences.json` render it, and `registry/results/README.md` points to it.
"""

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Licence:
    """The terms of one part of the data."""

    data: str
    """Which data: a source, a lane or a catalog, in a reader's words."""
    terms: str
    """The terms, as the source states them."""
    where: str
    """The public address where the source states them."""


DATA_LICENCE = (
    "infermeter's own data: Apache-2.0. Imported results and prices keep the terms their sources "
    "state (MLCommons, NVIDIA, AMD, InferenceX, SkyPilot's catalog, …): see licences.json beside "
    "this file on the site, or registry/licences.py."
)
"""The one line the data files carry (the index's `licence` key)."""

LICENCES: tuple[Licence, ...] = (
    Licence(
        "infermeter's own data: results measured with infermeter, the GPU, model and price "
        "catalogs as compiled here, the index and every derived figure",
        "Apache License 2.0, the project's licence (pyproject.toml `license`). Cite infermeter "
        "and the result file or catalog entry.",
        "https://www.apache.org/licenses/LICENSE-2.0",
    ),
    Licence(
        "MLPerf Inference results (lane `mlperf`), from mlcommons/inference_results_v<round>",
        "MLCommons' submission rules: all submitted code is made under the MLCommons CLA and is "
        "Apache 2 compatible. Using the results is bound by the MLPerf Results Messaging "
        "Guidelines: submitter, benchmark and system named, result ID and round in a footnote, "
        "never compared with non-MLPerf results, and any figure MLCommons did not verify (every "
        "$ figure here) marked as not verified by MLCommons Association. MLPerf is a trademark "
        "of MLCommons Association.",
        "https://github.com/mlcommons/policies",
    ),
    Licence(
        "NVIDIA TensorRT-LLM performance overview tables (NVIDIA/TensorRT-LLM)",
        "Apache License 2.0, the repository's licence; cited to the file and commit read.",
        "https://github.com/NVIDIA/TensorRT-LLM",
    ),
    Licence(
        "AMD ROCm vLLM docker performance tables (ROCm/vllm docs/dev-docker/README.md)",
        "Apache License 2.0, the repository's licence; cited to the file and commit read.",
        "https://github.com/ROCm/vllm",
    ),
    Licence(
        "InferenceX results (SemiAnalysisAI/InferenceX)",
        "Its README calls it open source under the Apache 2 licence; InferenceX is a trademark "
        "of SemiAnalysis. Rows not from the official repository are labelled unofficial.",
        "https://github.com/SemiAnalysisAI/InferenceX",
    ),
    Licence(
        "Cloud prices from SkyPilot's catalog files (skypilot-org/skypilot-catalog)",
        "The repository states no licence in its README or the files read. Each price is a "
        "fact its provider publishes (SkyPilot's fetchers copy the providers' price lists and "
        "APIs, or a marketplace's asking prices: Lium, Vast); infermeter's data holds only the "
        "prices, each cited to the file at its commit, and its test suite keeps the header and "
        "the rows read of each file, verbatim, to re-read them.",
        "https://github.com/skypilot-org/skypilot-catalog",
    ),
    Licence(
        "Other cloud prices (provider pages, price trackers, articles)",
        "Facts quoted with the address and date of the page they were read on; the pages' own "
        "terms apply to the pages, and no page's text is copied.",
        "each price's source.url (data/prices.json)",
    ),
)


def licences_data() -> list[dict[str, Any]]:
    """The licences as plain data (for `data/licences.json`)."""
    return [asdict(licence) for licence in LICENCES]


def _where(text: str) -> str:
    return f"<{text}>" if text.startswith("https://") else text


def licences_markdown() -> str:
    """The licences as a Markdown table (for the Downloads page)."""
    rows = "\n".join(
        f"| {licence.data} | {licence.terms} | {_where(licence.where)} |" for licence in LICENCES
    )
    return "| Data | Terms | Where stated |\n|---|---|---|\n" + rows + "\n"
