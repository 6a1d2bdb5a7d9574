"""`registry harvest gcp-pricing` on a pinned excerpt of Cyclenerd's Google Cloud `pricing.yml`.

tests/data/harvest/gcp-pricing/pricing-<commit>.yml holds, under its provenance lines, lines of
`pricing.yml` in Cyclenerd/google-cloud-pricing-cost-calculator at that commit, verbatim in the
file's order (read from a git snapshot of the repository).
"""

import hashlib
from functools import partial
from pathlib import Path

import pytest
import yaml
from cli_helpers import invoke
from registry_helpers import assert_rerun_changes_nothing, edited_copy

from infermeter.registry.catalog import load_prices
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.gcp_pricing import (
    HOURS_PER_MONTH,
    PRICE_FILE,
    harvest_gcp_pricing,
    read_pricing_excerpt,
)
from infermeter.registry.harvest.options import HarvestOptions

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
DATA = REPOSITORY_ROOT / "tests/data/harvest/gcp-pricing"
EXCERPT = DATA / "pricing-fd66b26f.yml"
# The excerpt as read on 2026-12-02; a change to it must be a new read, not an edit.
EXCERPT_SHA256 = "172f4f27e4d3aafacffb7626124f0fdbb50c6ba062cbfa4ad3c654d514e67b86"


def test_the_pinned_excerpt_is_the_one_read() -> None:
    assert hashlib.sha256(EXCERPT.read_bytes()).hexdigest() == EXCERPT_SHA256


def test_harvest_afresh_equals_the_registry_byte_for_byte(price_registry: Path) -> None:
    report = harvest_gcp_pricing(DATA, HarvestOptions(price_registry))
    fresh = (price_registry / PRICE_FILE).read_text(encoding="utf-8")
    assert fresh == (REPOSITORY_ROOT / PRICE_FILE).read_text(encoding="utf-8")
    assert len(report.added) == 14
    assert not report.skipped


def test_harvest_twice_changes_nothing(price_registry: Path) -> None:
    harvest = partial(harvest_gcp_pricing, DATA, HarvestOptions(price_registry))
    assert_rerun_changes_nothing(harvest, price_registry / PRICE_FILE)


def test_every_price_of_the_excerpt_is_in_the_registry() -> None:
    """Each machine's hour, hour_spot and month_1y/3y (÷ 730 h), ÷ its GPUs, is the per-GPU
    price of one entry citing the file at its commit, dated as the file says it was generated."""
    excerpt = read_pricing_excerpt(EXCERPT)
    prices = {p.id: p for p in load_prices().values() if p.source.commit == excerpt.commit}
    keys = {"hour": "on-demand", "hour_spot": "interruptible"}
    keys |= {"month_1y": "reserved-1y", "month_3y": "reserved-3y"}
    checked = 0
    for name, machine in excerpt.machines.items():
        count = next(v for k, v in machine.items() if k in ("a100-80gb", "h100-80gb", "rtx6000"))
        for key, value in machine["cost"]["us-central1"].items():
            if key not in keys:
                continue
            price = prices[f"gcp-pricing-{name}-{keys[key]}"]
            hourly = value / (HOURS_PER_MONTH if key.startswith("month") else 1)
            assert price.usd_per_gpu_hour == pytest.approx(hourly / count, abs=1e-6)
            assert (str(price.as_of), price.source.date_basis) == ("2026-07-30", "stated")
            assert price.source.official
            checked += 1
    assert checked == len(prices) == 14
    assert machine["cost"]["us-central1"]["month"] == pytest.approx(
        machine["cost"]["us-central1"]["hour"] * HOURS_PER_MONTH
    )  # the file's month is 730 hours


def test_h100_spot_and_committed_prices_are_dated_official_discounts() -> None:
    prices = load_prices()
    on_demand = prices["gcp-pricing-a3-highgpu-8g-on-demand"].usd_per_gpu_hour
    spot = prices["gcp-pricing-a3-highgpu-8g-interruptible"].usd_per_gpu_hour
    one, three = (prices[f"gcp-pricing-a3-highgpu-8g-reserved-{t}"] for t in ("1y", "3y"))
    assert (round(on_demand, 2), round(spot, 2)) == (11.06, 6.33)
    assert on_demand > one.usd_per_gpu_hour > three.usd_per_gpu_hour > 0
    assert one.offering == "Compute Engine, 1-year committed use discount"
    assert prices["gcp-pricing-a3-highgpu-8g-on-demand"].gpu == "h100-sxm"


def _copy_with(tmp_path: Path, old: str, new: str) -> Path:
    return edited_copy(tmp_path, EXCERPT, old, new)


def test_a_date_line_not_the_files_generated_day_is_refused(tmp_path: Path) -> None:
    path = _copy_with(tmp_path, "# date: 2026-07-30 (stated)", "# date: 2026-11-30 (stated)")
    with pytest.raises(HarvestError, match=r"generated \(2026-07-30\)"):
        read_pricing_excerpt(path)


def test_a_discount_not_below_on_demand_is_skipped(price_registry: Path, tmp_path: Path) -> None:
    path = _copy_with(tmp_path, "hour_spot: 50.6095408219178", "hour_spot: 88.4899999025753")
    report = harvest_gcp_pricing(path, HarvestOptions(price_registry))
    ids = [p["id"] for p in yaml.safe_load((price_registry / PRICE_FILE).read_text())["prices"]]
    assert "gcp-pricing-a3-highgpu-8g-interruptible" not in ids
    assert "gcp-pricing-a3-highgpu-8g-on-demand" in ids
    assert report.skipped == [("gcp/a3-highgpu-8g/us-central1/hour_spot", "not below on-demand")]


@pytest.mark.parametrize("price", ["0", "-88.49", ".nan", ".inf", "cheap"])
def test_an_hourly_price_not_a_finite_positive_number_is_no_price(
    price: str, price_registry: Path, tmp_path: Path
) -> None:
    """a3-highgpu-8g's on-demand price replaced: no on-demand entry, and no discount (none can
    be compared with on-demand); the other machine types' entries stand."""
    path = _copy_with(tmp_path, "hour: 88.4899999025753", f"hour: {price}")
    report = harvest_gcp_pricing(path, HarvestOptions(price_registry))
    ids = [p["id"] for p in yaml.safe_load((price_registry / PRICE_FILE).read_text())["prices"]]
    assert not [price_id for price_id in ids if price_id.startswith("gcp-pricing-a3-highgpu-8g")]
    assert "gcp-pricing-a2-ultragpu-8g-on-demand" in ids
    # Each dropped price is reported: on-demand's, then each discount's (none to compare with).
    where = "gcp/a3-highgpu-8g/us-central1/"
    assert report.skipped[0][0] == where + "hour"
    assert report.skipped[0][1].endswith("is not a positive number")
    assert report.skipped[1:] == [
        (where + key, "no on-demand price to compare")
        for key in ("hour_spot", "month_1y", "month_3y")
    ]


def test_a_machine_naming_no_catalog_gpu_is_skipped_with_its_reason(
    price_registry: Path, tmp_path: Path
) -> None:
    path = _copy_with(tmp_path, "      h100-80gb: 8\n", "      h100-80gb-mega: 8\n")
    report = harvest_gcp_pricing(path, HarvestOptions(price_registry))
    assert ("gcp/a3-highgpu-8g", "machine type 'a3-highgpu-8g' names no catalog GPU "
            "(source gcp-pricing)") in report.skipped  # fmt: skip


def test_a_bad_excerpt_is_one_line_naming_the_file(price_registry: Path, tmp_path: Path) -> None:
    path = _copy_with(tmp_path, "  generated: Thu Jul 30 06:13:17 2026", "  generated: soon")
    result = invoke(
        "registry", "harvest", "gcp-pricing", "--from", str(path), "--registry", str(price_registry)
    )
    assert result.exit_code == 1
    (line,) = result.output.strip().splitlines()
    assert str(path) in line
    assert "about.generated 'soon' is not a date" in line
