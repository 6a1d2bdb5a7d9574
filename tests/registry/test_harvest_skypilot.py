"""`registry harvest skypilot` on pinned excerpts of SkyPilot's catalog files.

tests/data/harvest/skypilot/<cloud>-vms-<commit>.csv holds, under its provenance lines, the header
and rows of `catalogs/v8/<cloud>/vms.csv` in skypilot-org/skypilot-catalog at that commit,
verbatim (read file by file: the repository is too large to clone here).
"""

import csv
import io
import shutil
from functools import partial
from pathlib import Path

import pytest
from cli_helpers import invoke
from registry_helpers import assert_rerun_changes_nothing, edited_copy

from infermeter.registry.catalog import gpu_named, load_catalog, load_gpus, load_prices
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.options import HarvestOptions
from infermeter.registry.harvest.skypilot import PRICE_FILE, gpu_names_source, harvest_skypilot
from infermeter.registry.harvest.skypilot_excerpt import read_excerpt
from infermeter.registry.models import PriceCatalog

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
DATA = REPOSITORY_ROOT / "tests/data/harvest/skypilot"
EXCERPTS = sorted(DATA.glob("*.csv"))
GPUS = load_gpus()


def test_harvest_afresh_equals_the_registry_byte_for_byte(price_registry: Path) -> None:
    """Re-read every pinned excerpt: the price file it makes is the one the registry holds."""
    report = harvest_skypilot(DATA, HarvestOptions(price_registry))
    fresh = (price_registry / PRICE_FILE).read_text(encoding="utf-8")
    assert fresh == (REPOSITORY_ROOT / PRICE_FILE).read_text(encoding="utf-8")
    assert len(report.added) >= 50
    assert not report.skipped


def test_harvest_twice_changes_nothing(price_registry: Path) -> None:
    harvest = partial(harvest_skypilot, DATA, HarvestOptions(price_registry))
    assert_rerun_changes_nothing(harvest, price_registry / PRICE_FILE)


@pytest.mark.parametrize("excerpt", EXCERPTS, ids=[path.name for path in EXCERPTS])
def test_every_priced_row_is_in_the_registry(excerpt: Path) -> None:
    """Each instance type's cheapest row (over its regions), price ÷ its GPUs, is the per-GPU
    price of an entry citing its file at its commit, and each spot price below on-demand is the
    interruptible entry."""
    source = read_excerpt(excerpt)
    # A derived price (another GPU priced as this row's) cites the file too; it is not a row.
    prices = [
        p for p in load_prices().values() if p.source.commit == source.commit and p.derived is None
    ]
    numbers = 0
    cheapest: dict[str, float] = {}
    for row in source.rows:
        named = gpu_named(GPUS, gpu_names_source(source.cloud), row["AcceleratorName"])
        if named is None and source.cloud != "lambda":
            continue
        gpus = int(float(row["AcceleratorCount"]))
        for tier, column in (("on_demand", "Price"), ("interruptible", "SpotPrice")):
            if not row.get(column) or (tier == "interruptible" and row["Price"]
                                       and float(row[column]) >= float(row["Price"])):  # fmt: skip
                continue
            matches = [
                p
                for p in prices
                if p.instance == row["InstanceType"]
                and p.tier == tier
                and p.source.url.endswith(source.path)
            ]
            assert len(matches) == 1, (row["InstanceType"], tier)
            per_gpu = float(row[column]) / gpus
            cheapest[matches[0].id] = min(cheapest.get(matches[0].id, per_gpu), per_gpu)
            numbers += 1
    assert numbers >= 3
    by_id = {price.id: price for price in prices}
    for price_id, per_gpu in cheapest.items():
        assert by_id[price_id].usd_per_gpu_hour == pytest.approx(per_gpu), price_id


def test_oci_prices_are_dated_official_list_prices() -> None:
    prices = load_prices()
    mi300x = prices["skypilot-oci-bm-gpu-mi300x-8-on-demand"]
    assert (mi300x.usd_per_gpu_hour, mi300x.gpus_per_instance) == (6.0, 8)
    assert (str(mi300x.as_of), mi300x.source.date_basis, mi300x.source.official) == (
        "2026-09-18",
        "stated",
        True,
    )
    assert prices["skypilot-oci-bm-gpu-mi355x-8-on-demand"].usd_per_gpu_hour == 8.6


def test_lambda_a6000_rows_price_the_rtx_a6000() -> None:
    # The RTX A6000 had no price: the Lambda excerpt held no A6000 rows. Its three instance
    # types (1x, 2x, 4x) are each $1.09 per GPU-hour, filed under the catalog's rtx-a6000.
    found = {p.instance: p for p in load_prices().values() if p.gpu == "rtx-a6000"}
    assert sorted(found) == ["gpu_1x_a6000", "gpu_2x_a6000", "gpu_4x_a6000"]
    for price in found.values():
        assert (price.provider, price.tier, price.usd_per_gpu_hour) == ("lambda", "on_demand", 1.09)
        assert price.source.commit == "0f4070387edc953d7004cff197940e1918a1d6aa"


def test_undated_file_gives_prices_dated_only_by_reading() -> None:
    verda = load_prices()["skypilot-verda-1b300-30v-on-demand"]
    assert verda.source.date_basis == "read"
    assert "undated" in (verda.notes or "")


def test_spot_price_not_below_on_demand_is_skipped(price_registry: Path, tmp_path: Path) -> None:
    # Verda's 1× H100 row, its spot price raised to its on-demand price
    excerpt = edited_copy(tmp_path, DATA / "verda-vms-000c1d0b.csv", "2.29,0.8015", "2.29,2.29")
    report = harvest_skypilot(excerpt, HarvestOptions(price_registry))
    prices = load_catalog(price_registry / PRICE_FILE, PriceCatalog).prices
    ids = {price.id for price in prices}
    assert "skypilot-verda-1h100-80s-32v-on-demand" in ids
    assert "skypilot-verda-1h100-80s-32v-interruptible" not in ids
    assert report.skipped == [
        ("verda/1H100.80S.32V/FIN-02", "spot price not below the on-demand price")
    ]


@pytest.mark.parametrize("price", ["0", "-6.99", "nan", "inf", "1e400"])
def test_price_not_a_finite_positive_number_is_no_price(
    price: str, price_registry: Path, tmp_path: Path
) -> None:
    """A price of 0, below 0, NaN or beyond a float is no price (not an entry the schema
    refuses): Verda's 1× B300 row keeps its spot price only."""
    excerpt = edited_copy(
        tmp_path, DATA / "verda-vms-000c1d0b.csv", "FIN-03,6.99,", f"FIN-03,{price},"
    )
    report = harvest_skypilot(excerpt, HarvestOptions(price_registry))
    ids = {price.id for price in load_catalog(price_registry / PRICE_FILE, PriceCatalog).prices}
    assert "skypilot-verda-1b300-30v-on-demand" not in ids
    assert "skypilot-verda-1b300-30v-interruptible" in ids
    # The price dropped is reported, not left out unsaid.
    assert report.skipped == [
        ("verda/1B300.30V/FIN-03", f"Price {price!r} is not a positive number")
    ]


def test_a_row_given_twice_at_one_price_is_one_price(price_registry: Path, tmp_path: Path) -> None:
    """A row repeated verbatim is harmless: the price file is the registry's, byte for byte
    (the same row at another price is refused: tests/fuzz/test_fuzz_inputs.py)."""
    folder = tmp_path / "excerpts"
    shutil.copytree(DATA, folder)
    verda = folder / "verda-vms-000c1d0b.csv"
    row = next(
        line for line in verda.read_text(encoding="utf-8").splitlines() if "FIN-03,6.99," in line
    )
    edited_copy(folder, verda, row + "\n", row + "\n" + row + "\n", 1)
    harvest_skypilot(folder, HarvestOptions(price_registry))
    assert (price_registry / PRICE_FILE).read_bytes() == (REPOSITORY_ROOT / PRICE_FILE).read_bytes()


def test_unmapped_accelerator_is_skipped_with_its_reason(
    price_registry: Path, tmp_path: Path
) -> None:
    excerpt = edited_copy(tmp_path, DATA / "hyperstack-vms-fdc9d908.csv", ",L40,1,", ",L40X,1,")
    report = harvest_skypilot(excerpt, HarvestOptions(price_registry))
    assert report.skipped == [
        ("hyperstack/n3-L40x1/CANADA-1", "accelerator 'L40X' is not mapped to a catalog GPU")
    ]


def test_excerpt_without_date_line_is_one_line_error(price_registry: Path, tmp_path: Path) -> None:
    source = DATA / "oci-vms-05887511.csv"
    date_line = source.read_text(encoding="utf-8").splitlines()[1]
    excerpt = edited_copy(tmp_path, source, date_line + "\n", "")
    with pytest.raises(HarvestError, match="lack '# date: …'"):
        harvest_skypilot(excerpt, HarvestOptions(price_registry))
    result = invoke(
        "registry", "harvest", "skypilot", "--from", str(excerpt), "--registry", str(price_registry)
    )
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert excerpt.name in result.output


def test_cli_json_report(price_registry: Path) -> None:
    where = ("--from", str(DATA), "--registry", str(price_registry))
    result = invoke("registry", "harvest", "skypilot", *where, "--json", "--dry-run")
    assert result.exit_code == 0, result.output
    assert '"added"' in result.output
    assert not (price_registry / PRICE_FILE).exists()


def test_excerpt_rows_are_csv_the_header_names() -> None:
    for path in EXCERPTS:
        body = [line for line in path.read_text(encoding="utf-8").splitlines() if line[:2] != "# "]
        rows = list(csv.reader(io.StringIO("\n".join(body))))
        assert all(len(row) == len(rows[0]) for row in rows), path.name
