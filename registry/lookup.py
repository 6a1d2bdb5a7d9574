"""Look up catalog entries by id for the calculators: models, GPUs and their prices.

An unknown id raises `UnknownIdError` listing the closest known ids; a model may also be
given as a path to a Hugging Face `config.json`.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from infermeter.calculators.config_reader import config_from_text, parse_config
from infermeter.calculators.errors import CalculatorError, ConfigError
from infermeter.calculators.fit import GpuOption
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.suggest import unknown_name
from infermeter.calculators.vllm_settings import gpu_total_bytes
from infermeter.registry import catalog
from infermeter.registry.errors import RegistryError
from infermeter.registry.input_files import InputFileError, read_input_text
from infermeter.registry.models import GpuEntry, ModelEntry, PriceEntry
from infermeter.registry.prices import shown_as_of, tier_prices


@cache
def load_gpus() -> dict[str, GpuEntry]:
    """The GPU catalog, read once per process."""
    return catalog.load_gpus()


@cache
def load_models() -> dict[str, ModelEntry]:
    """The model catalog, read once per process."""
    return catalog.load_models()


@cache
def load_prices() -> dict[str, PriceEntry]:
    """The price catalog, read once per process."""
    return catalog.load_prices()


class UnknownIdError(RegistryError):
    """An id that no catalog entry has."""


class ConfigFileError(RegistryError):
    """A model config.json that cannot be read."""


def _unknown(kind: str, wanted: str, known: Iterable[str]) -> UnknownIdError:
    return UnknownIdError(unknown_name(f"{kind} id", wanted, known))


@dataclass(frozen=True)
class ModelRef:
    """A model for the calculators: its id (or file path) and its config.json as a dict."""

    id: str
    config: dict[str, Any]


def _is_file(path: Path) -> bool:
    """Whether `path` names a file; False for a name no file can have (too long, a NUL)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def resolve_model(reference: str) -> ModelRef:
    """A catalog id, or a path to a config.json file."""
    path = Path(reference)
    if reference.endswith(".json") or _is_file(path):
        try:  # a regular file of at most 16 MiB: a FIFO named x.json would block, /dev/zero fill
            config = config_from_text(read_input_text(path, "model config"))
        except InputFileError as error:
            raise ConfigFileError(str(error)) from None
        except ConfigError as error:
            raise ConfigFileError(f"{reference}: {error}") from None
        return ModelRef(id=path.name, config=config)
    models = load_models()
    if reference not in models:
        raise _unknown("model", reference, models)
    return ModelRef(id=reference, config=dict(models[reference].config))


def model_arch(reference: str) -> ModelArch:
    """The architecture of a catalog model or config.json; errors name the model or file."""
    model = resolve_model(reference)
    try:
        return parse_config(model.config)
    except CalculatorError as error:
        raise type(error)(f"{reference}: {error}") from None


def resolve_gpu(gpu_id: str) -> GpuEntry:
    gpus = load_gpus()
    if gpu_id not in gpus:
        raise _unknown("GPU", gpu_id, gpus)
    return gpus[gpu_id]


def gpu_memory_bytes(gpu: GpuEntry) -> int:
    """Total memory vLLM sees on this GPU (from the driver-reported total when known)."""
    return gpu_total_bytes(gpu.memory_reported_mib, gpu.memory_gb)


def cheapest_prices(
    gpu_id: str, prices: Iterable[PriceEntry] | None = None
) -> dict[str, PriceEntry]:
    """The price of each tier that figures use: usable (not flagged), tiers from one provider
    (`registry.prices.tier_prices`)."""
    entries = load_prices().values() if prices is None else prices
    return tier_prices(gpu_id, entries)


def _price_used(price: PriceEntry) -> dict[str, Any]:
    return {
        "id": price.id,
        "usd_per_gpu_hour": price.usd_per_gpu_hour,
        "as_of": shown_as_of(price),
        "source_url": price.source.url,
    }


def catalog_prices(gpu_id: str) -> dict[str, dict[str, Any]]:
    """The GPU's cheapest catalog price per tier, as the payload names a price used."""
    resolve_gpu(gpu_id)  # an unknown id raises, naming the closest ids
    return {tier: _price_used(price) for tier, price in cheapest_prices(gpu_id).items()}


def gpu_options(tier: str = "on_demand", gpu_ids: Iterable[str] | None = None) -> list[GpuOption]:
    """Every catalog GPU (or those named) as a fit candidate, priced at its cheapest `tier`."""
    gpus = load_gpus()
    wanted = list(gpu_ids) if gpu_ids is not None else sorted(gpus)
    prices = list(load_prices().values())
    options = []
    for gpu_id in wanted:
        gpu = resolve_gpu(gpu_id)
        price = cheapest_prices(gpu_id, prices).get(tier)
        options.append(
            GpuOption(
                id=gpu.id,
                name=gpu.name,
                memory_bytes=gpu_memory_bytes(gpu),
                memory_gb=gpu.memory_gb,
                usd_per_gpu_hour=price.usd_per_gpu_hour if price is not None else None,
                traits=catalog.gpu_traits(gpu),
            )
        )
    return options
