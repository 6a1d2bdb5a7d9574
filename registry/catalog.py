"""Load the catalogs in `registry/catalogs/` into their models, keyed by id.

Bad data raises InvalidFileError naming the file and each field, e.g.
`registry/catalogs/gpus.yaml: gpus[3].memory_gb: Input should be greater than 0`.
"""

import hashlib
import pickle
import re
import unicodedata
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import CalculatorError
from infermeter.calculators.gpu_traits import GpuTraits
from infermeter.calculators.interconnect import Link
from infermeter.calculators.model_arch import ModelArch
from infermeter.registry.checks.strings import string_findings
from infermeter.registry.errors import InvalidFileError, Problem, shown
from infermeter.registry.harvest.sources import SOURCES, gpu_names_sources
from infermeter.registry.models import (
    GpuCatalog,
    GpuEntry,
    ModelCatalog,
    ModelEntry,
    PriceCatalog,
    PriceEntry,
)
from infermeter.registry.store import display_path, read_text

CATALOGS_DIR = Path(__file__).resolve().parent / "catalogs"
"""The catalogs folder the package carries (a registry checkout's is `location.catalogs_folder`)."""

GPUS_FILE = "gpus.yaml"
"""The GPU catalog's file in a catalogs folder."""
MODELS_FILE = "models.yaml"
"""The model catalog's file in a catalogs folder."""
PRICES_FILE = "prices.yaml"
"""The hand-edited price catalog's file in a catalogs folder; the harvested ones beside it are
`harvested_prices_file`s (`price_files`)."""


def harvested_prices_file(label: str) -> str:
    """The file name of a harvested price catalog, `prices-<label>.yaml` (`label` names its
    source, e.g. `gcp`), which `price_files` reads beside `PRICES_FILE`."""
    return f"prices-{label}.yaml"


CatalogT = TypeVar("CatalogT", bound=BaseModel)
EntryT = TypeVar("EntryT", GpuEntry, ModelEntry, PriceEntry)


# libyaml's parser where PyYAML was built with it (the pure-Python one takes ~10x longer on the
# catalogs, which every build and validation reads); the same safe constructor either way.
try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class CatalogLoader(_SafeLoader):
    """YAML without surprises: dates stay strings (the models say `YYYY-MM-DD` text) and a key
    given twice is an error naming both lines instead of silently keeping the last value."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable) and key in seen:
                first = f"first given at line {seen[key].line + 1}"
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {shown(key)}, {first}", key_node.start_mark
                )
            if isinstance(key, Hashable):
                seen[key] = key_node.start_mark
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


# Without the timestamp resolver, `2024-05-01` stays the string the models expect.
CatalogLoader.yaml_implicit_resolvers = {
    first_character: [
        (tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"
    ]
    for first_character, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


# Parsed catalogs by the SHA-256 of their text: building Python objects from YAML takes ~0.3 s a
# catalog even with libyaml, and one process (a site build, a validation, a test session) reads the
# same text many times. The data is kept pickled, so every caller gets its own copy to change; a
# changed file is new text, so it is parsed again (a key of path and mtime could go stale within the
# clock's resolution). Only text that parsed is kept: a bad file raises on every read.
_PARSED: dict[bytes, bytes] = {}
_PARSED_MAX = 32


def read_catalog_data(path: Path) -> Any:
    """The YAML data of a catalog file, unvalidated (dates kept as strings)."""
    file = display_path(path)
    text = read_text(path, file)
    key = hashlib.sha256(text.encode("utf-8")).digest()
    if key in _PARSED:
        return pickle.loads(_PARSED[key])
    try:
        data = yaml.load(text, Loader=CatalogLoader)  # a SafeLoader: no arbitrary objects
    except yaml.YAMLError as error:
        message = " ".join(str(error).split())
        raise InvalidFileError([Problem(file, "", f"invalid YAML: {message}")]) from None
    if len(_PARSED) >= _PARSED_MAX:
        del _PARSED[next(iter(_PARSED))]
    _PARSED[key] = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    return data


def load_catalog(path: Path, model: type[CatalogT]) -> CatalogT:
    """Parse and validate one catalog file; every problem found is in the error. Its strings
    are published as a result's are (the site's pages, the CLI's tables), so they are held to
    the same rule: plain text, no markup, no control character (`string_findings`)."""
    data = read_catalog_data(path)
    try:
        catalog = model.model_validate(data)
    except ValidationError as error:
        raise InvalidFileError.from_validation_error(display_path(path), error, data) from None
    findings = string_findings(display_path(path), data)
    if findings:
        raise InvalidFileError(list(findings))
    return catalog


def _by_id(file: Path, list_name: str, entries: list[EntryT]) -> dict[str, EntryT]:
    by_id: dict[str, EntryT] = {}
    first_index: dict[str, int] = {}
    problems: list[Problem] = []
    for index, entry in enumerate(entries):
        if entry.id in by_id:
            message = f"duplicate id {entry.id!r} (first at {list_name}[{first_index[entry.id]}])"
            problems.append(Problem(display_path(file), f"{list_name}[{index}].id", message))
            continue
        by_id[entry.id] = entry
        first_index[entry.id] = index
    if problems:
        raise InvalidFileError(problems)
    return by_id


def _name_as_read(name: str) -> str:
    """`name` as a reader tells it from others: compatibility forms folded (NFKC: a full-width
    `Ｈ` is `H`), case and spacing aside, and without the characters no one sees (format
    characters: a zero-width space, a direction mark)."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join("".join(c for c in folded if unicodedata.category(c) != "Cf").split())


def _named_apart(file: Path, list_name: str, entries: Mapping[str, GpuEntry | ModelEntry]) -> None:
    """Pages, tables and rankings call an entry by its name (`NVIDIA H100 SXM5 80GB`): no two
    entries share one as a reader reads it (`_name_as_read`), and none is named as another
    entry's id, or an entry named as the H100 would read as the H100 wherever it is ranked."""
    first: dict[str, int] = {}
    problems: list[Problem] = []
    for index, entry in enumerate(entries.values()):
        name = _name_as_read(entry.name)
        if name in first:
            message = f"{shown(entry.name)} is also the name of {list_name}[{first[name]}]"
        elif name in entries and name != entry.id:
            message = f"{shown(entry.name)} is the id of another entry"
        else:
            first[name] = index
            continue
        problems.append(Problem(display_path(file), f"{list_name}[{index}].name", message))
    if problems:
        raise InvalidFileError(problems)


def catalogs_holding(folder: Path, file_name: str) -> Path:
    """`folder` when it holds the catalog file `file_name` (e.g. `GPUS_FILE`), else the
    package's own catalogs folder (`CATALOGS_DIR`)."""
    return folder if (folder / file_name).is_file() else CATALOGS_DIR


def load_gpus(folder: Path = CATALOGS_DIR) -> dict[str, GpuEntry]:
    """The GPU catalog of the catalogs folder `folder`: id → entry, each named apart. A name one
    source gives two GPUs, or a name of a source `registry/harvest/sources.py` does not declare,
    is a problem."""
    path = folder / GPUS_FILE
    gpus = _by_id(path, "gpus", load_catalog(path, GpuCatalog).gpus)
    _named_apart(path, "gpus", gpus)
    problems: list[Problem] = []
    named: dict[tuple[str, str, int | None], str] = {}
    for index, gpu in enumerate(gpus.values()):
        for number, alias in enumerate(gpu.source_names):
            where = f"gpus[{index}].source_names[{number}]"
            if not any(source.names_gpus_as(alias.source) for source in SOURCES):
                message = f"{alias.source!r} is no harvest source's; expected {gpu_names_sources()}"
                problems.append(Problem(display_path(path), f"{where}.source", message))
            first = named.setdefault((alias.source, alias.name, alias.power_limit_w), gpu.id)
            if first != gpu.id:
                message = f"{alias.source} name {alias.name!r} is already {first}'s"
                if alias.power_limit_w is not None:
                    message += f" at a {alias.power_limit_w} W power limit"
                problems.append(Problem(display_path(path), where, message))
    if problems:
        raise InvalidFileError(problems)
    return gpus


def gpu_named(
    gpus: Mapping[str, GpuEntry], source: str, name: str, power_limit_w: int | None = None
) -> GpuEntry | None:
    """The catalog GPU that `source` (a harvested source, e.g. `mlperf`) calls `name`, exactly
    as it prints it (`GpuEntry.source_names`), run at the submission's `power_limit_w` (None:
    the part as sold); None when no entry lists the name at that limit."""
    for gpu in gpus.values():
        if any(
            (alias.source, alias.name, alias.power_limit_w) == (source, name, power_limit_w)
            for alias in gpu.source_names
        ):
            return gpu
    return None


def gpu_of_driver_name(gpus: Mapping[str, GpuEntry], name: str) -> GpuEntry | None:
    """The catalog GPU whose `driver_name_pattern` is found in `name`, the name the driver
    (NVML) gives a GPU; None when no entry's is, or more than one's (the name does not say
    which GPU it is)."""
    found = [
        gpu
        for gpu in gpus.values()
        if gpu.driver_name_pattern is not None and re.search(gpu.driver_name_pattern, name)
    ]
    return found[0] if len(found) == 1 else None


def load_models(folder: Path = CATALOGS_DIR) -> dict[str, ModelEntry]:
    """The model catalog of the catalogs folder `folder`: id → entry, each named apart."""
    path = folder / MODELS_FILE
    models = _by_id(path, "models", load_catalog(path, ModelCatalog).models)
    _named_apart(path, "models", models)
    return models


def price_files(folder: Path = CATALOGS_DIR) -> list[Path]:
    """The price catalog's files in the catalogs folder `folder`: the hand-edited one
    (`PRICES_FILE`), then each harvested one beside it (`harvested_prices_file`, written by
    `infermeter registry harvest`), by name."""
    return [folder / PRICES_FILE, *sorted(folder.glob(harvested_prices_file("*")))]


def load_prices(folder: Path = CATALOGS_DIR) -> dict[str, PriceEntry]:
    """The price catalog of the catalogs folder `folder`, all its files (`price_files`): id →
    entry. An id in two files is an error naming both."""
    prices: dict[str, PriceEntry] = {}
    origin: dict[str, Path] = {}
    for file in price_files(folder):
        for price_id, entry in _by_id(
            file, "prices", load_catalog(file, PriceCatalog).prices
        ).items():
            if price_id in prices:
                message = f"duplicate id {price_id!r} (also in {display_path(origin[price_id])})"
                raise InvalidFileError([Problem(display_path(file), "prices", message)])
            prices[price_id] = entry
            origin[price_id] = file
    return prices


def gpu_links(gpu: GpuEntry) -> tuple[Link, ...]:
    """The GPU's sourced links as the calculators take them (`calculators.interconnect`)."""
    return tuple(
        Link(link.name, link.gb_s_per_direction, link.max_gpus) for link in gpu.interconnect_links
    )


def _major_minor(capability: str) -> tuple[int, int]:
    """'10.3' → (10, 3) (the catalog's `ComputeCapability` pattern guarantees the form)."""
    major, minor = capability.split(".")
    return int(major), int(minor)


def gpu_traits(gpu: GpuEntry) -> GpuTraits:
    """The GPU's facts as the memory plan reads them (`calculators.gpu_traits`): the one place a
    catalog entry becomes them. Its NVLink domain is the most GPUs an NVLink link joins."""
    capability = gpu.compute_capability
    nvlink_gpus = [
        link.max_gpus or 1 for link in gpu.interconnect_links if link.name.startswith("NVLink")
    ]
    return GpuTraits(
        name=gpu.name,
        vendor=gpu.vendor,
        compute_capability=None if capability is None else _major_minor(capability),
        nvlink_sharp=gpu.nvlink_sharp,
        nvlink_domain_gpus=max(nvlink_gpus, default=1),
    )


# Each catalog model's config parsed once, by the (frozen) entry object itself: the validator
# bounds every result by its model's architecture (3,000 results, a few dozen models), and the
# calculators' own caches (`param_counts`) hold per arch object, so a fresh parse per result
# missed them all. The entry is held beside its id so a reused id is never mistaken for it.
_ARCHS: dict[int, tuple[ModelEntry, ModelArch | CalculatorError]] = {}
_ARCHS_MOST = 256


def catalog_arch(model: ModelEntry) -> ModelArch:
    """The architecture of a catalog model, its config parsed once per entry; raises the
    `CalculatorError` the calculators raise when they cannot read the config."""
    parsed = _ARCHS.get(id(model))
    if parsed is None or parsed[0] is not model:
        outcome: ModelArch | CalculatorError
        try:
            outcome = parse_config(model.config)
        except CalculatorError as error:
            outcome = error
        if len(_ARCHS) >= _ARCHS_MOST:
            _ARCHS.clear()
        parsed = _ARCHS[id(model)] = (model, outcome)
    if isinstance(parsed[1], CalculatorError):
        raise type(parsed[1])(*parsed[1].args)
    return parsed[1]
