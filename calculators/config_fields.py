"""Typed reads of `config.json` fields: a missing or bad value is a `ConfigError` naming it."""

from collections.abc import Mapping
from typing import Any

from infermeter.calculators.errors import ConfigError


def required_field(config: Mapping[str, Any], name: str, where: str) -> Any:
    """A field that must be present and not null."""
    if name not in config or config[name] is None:
        raise ConfigError(f"{where}{name}: required field missing from config.json")
    return config[name]


def int_field(config: Mapping[str, Any], name: str, where: str) -> int:
    value = required_field(config, name, where)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}{name}: expected a non-negative integer, got {value!r}")
    return value


def optional_int(config: Mapping[str, Any], name: str, where: str, default: int) -> int:
    """An optional integer field: absent or null gives `default`; anything else must be an int."""
    value = config.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}{name}: expected a non-negative integer, got {value!r}")
    return value


def optional_mapping(config: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any] | None:
    value = config.get(name)
    if value is None or isinstance(value, Mapping):
        return value
    raise ConfigError(f"{where}{name}: expected a JSON object, got {value!r}")


def layer_list(config: Mapping[str, Any], key: str, num_layers: int, where: str) -> list[Any]:
    """A list of one entry a layer (`num_layers` of them)."""
    values = config.get(key)
    if not isinstance(values, list) or len(values) != num_layers:
        raise ConfigError(
            f"{where}{key}: expected a list of {num_layers} entries (num_hidden_layers), "
            f"got {values!r}"
        )
    return values
