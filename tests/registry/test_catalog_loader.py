"""registry.catalog: the catalogs load into their models, and bad data names file and field."""

from pathlib import Path

import pytest
import yaml

from infermeter.registry.catalog import (
    CATALOGS_DIR,
    GPUS_FILE,
    MODELS_FILE,
    PRICES_FILE,
    catalog_arch,
    catalogs_holding,
    load_gpus,
    load_models,
    load_prices,
    read_catalog_data,
)
from infermeter.registry.errors import InvalidFileError
from infermeter.registry.location import catalogs_folder
from infermeter.registry.store import parse_result, with_content_id, write_result
from tests.cli_helpers import invoke
from tests.registry_checkout import REPOSITORY_ROOT as ROOT
from tests.registry_checkout import empty_registry

GPU_ENTRY = """
  - id: {id}
    name: "Test GPU {id}"
    vendor: nvidia
    architecture: Hopper
    form_factor: sxm
    segment: datacenter
    launch: 2023-03-21
    memory_gb: {memory_gb}
    memory_type: HBM3
    memory_reported_mib: null
    memory_bandwidth_gb_s: 3350
    tflops_dense: {{fp32: 67, bf16: 989.4, fp16: 989.4, fp8: 1978.9, int8: null, fp4: null}}
    tdp_w: 700
    interconnect: NVLink
    compute_capability: null
    nvlink_sharp: false
    sources:
      - {{url: "https://example.com/spec", title: "Spec", date: 2023-03, fields: [memory_gb]}}
"""

MODELS_YAML = """schema_version: 1
models:
  - id: tiny-model
    name: Tiny Model
    hf_repo: example/Tiny-Model
    family: tiny
    published_params: {total_b: 0.5, active_b: null}
    context_length: 32768
    config: {hidden_size: 896, num_attention_heads: 14, rope_scaling: null}
    sources:
      - url: "https://huggingface.co/example/Tiny-Model"
        title: "card"
        date: "2024"
        fields: [config]
"""

PRICES_YAML = """schema_version: 1
prices:
  - id: cloud-h100-on-demand
    provider: cloud
    offering: null
    gpu: h100-sxm
    gpus_per_instance: 8
    instance: p5.48xlarge
    tier: on_demand
    usd_per_gpu_hour: 3.93
    region: us-east-1
    as_of: 2025-06-01
    source:
      {url: "https://example.com/pricing", title: "Pricing", date: 2025-06-01,
       date_basis: stated, official: true}
"""


def _gpus_file(tmp_path: Path, *entries: tuple[str, str]) -> Path:
    body = "".join(GPU_ENTRY.format(id=gpu_id, memory_gb=memory) for gpu_id, memory in entries)
    path = tmp_path / GPUS_FILE
    path.write_text("schema_version: 1\ngpus:" + body, encoding="utf-8")
    return path


def test_catalog_loads_entries_by_id_and_keeps_dates_as_text(tmp_path: Path) -> None:
    _gpus_file(tmp_path, ("gpu-a", "80"), ("gpu-b", "141"))
    gpus = load_gpus(tmp_path)
    assert list(gpus) == ["gpu-a", "gpu-b"]
    assert gpus["gpu-b"].memory_gb == 141
    assert gpus["gpu-a"].launch == "2023-03-21"
    assert gpus["gpu-a"].sources[0].date == "2023-03"


def test_catalog_read_again_is_a_fresh_copy_and_an_edit_is_read(tmp_path: Path) -> None:
    # parsed catalogs are kept by their text: a caller's change never reaches the next reader, and
    # a file rewritten at once with text of the same length (same size, same mtime tick) is new
    path = _gpus_file(tmp_path, ("gpu-a", "80"))
    first = read_catalog_data(path)
    first["gpus"][0]["memory_gb"] = 1
    assert read_catalog_data(path)["gpus"][0]["memory_gb"] == 80
    _gpus_file(tmp_path, ("gpu-a", "94"))
    assert load_gpus(tmp_path)["gpu-a"].memory_gb == 94
    twin = tmp_path / "twin"
    twin.mkdir()
    text = path.read_text(encoding="utf-8").replace("94", "-1")
    (twin / GPUS_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(InvalidFileError, match=r"twin/gpus\.yaml: gpus\[0\]\.memory_gb"):
        load_gpus(twin)


def test_catalog_error_names_file_and_field(tmp_path: Path) -> None:
    path = _gpus_file(tmp_path, ("gpu-a", "80"), ("gpu-b", "80"), ("gpu-c", "-1"))
    with pytest.raises(InvalidFileError) as caught:
        load_gpus(tmp_path)
    assert str(caught.value) == f"{path}: gpus[2].memory_gb: Input should be greater than 0"


def test_catalog_collects_every_problem(tmp_path: Path) -> None:
    _gpus_file(tmp_path, ("GPU A", "80"), ("gpu-b", "lots"))
    with pytest.raises(InvalidFileError) as caught:
        load_gpus(tmp_path)
    assert [problem.path for problem in caught.value.problems] == [
        "gpus[0].id",
        "gpus[1].memory_gb",
    ]


def test_catalog_rejects_duplicate_ids(tmp_path: Path) -> None:
    _gpus_file(tmp_path, ("gpu-a", "80"), ("gpu-a", "94"))
    with pytest.raises(InvalidFileError, match=r"gpus\[1\]\.id: duplicate id 'gpu-a'"):
        load_gpus(tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "schema_version: 1\nschema_version: 1\nprices: []\n",
            "duplicate key 'schema_version', first given at line 1",
        ),
        (  # the key cut as error lines quote a value, so where it was first given stays
            f"{'k' * 1000}: 1\n{'k' * 1000}: 2\nschema_version: 1\nprices: []\n",
            r"duplicate key 'k{39}… \(1000 characters\), first given at line 1",
        ),
        ("schema_version: 1\nprices: [\n", "invalid YAML"),
        ("schema_version: 1\nprices: []\nextra: 1\n", "extra: Extra inputs are not permitted"),
        ("schema_version: 2\nprices: []\n", "schema_version: Input should be 1"),
    ],
)
def test_catalog_rejects_malformed_files(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / PRICES_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(InvalidFileError, match=message):
        load_prices(tmp_path)


def test_catalog_missing_file_is_an_invalid_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidFileError, match=r"models\.yaml: no such file"):
        load_models(tmp_path)


def test_catalog_models_and_prices_load_inline_examples(tmp_path: Path) -> None:
    (tmp_path / MODELS_FILE).write_text(MODELS_YAML, encoding="utf-8")
    (tmp_path / PRICES_FILE).write_text(PRICES_YAML, encoding="utf-8")
    model = load_models(tmp_path)["tiny-model"]
    assert model.config == {"hidden_size": 896, "num_attention_heads": 14, "rope_scaling": None}
    price = load_prices(tmp_path)["cloud-h100-on-demand"]
    assert (price.usd_per_gpu_hour, price.as_of, price.tier) == (3.93, "2025-06-01", "on_demand")


def test_catalog_folder_lacking_a_file_falls_back_to_the_package_catalogs(tmp_path: Path) -> None:
    _gpus_file(tmp_path, ("gpu-a", "80"))
    assert catalogs_holding(tmp_path, GPUS_FILE) == tmp_path
    assert catalogs_holding(tmp_path, MODELS_FILE) == CATALOGS_DIR


@pytest.mark.parametrize(
    ("loader", "file_name"),
    [(load_gpus, GPUS_FILE), (load_models, MODELS_FILE), (load_prices, PRICES_FILE)],
)
def test_catalog_real_files_load(loader: object, file_name: str) -> None:
    assert callable(loader)
    assert (CATALOGS_DIR / file_name).exists()
    entries = loader()
    assert entries
    assert all(key == entry.id for key, entry in entries.items())


def test_a_hand_written_price_above_what_a_gpu_hour_can_cost_is_refused(tmp_path: Path) -> None:
    # The bound is the catalog's own (registry.models.catalog.MAX_USD_PER_GPU_HOUR), so a price
    # typed by hand is held to it as a harvested one is.
    dear = PRICES_YAML.replace("usd_per_gpu_hour: 3.93", "usd_per_gpu_hour: 1.0e+300")
    assert dear != PRICES_YAML
    (tmp_path / PRICES_FILE).write_text(dear, encoding="utf-8")
    with pytest.raises(InvalidFileError, match="less than or equal to 1000"):
        load_prices(tmp_path)


def test_catalog_arch_is_parsed_once_per_entry_and_never_shared_by_id() -> None:
    models = load_models()
    entry, other = models["llama-3.1-8b-instruct"], models["llama-3.1-70b-instruct"]
    assert catalog_arch(entry) is catalog_arch(entry)  # the calculators' caches hold per arch
    # Another entry of the same id (a catalog read again, edited) is parsed on its own.
    edited = entry.model_copy(update={"config": other.config})
    assert catalog_arch(edited).num_layers == catalog_arch(other).num_layers == 80
    assert catalog_arch(entry).num_layers == 32


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        (
            "provider: cloud",
            'provider: "cloud\\e]0;pwned\\a"',
            "prices[0].provider: contains the control character U+001B",
        ),
        (
            "provider: cloud",
            'provider: "cloud\\u2029  3. cheap $0.01/GPU-h"',
            "prices[0].provider: contains the line-breaking character U+2029",
        ),
        (
            'title: "Pricing"',
            'title: "<img src=x onerror=alert(1)>"',
            "prices[0].source.title: contains markup '<img src=x onerror=alert(1)>'",
        ),
    ],
)
def test_catalog_strings_are_plain_text_as_a_results_are(
    tmp_path: Path, before: str, after: str, message: str
) -> None:
    # A catalog's strings reach the pages and the terminal as a result's do.
    (tmp_path / PRICES_FILE).write_text(PRICES_YAML.replace(before, after), encoding="utf-8")
    with pytest.raises(InvalidFileError) as caught:
        load_prices(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / PRICES_FILE}: {message}")


def test_registry_answer_refuses_a_provider_that_would_retitle_the_terminal(
    tmp_path: Path,
) -> None:
    root = empty_registry(tmp_path)
    template = ROOT / "tests/examples/valid/results/measured-two-points.json"
    write_result(with_content_id(parse_result(template.read_text(), "x.json")), root)
    catalogs = catalogs_folder(root)
    for harvested in catalogs.glob("prices-*.yaml"):
        harvested.unlink()
    prices = yaml.safe_load((catalogs / PRICES_FILE).read_text())
    for price in prices["prices"]:
        price["provider"] = "cloud\x1b]0;pwned\x07\x1b[2J"
    (catalogs / PRICES_FILE).write_text(yaml.safe_dump(prices))
    args = ("--model", "llama-3.1-8b-instruct", "--slo-ttft-ms", "1000", "--no-estimate")
    result = invoke("registry", "answer", *args, "--registry", str(root))
    assert "\x1b" not in result.output
    assert result.exit_code == 1
    assert "prices.yaml: prices[0].provider: contains the control character U+001B" in result.output


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("test  gpu GPU-A", "gpus[1].name: 'test  gpu GPU-A' is also the name of gpus[0]"),
        (
            "Test\u200b GPU ｇpu-a\u200f",
            "gpus[1].name: 'Test\\u200b GPU ｇpu-a\\u200f' is also the name of gpus[0]",
        ),
        ("gpu-a", "gpus[1].name: 'gpu-a' is the id of another entry"),
    ],
)
def test_catalog_entries_are_named_apart(tmp_path: Path, name: str, message: str) -> None:
    # A copy of a GPU named as it would read as that GPU in every ranking.
    path = _gpus_file(tmp_path, ("gpu-a", "80"), ("gpu-b", "80"))
    path.write_text(path.read_text().replace("Test GPU gpu-b", name), encoding="utf-8")
    with pytest.raises(InvalidFileError) as caught:
        load_gpus(tmp_path)
    assert str(caught.value) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "NVIDIA \u041d100 SXM",
            "gpus[1].name: '\u041d100' is written in Cyrillic letters that read as Latin ones "
            "(U+041D CYRILLIC CAPITAL LETTER EN); write a name in one script",
        ),
        (
            "Test GPU S\u0425M",
            "gpus[1].name: the word 'S\u0425M' mixes Latin and Cyrillic letters "
            "(U+0425 CYRILLIC CAPITAL LETTER HA); write a name in one script",
        ),
        (
            "\u0397100 PCIe",
            "gpus[1].name: '\u0397100' is written in Greek letters that read as Latin ones "
            "(U+0397 GREEK CAPITAL LETTER ETA); write a name in one script",
        ),
    ],
)
def test_a_name_in_look_alike_letters_of_another_script_is_refused(
    tmp_path: Path, name: str, message: str
) -> None:
    # 'NVIDIA Н100 SXM' with a Cyrillic Н reads as the H100 on every page that ranks it.
    path = _gpus_file(tmp_path, ("gpu-a", "80"), ("gpu-b", "80"))
    path.write_text(path.read_text().replace("Test GPU gpu-b", name), encoding="utf-8")
    with pytest.raises(InvalidFileError) as caught:
        load_gpus(tmp_path)
    assert str(caught.value) == f"{path}: {message}"


def test_a_price_provider_in_look_alike_letters_is_refused(tmp_path: Path) -> None:
    text = PRICES_YAML.replace("provider: cloud", "provider: \u0421oreWeave")
    (tmp_path / PRICES_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(InvalidFileError) as caught:
        load_prices(tmp_path)
    assert "prices[0].provider: the word '\u0421oreWeave' mixes Latin and Cyrillic" in str(
        caught.value
    )


@pytest.mark.parametrize(
    "name", ["ГигаЧат Pro", "Модель 7B", "通义千问 Qwen2 7B", "Αλφα 7B", "Llama-Модель ТОР"]
)
def test_an_honest_name_in_one_script_a_word_passes(tmp_path: Path, name: str) -> None:
    path = _gpus_file(tmp_path, ("gpu-a", "80"), ("gpu-b", "80"))
    path.write_text(path.read_text().replace("Test GPU gpu-b", name), encoding="utf-8")
    assert load_gpus(tmp_path)["gpu-b"].name == name
