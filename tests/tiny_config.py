"""A tiny Llama config.json for the calculators' tests to edit into a variant of their own."""

from __future__ import annotations

from typing import Any


def tiny_llama(**changes: Any) -> dict[str, Any]:
    """A four-layer Llama of hidden size 256 with eight attention heads (as many key/value heads
    unless `changes` say otherwise); a change to None removes that field."""
    config: dict[str, Any] = {
        "model_type": "llama",
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "vocab_size": 1000,
    }
    config.update(changes)
    return {key: value for key, value in config.items() if value is not None}
