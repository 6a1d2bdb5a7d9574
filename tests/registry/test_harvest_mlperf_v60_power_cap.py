"""MLPerf Inference v6.0's power-capped MI355X run (6.0-0033, Dell_MangoBoost), filed under the
part at its cap, on a pinned excerpt.

tests/data/harvest/mlperf-v6.0-power-cap holds the four datacenter LLM rows of 6.0-0033
(llama2-70b-99/99.9, Offline and Server) of `summary_results.json` of
mlcommons/inference_results_v6.0 at commit ab33b214, in the file's own layout
(`json.dumps(rows, indent=2)`, no final newline, as the whole file is), and every file the
harvest reads for them, verbatim: the run logs, the `src/<benchmark>/README.md` files (the
LLMBoost container that serves the benchmark) and the system description. Bytes read from the
fork gbeezybez/inference_results_v6.0, which holds that upstream commit. The results table names
the accelerator `AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)`: the MI355X (1,400 W
TBP) run under a 1,000 W cap, which the catalog keeps apart as `mi355x-1000w`.
"""

from pathlib import Path

from registry_checkout import empty_registry
from registry_helpers import V60_COMMIT, V60_READ_FROM, MlperfExcerpt, MlperfHarvest

from infermeter.registry.catalog import GPUS_FILE, load_gpus
from infermeter.registry.location import catalogs_folder

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
EXCERPT = MlperfExcerpt(
    REPOSITORY_ROOT / "tests/data/harvest/mlperf-v6.0-power-cap",
    "6.0",
    V60_COMMIT,
    V60_READ_FROM,
    "e9931edfaa5c5f9e0906bf5d0384ff1f2458518e0b1062501477d1862f0aa525",
)


harvested = EXCERPT.shared_harvest("v60cap")


def test_the_excerpt_is_pinned_and_in_the_registry_byte_for_byte(harvested: MlperfHarvest) -> None:
    registry, report, _ = harvested
    # Two results: each -99 row is the same run as its -99.9 row, filed once.
    EXCERPT.assert_pinned_and_committed(registry, report, 2)


def test_the_capped_run_is_filed_under_the_part_at_its_cap(harvested: MlperfHarvest) -> None:
    registry, _, _ = harvested
    filed = {path.parent.parent.name for path in (registry / "registry/results").rglob("*.json")}
    assert filed == {"mi355x-1000w"}
    gpus = load_gpus()
    assert gpus["mi355x-1000w"].tdp_w == 1000
    assert gpus["mi355x"].tdp_w == 1400


def test_without_its_catalog_entry_the_capped_run_is_skipped_not_filed_as_the_part(
    tmp_path: Path,
) -> None:
    root = empty_registry(tmp_path / "checkout")
    catalog = catalogs_folder(root) / GPUS_FILE
    text = catalog.read_text()
    cut = text.index("  - id: mi355x-1000w\n")
    catalog.write_text(text[:cut])
    report, results = EXCERPT.harvest(root)
    assert results == {}
    reasons = set(dict(report.skipped).values())
    assert reasons >= {
        "accelerator 'AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)' has no GPU catalog id"
    }
