"""The Downloads page's price CSV says of each price what its GPU page says: whether figures may
use it, how its date is known and whether it is another GPU's price applied by a rule."""

import csv
import io

import downloads_page

from infermeter.registry.catalog import load_gpus, load_models, load_prices
from infermeter.registry.prices import dated


def test_prices_csv_keeps_each_price_s_caution_date_basis_and_derivation() -> None:
    # It held id, provider, gpu, tier, price, region, as_of and the URL only: RunPod's L40S at
    # $0.43, which the L40S page lists as 'not used: the source's own figures contradict each
    # other', read as a price like any other, and 90 prices only read on a day (the pages:
    # 'undated (read 2026-12-01)') read as dated that day.
    prices = load_prices()
    files = downloads_page.catalog_files(load_gpus(), load_models(), prices)
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(files["data/prices.csv"]))}
    assert rows.keys() == prices.keys()
    for price_id, price in prices.items():
        row = rows[price_id]
        assert row["caution"] == (price.caution or ""), price_id
        assert row["date_basis"] == price.source.date_basis, price_id
        assert row["official"] == ("true" if price.source.official else "false"), price_id
        derived = price.derived
        assert row["derived_from"] == ("" if derived is None else derived.from_price), price_id
    anomaly = rows["runpod-secure-l40s-on-demand-skypilot"]
    assert (anomaly["caution"], anomaly["usd_per_gpu_hour"]) == ("anomaly", "0.43")
    undated = [price for price in prices.values() if dated(price) is None]
    assert undated
    assert all(rows[price.id]["date_basis"] == "read" for price in undated)
