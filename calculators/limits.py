"""What the physical world allows: bounds on every input of the calculators.

A number far outside them is a typo or an attack, never a deployment; refusing it early keeps
every answer finite and every computation short (the browser calculator runs this same code on a
pasted config.json). The bounds are generous: ten times the largest real value we know of.

`check_config` walks a model's config.json (as a dict) before it is read: nesting depth, finite
numbers, integers of a sane size, and per-field ranges (`CONFIG_FIELD_RANGES`) for the fields whose
extreme values would hang or crash the calculators (10^8 layers, a zero patch size).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from infermeter.calculators.errors import ConfigError, InputError

MAX_GPUS = 100_000  # GPUs in one deployment (tensor × pipeline parallel)
MAX_TOKENS = 100_000_000  # tokens in one sequence (the longest contexts are about 10M)
MAX_GPU_MEMORY_BYTES = 2**44  # 16 TiB in one GPU (today's largest: under 300 GiB)
MAX_CONCURRENCY = 100_000_000  # concurrent sequences
MAX_USD = 1e12  # a price, in USD (per hour or per million tokens)
MAX_RATE = 1e15  # tokens per second, tokens per month …
MAX_LATENCY_MS = 1e9  # a latency bound (11.6 days; the longest requests take minutes)
MAX_CONFIG_DEPTH = 32  # nesting of a config.json (real ones: 4)
MAX_CONFIG_BYTES = 16 * 1024 * 1024  # a config.json's UTF-8 text (real ones: under 1 MiB)
MAX_CONFIG_INTEGER = 2**53  # larger integers are not exact in JavaScript or as floats

# Fields that a config.json may hold at any level (text_config, vision_config …): (low, high).
CONFIG_FIELD_RANGES: dict[str, tuple[int, int]] = {
    "num_hidden_layers": (0, 10_000),
    "num_layers": (0, 10_000),
    "hidden_size": (0, 1_048_576),
    "intermediate_size": (0, 10_485_760),
    "moe_intermediate_size": (0, 10_485_760),
    "num_attention_heads": (0, 65_536),
    "num_key_value_heads": (0, 65_536),
    "head_dim": (0, 65_536),
    "vocab_size": (0, 100_000_000),
    "num_local_experts": (0, 1_000_000),
    "n_routed_experts": (0, 1_000_000),
    "num_experts": (0, 1_000_000),
    "num_experts_per_tok": (0, 1_000_000),
    "max_position_embeddings": (0, MAX_TOKENS),
    # vLLM's other length keys (config_reader._LENGTH_KEYS).
    "n_positions": (0, MAX_TOKENS),
    "max_seq_len": (0, MAX_TOKENS),
    "seq_length": (0, MAX_TOKENS),
    "model_max_length": (0, MAX_TOKENS),
    "max_target_positions": (0, MAX_TOKENS),
    "max_sequence_length": (0, MAX_TOKENS),
    "max_seq_length": (0, MAX_TOKENS),
    "seq_len": (0, MAX_TOKENS),
    "sliding_window": (0, MAX_TOKENS),
    "decoder_sparse_step": (1, 10_000),
    "moe_layer_freq": (0, 10_000),
    "patch_size": (1, 1_000_000),
    "temporal_patch_size": (1, 1_000_000),
    "n_layers": (0, 10_000),  # DBRX's layers, an HMLP's (Inkling's vision_config)
    "image_size": (0, 1_000_000),
    "bits": (1, 64),
    "num_bits": (1, 64),
    "w_bit": (1, 64),
}
# Fields that name a kind wherever they appear (text_config, vision_config …): text or null. The
# readers look them up in their tables, where a list or an object is a TypeError.
CONFIG_TEXT_FIELDS = frozenset({"model_type"})
# Float fields of config.json with a range: rope scaling factors stretch the context.
CONFIG_FLOAT_RANGES: dict[str, tuple[float, float]] = {
    "factor": (1e-6, 1e6),
    "block_ffn_dim_multiplier": (1e-6, 1e6),  # LFM2's MLP width
    "rope_theta": (0.0, 1e15),
}


def check_config(config: Any, where: str = "") -> None:
    """Raise `ConfigError` naming the field when `config` holds a value no model has (see the
    module docstring). Iterative, so a 100k-deep nesting cannot exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(config, where, 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigError(
                f"{path or 'config.json'}: nested deeper than {MAX_CONFIG_DEPTH} levels"
            )
        if isinstance(value, Mapping):
            for key, item in value.items():
                name = f"{path}.{key}" if path else str(key)
                check_field(str(key), item, name)
                stack.append((item, name, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{path}: expected a finite number, got {value!r}")
        elif type(value) is int and abs(value) > MAX_CONFIG_INTEGER:
            raise ConfigError(f"{path}: expected an integer below 2^53, got a larger one")


def check_field(key: str, value: Any, name: str) -> None:
    """Raise `ConfigError` naming `name` when `value` is out of the bounds of field `key` (a
    field read under another name, an alias, is bounded as the field it stands for)."""
    if key in CONFIG_TEXT_FIELDS and value is not None and not isinstance(value, str):
        raise ConfigError(f"{name}: expected a string such as 'llama', got {_shown(value)}")
    if isinstance(value, bool):
        return
    if key in CONFIG_FIELD_RANGES and isinstance(value, int):
        low, high = CONFIG_FIELD_RANGES[key]
        if not low <= value <= high:
            shown = value if abs(value) <= MAX_CONFIG_INTEGER else "a larger one"
            raise ConfigError(f"{name}: expected an integer from {low} to {high:,}, got {shown}")
    if key in CONFIG_FLOAT_RANGES and isinstance(value, int | float):
        low_f, high_f = CONFIG_FLOAT_RANGES[key]
        if not (math.isfinite(value) and low_f <= value <= high_f):
            expected = f"expected a number from {low_f:g} to {high_f:g}"
            raise ConfigError(f"{name}: {expected}, got {value!r}")


def _shown(value: Any) -> str:
    """`value`'s repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:59]}…"


def at_least_one(name: str, value: int) -> int:
    """`value`, a count the calculators divide or loop by (a batch, a GPU count, a parallel
    size, a context): `InputError` naming `name` when it is below 1."""
    if value < 1:
        raise InputError(f"{name}: expected an integer >= 1, got {value}")
    return value


def above_zero(name: str, value: float) -> float:
    """`value`, a rate or size the calculators divide by: `InputError` naming `name` unless it
    is > 0 (NaN is not)."""
    if not value > 0:
        raise InputError(f"{name}: expected a number > 0, got {value}")
    return value


def bounded_int(name: str, value: int, low: int, high: int) -> int:
    """`value`, or `InputError` naming `name` when it lies outside [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = value if not isinstance(value, int) or abs(value) < 10**20 else "a larger one"
        raise InputError(f"{name}: expected an integer from {low:,} to {high:,}, got {shown}")
    return value


def bounded_float(name: str, value: float, low: float, high: float) -> float:
    """`value`, or `InputError` when it is not a finite number in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{name}: expected a number, got {value!r}")
    if not (math.isfinite(value) and low <= value <= high):
        expected = f"expected a finite number from {low:g} to {high:g}"
        raise InputError(f"{name}: {expected}, got {value!r}")
    return float(value)


def gib_to_bytes(name: str, gib: float) -> int:
    """A memory size given in GiB as bytes; `InputError` unless it is finite, at most 16 TiB and
    at least one byte."""
    number = bounded_float(name, gib, 0.0, MAX_GPU_MEMORY_BYTES / 1024**3)
    if number <= 0:
        raise InputError(f"{name}: expected a number > 0, got {gib!r}")
    if number * 1024**3 < 1:  # else a size of 0 bytes, refused by a name the reader never gave
        raise InputError(f"{name}: expected at least one byte ({1 / 1024**3:.2g} GiB), got {gib!r}")
    return int(number * 1024**3)
