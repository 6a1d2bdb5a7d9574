"""MiMo-V2-Flash: sliding-window layers with KV heads of their own, values narrower than keys
(calculators.mimo_v2). Its shape as public ports of XiaomiMiMo/MiMo-V2-Flash state it: 48 layers,
hidden 4096, 64 heads, 4 full-attention and 8 sliding-window KV heads, keys 192 and values 128
wide (whn09/neuronx-distributed-inference examples/README_MiMo_V2_Flash.md at 01853f44), 256
experts of 2048, top 8, layer 0 dense, a window of 128 (an nkipy/Trainium2 port's README; the
neuronx README's 1536 and 32768 disagree and were left aside). SGLang's and Xiaomi's day-0 post
(lm-sys/lm-sys.github.io blog/2025-12-15-mimo-v2-flash.md) gives 309B total and 15B activated
parameters, and five sliding-window layers to one global one.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.kv_blocks import page_blocks
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.model_arch import FULL, SLIDING
from infermeter.calculators.param_count import param_counts

FLASH: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "configs" / "mimo-v2-flash.json").read_text()
)


def test_mimo_v2_flash_counts_its_published_309b_total_15b_active() -> None:
    counts = param_counts(parse_config(FLASH))
    assert counts.total == pytest.approx(309e9, rel=0.01)
    assert counts.active == pytest.approx(15e9, rel=0.04)


def test_mimo_v2_layers_follow_the_pattern_and_the_window_is_vllms() -> None:
    arch = parse_config(FLASH)
    assert arch.layer_kinds.count(FULL) == 9
    assert arch.layer_kinds[:6] == (FULL, SLIDING, SLIDING, SLIDING, SLIDING, FULL)
    assert arch.sliding_window == 128
    assert arch.moe is not None
    assert arch.moe.moe_layers == tuple(range(1, 48))


def test_mimo_v2_kv_keeps_each_kinds_heads_and_narrower_values() -> None:
    kv = kv_cache_shape(parse_config(FLASH), tensor_parallel_size=4)
    # Sliding: 8 KV heads / 4 ranks x (192 + 128) x 2 bytes; full: 1 head per rank.
    assert kv.bytes_per_token_per_layer == 2 * 320 * 2
    assert kv.full_layer_bytes_per_token == 1 * 320 * 2
    # The full-attention pages hold twice the tokens to match the sliding pages' bytes.
    assert page_blocks(kv, 16) == (16, 32)


def test_mimo_v2_moe_flags_must_cover_every_layer() -> None:
    with pytest.raises(ConfigError, match=r"^moe_layer_freq: expected 48 flags"):
        parse_config({**FLASH, "moe_layer_freq": [0, 1]})
    with pytest.raises(ConfigError, match=r"^hybrid_layer_pattern\[1\]: expected 0"):
        parse_config({**FLASH, "hybrid_layer_pattern": [0, 2] + [1] * 46})
