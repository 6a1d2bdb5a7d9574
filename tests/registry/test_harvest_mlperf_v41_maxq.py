"""MLPerf Inference v4.1's power-capped (MaxQ) runs, filed under the part at the power limit
that ran them, on a pinned excerpt.

tests/data/harvest/mlperf-v4.1-maxq holds the ten datacenter LLM rows of NVIDIA's v4.1-0049
(`H200-SXM-141GBx8_TRT_MaxQ`: llama2-70b-99/99.9, mixtral-8x7b, gptj-99/99.9, Offline and
Server) of `summary_results.json` of mlcommons/inference_results_v4.1 at commit 4a0c8741, in the
file's own layout, and every file the harvest reads for them at that commit (written by
`json.dumps(rows, indent=2)`, as the whole file is; the other files verbatim): the run logs, the
measurement files, the Server runs' `mlperf.conf` and NVIDIA's `configs/<benchmark>` files.
The results table names the stock `NVIDIA H200-SXM-141GB` and the system description states
`hw_notes: H200 TGP 700W`, yet each configuration class `H200_SXM_141GBx8_MaxQ` sets
`power_limit` (500 W for llama2-70b and mixtral-8x7b, 350 W for gptj), which NVIDIA's harness
applies with `nvidia-smi -pl` (`code/common/power_limit.py`).
"""

import shutil
from pathlib import Path

from registry_checkout import empty_registry
from registry_helpers import V41_COMMIT, MlperfExcerpt, MlperfHarvest

from infermeter.registry.catalog import gpu_named, load_gpus
from infermeter.registry.harvest.mlperf_power import power_limit_w

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
EXCERPT = MlperfExcerpt(
    REPOSITORY_ROOT / "tests/data/harvest/mlperf-v4.1-maxq",
    "4.1",
    V41_COMMIT,
    None,
    "00bacab2beb67976c9550123874d74aa770a3f84778b3ea4a355c7b5163bf5c7",
)
CONFIGS = EXCERPT.folder / "closed/NVIDIA/configs"


harvested = EXCERPT.shared_harvest("maxq")


def test_the_excerpt_is_pinned_and_in_the_registry_byte_for_byte(tmp_path: Path) -> None:
    assert EXCERPT.listing_sha256() == EXCERPT.sha256
    # The llama2-70b and mixtral rows were first read on 2026-12-01, gptj's on 2026-12-02: a
    # row keeps the date it was first harvested, so each file is one of the two days' harvest.
    written = {}
    for day in ("2026-12-01", "2026-12-02"):
        root = empty_registry(tmp_path / day)
        report, _ = EXCERPT.harvest(root, today=day)
        # Six results: each -99 row is the same run as its -99.9 row, filed once.
        assert len(report.added) == 6
        written.update({relative: (root / relative).read_bytes() for relative in report.added})
        again, _ = EXCERPT.harvest(root, today="2027-01-01")
        assert (again.added, again.changed) == ([], [])
    committed = [
        path.relative_to(REPOSITORY_ROOT).as_posix()
        for gpu in ("h200-sxm-500w", "h200-sxm-350w")
        for path in (REPOSITORY_ROOT / "registry/results" / gpu).rglob("*.json")
    ]
    assert len(committed) == 6
    for relative in committed:
        assert written[relative] == (REPOSITORY_ROOT / relative).read_bytes(), relative


def test_a_maxq_run_is_filed_under_the_part_at_its_power_limit(harvested: MlperfHarvest) -> None:
    registry, _, _ = harvested
    filed = {
        (path.parent.parent.name, path.parent.name)
        for path in (registry / "registry/results").rglob("*.json")
    }
    assert filed == {
        ("h200-sxm-500w", "llama-2-70b-chat"),
        ("h200-sxm-500w", "mixtral-8x7b-instruct-v0.1"),
        ("h200-sxm-350w", "gpt-j-6b"),
    }
    gpus = load_gpus()
    assert gpus["h200-sxm-500w"].tdp_w == 500
    assert gpus["h200-sxm-350w"].tdp_w == 350
    assert gpus["h200-sxm"].tdp_w == 700
    text = next((registry / "registry/results/h200-sxm-350w").rglob("*.json")).read_text()
    assert "each GPU limited to 350 W by the submission" in text
    assert "H200_SXM_141GBx8_MaxQ sets power_limit = 350" in text


def test_the_power_limit_is_read_from_the_class_of_the_system_or_its_base() -> None:
    row = {
        "Location": "closed/NVIDIA/results/H200-SXM-141GBx8_TRT_MaxQ/llama2-70b-99.9/Server",
        "Model": "llama2-70b-99.9",
        "Scenario": "Server",
    }
    server = (CONFIGS / "llama2-70b/Server/__init__.py").read_text()
    # The -99.9 class only inherits (`pass`): the limit is its base's.
    assert power_limit_w(row, server) == (
        500,
        "closed/NVIDIA/configs/llama2-70b/Server/__init__.py: H200_SXM_141GBx8_MaxQ sets "
        "power_limit = 500, which H200_SXM_141GBx8_HighAccuracy_MaxQ inherits",
    )
    assert power_limit_w(row, server.replace("power_limit = 500", "power_limit = 450")) == (
        450,
        "closed/NVIDIA/configs/llama2-70b/Server/__init__.py: H200_SXM_141GBx8_MaxQ sets "
        "power_limit = 450, which H200_SXM_141GBx8_HighAccuracy_MaxQ inherits",
    )
    assert power_limit_w(row, server.replace("power_limit = 500", "")) is None
    assert power_limit_w(row, None) is None


def test_a_maxq_run_whose_limit_is_unread_or_uncatalogued_is_skipped(tmp_path: Path) -> None:
    gpus = load_gpus()
    stock = gpu_named(gpus, "mlperf", "NVIDIA H200-SXM-141GB")
    assert stock is not None
    assert stock.id == "h200-sxm"
    assert gpu_named(gpus, "mlperf", "NVIDIA H200-SXM-141GB", 500) == gpus["h200-sxm-500w"]
    assert gpu_named(gpus, "mlperf", "NVIDIA H200-SXM-141GB", 450) is None
    for old, new, reason in [
        (
            "power_limit = 350",
            "power_limit = 450",
            "'NVIDIA H200-SXM-141GB' at a 450 W power limit has no GPU catalog id",
        ),
        ("power_limit = 350", "", "whose power limit no file read states"),
    ]:
        copy = tmp_path / new.replace(" ", "") / "excerpt"
        _copy_with(copy, "closed/NVIDIA/configs/gptj/Server/__init__.py", old, new)
        excerpt = MlperfExcerpt(copy, EXCERPT.round, EXCERPT.commit, None, "")
        report, _ = excerpt.harvest(empty_registry(tmp_path / new.replace(" ", "") / "checkout"))
        skipped = dict(report.skipped)
        assert reason in skipped["mlperf v4.1 v4.1-0049 gptj-99.9 Server"]


def _copy_with(copy: Path, relative: str, old: str, new: str) -> None:
    """The excerpt copied to `copy` with `old` in one of its files replaced by `new`."""
    shutil.copytree(EXCERPT.folder, copy)
    target = copy / relative
    text = target.read_text()
    assert old in text
    target.write_text(text.replace(old, new))
