"""`registry harvest azure-retail` on pinned excerpts of andy-diericks/azure-pricing-radar's
snapshots of the Azure Retail Prices API.

tests/data/harvest/azure-retail/vm-<region>-<commit>.txt holds, under its provenance lines, items
of `data/latest/vm-<region>.json` at that commit, verbatim in the file's order (read from a git
snapshot of the repository).
"""

import hashlib
import shutil
from functools import partial
from pathlib import Path

import pytest
import yaml
from cli_helpers import invoke
from registry_helpers import assert_rerun_changes_nothing, edited_copy

from infermeter.registry.catalog import load_prices
from infermeter.registry.harvest.azure_retail import (
    PRICE_FILE,
    SIZES,
    SPOT,
    harvest_azure_retail,
    read_retail_excerpt,
)
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.options import HarvestOptions

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
DATA = REPOSITORY_ROOT / "tests/data/harvest/azure-retail"
NORTH_EUROPE = DATA / "vm-northeurope-cf741f25.txt"
# The excerpts as read on 2026-12-02; a change to one must be a new read, not an edit.
EXCERPT_SHA256 = {
    "vm-eu-west-cf741f25.txt": "f0b79933d6ef909e44839d41867a4493dd5e8b12d206106ff388cdacde4f4c4d",
    "vm-francecentral-cf741f25.txt": (
        "333c976948671ff079e66614876e0ae52cc878cc4f95bf1f399fbf2dde187f83"
    ),
    "vm-northeurope-cf741f25.txt": (
        "73f4055d8776fb72df632620870f0915cd8d7c31faed802357d90073ba0f2f98"
    ),
    "vm-swedencentral-cf741f25.txt": (
        "52456332989e125dbe18289aa2b4a46eae75dcb9f00b280d43ac42ee193e6c2d"
    ),
}
H200_SPOT_SKIPPED = [
    (f"azure/ND96isrH200v5/{region}/interruptible", "not below on-demand")
    for region in ("francecentral", "northeurope", "swedencentral")
]


def test_the_pinned_excerpts_are_the_ones_read() -> None:
    found = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in DATA.iterdir()}
    assert found == EXCERPT_SHA256


def test_harvest_afresh_equals_the_registry_byte_for_byte(price_registry: Path) -> None:
    report = harvest_azure_retail(DATA, HarvestOptions(price_registry))
    fresh = (price_registry / PRICE_FILE).read_text(encoding="utf-8")
    assert fresh == (REPOSITORY_ROOT / PRICE_FILE).read_text(encoding="utf-8")
    assert len(report.added) == 26
    assert sorted(report.skipped) == H200_SPOT_SKIPPED


def test_harvest_twice_changes_nothing(price_registry: Path) -> None:
    harvest = partial(harvest_azure_retail, DATA, HarvestOptions(price_registry))
    assert_rerun_changes_nothing(harvest, price_registry / PRICE_FILE)


def test_every_price_is_the_cheapest_regions_item_per_gpu() -> None:
    """Each entry is, per GPU-hour, the lowest of its VM size's items of its tier over the
    excerpts' regions (on-demand: the size's item; Spot: `<size> Spot`; reserved: the on-demand
    item's 1-year savings plan price), cited to that region's file at its commit and dated as
    the excerpt states."""
    excerpts = [read_retail_excerpt(path) for path in sorted(DATA.glob("*.txt"))]
    items = [item for excerpt in excerpts for item in excerpt.items.values()]
    prices = [p for p in load_prices().values() if p.id.startswith("azure-retail-")]
    for price in prices:
        sku = next(key for key, (size, _, _) in SIZES.items() if size == price.instance)
        name = sku + SPOT if price.tier == "interruptible" else sku
        field = "savingsPlanPrice" if price.tier == "reserved" else "retailPrice"
        offers = [
            (item[field], item["armRegionName"])
            for item in items
            if item["skuName"] == name and field in item
        ]
        cheapest, region = min(offers)
        assert price.usd_per_gpu_hour == pytest.approx(cheapest / SIZES[sku][2], abs=1e-6)
        assert price.region == region
        scope = "eu-west" if region == "westeurope" else region  # the repository's file names
        assert price.source.url.endswith(
            f"/cf741f25c50759745f8eb5dcaf6c3746669c8f31/data/latest/vm-{scope}.json"
        )
        assert (str(price.as_of), price.source.date_basis) == ("2026-08-22", "stated")
        assert price.source.official
    assert len(prices) == 26


def test_the_mi300x_a100_pcie_and_h100_nvl_get_dated_official_discounts() -> None:
    prices = load_prices()
    mi300x = prices["azure-retail-standard-nd96isr-mi300x-v5-interruptible"]
    assert (mi300x.gpu, mi300x.gpus_per_instance, mi300x.region) == ("mi300x", 8, "northeurope")
    assert mi300x.usd_per_gpu_hour == pytest.approx(10.64448 / 8)
    for size, gpu in (("nc24ads-a100-v4", "a100-80gb-pcie"), ("nc40ads-h100-v5", "h100-nvl")):
        on_demand, spot, plan = (
            prices[f"azure-retail-standard-{size}-{tier}"]
            for tier in ("on-demand", "interruptible", "reserved-1y")
        )
        assert on_demand.gpu == spot.gpu == plan.gpu == gpu
        assert on_demand.usd_per_gpu_hour > plan.usd_per_gpu_hour > spot.usd_per_gpu_hour
        assert plan.offering == "Virtual Machines, 1-year savings plan"


def _copy_with(tmp_path: Path, old: str, new: str) -> Path:
    return edited_copy(tmp_path, NORTH_EUROPE, old, new, 1)


def test_a_windows_item_and_an_unknown_size_are_skipped_with_their_reasons(
    price_registry: Path, tmp_path: Path
) -> None:
    path = _copy_with(tmp_path, '"NCads A100 v4 Series Linux"', '"NCads A100 v4 Series Windows"')
    text = path.read_text(encoding="utf-8").replace('"ND96isrMI300Xv5 Spot",\n"unit', '"X",\n"unit')
    low = '"skuName": "Standard_NC96ads_A100_v4 Spot"'
    path.write_text(text.replace(low, low[:-1] + ' Low Priority"'), encoding="utf-8")
    report = harvest_azure_retail(path, HarvestOptions(price_registry))
    reasons = {reason for _, reason in report.skipped}
    assert reasons == {
        "a Windows price (licence included)",
        "VM size 'X' is not in the harvester's SIZES",
        "a Batch low-priority price (not read: Spot is the interruptible VM)",
        "not below on-demand",  # ND H200 v5's Spot items, as in every region
    }
    ids = [p["id"] for p in yaml.safe_load((price_registry / PRICE_FILE).read_text())["prices"]]
    assert "azure-retail-standard-nd96isr-mi300x-v5-interruptible" not in ids
    assert "azure-retail-standard-nd96isr-mi300x-v5-on-demand" in ids


@pytest.mark.parametrize(
    ("price", "read"),
    [("0", "0"), ("-1.629012", "-1.629012"), ("NaN", "nan"), ("Infinity", "inf"), ("1e400", "inf")],
)
def test_a_retail_price_not_a_finite_positive_number_is_skipped(
    price: str, read: str, price_registry: Path, tmp_path: Path
) -> None:
    path = _copy_with(tmp_path, '"retailPrice": 1.629012,', f'"retailPrice": {price},')
    report = harvest_azure_retail(path, HarvestOptions(price_registry))
    key = "azure/DZH318Z09TGJ/0003|f4e228a4-fd80-599d-b3d4-3443a555825d|Consumption|"
    assert (key, f"retailPrice {read} is not a positive number") in report.skipped


def test_a_savings_plan_price_not_a_positive_number_is_skipped_with_its_reason(
    price_registry: Path, tmp_path: Path
) -> None:
    """The item's pay-as-you-go price stands; its savings plan's is reported, not left out."""
    path = _copy_with(tmp_path, '"savingsPlanPrice": 14.675212,', '"savingsPlanPrice": "cheap",')
    report = harvest_azure_retail(path, HarvestOptions(price_registry))
    key = "azure/DZH318Z09TGJ/0024|325d73e2-c08a-5ecd-a61c-30cdc824878d|Consumption|"
    assert (key, "savingsPlanPrice 'cheap' is not a positive number") in report.skipped
    ids = [p["id"] for p in yaml.safe_load((price_registry / PRICE_FILE).read_text())["prices"]]
    assert "azure-retail-standard-nc96ads-a100-v4-on-demand" in ids
    assert "azure-retail-standard-nc96ads-a100-v4-reserved-1y" not in ids


def test_an_item_given_twice_at_one_price_is_one_price(
    price_registry: Path, tmp_path: Path
) -> None:
    """An item repeated under another key at the same price is harmless: the price file is the
    registry's, byte for byte (at another price it is refused: tests/fuzz/test_fuzz_inputs.py)."""
    folder = tmp_path / "excerpts"
    shutil.copytree(DATA, folder)
    excerpt = folder / "vm-francecentral-cf741f25.txt"
    text = excerpt.read_text(encoding="utf-8")
    first = text.index('"DZH318Z08MBM/005M|')
    item = text[first : text.index("},\n", first) + 3]
    edited_copy(folder, excerpt, item, item + item.replace("005M|", "005N|"), 1)
    harvest_azure_retail(folder, HarvestOptions(price_registry))
    assert (price_registry / PRICE_FILE).read_bytes() == (REPOSITORY_ROOT / PRICE_FILE).read_bytes()


def test_an_undated_excerpt_is_refused(tmp_path: Path) -> None:
    path = _copy_with(tmp_path, "# date: 2026-08-22 (stated)", "# date: unknown")
    with pytest.raises(HarvestError, match="must state the day of the snapshot"):
        read_retail_excerpt(path)


def test_a_bad_excerpt_is_one_line_naming_the_file(price_registry: Path, tmp_path: Path) -> None:
    path = _copy_with(tmp_path, '"unitOfMeasure": "1 Hour",', '"unitOfMeasure": "1 Hour"')
    where = ("--from", str(path), "--registry", str(price_registry))
    result = invoke("registry", "harvest", "azure-retail", *where)
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert str(path) in line
    assert "the lines below the provenance are not items" in line
