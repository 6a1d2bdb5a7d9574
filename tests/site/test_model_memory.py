"""A model page's memory sentence (the hook's own function on catalog entries; no site build):
the KV cache a token adds and, for a hybrid, the state each sequence holds whatever its length,
apart (a state counted once per token once put Nemotron Nano 9B v2 at 71,080 KiB a token)."""

import catalog_pages
import pytest

from infermeter.registry.catalog import load_models

MODELS = load_models()


@pytest.mark.parametrize(
    ("model", "sentence"),
    [
        # 6 attention layers x 2 x 8 KV heads x 64 x 2 bytes; 10 conv layers x 2 x 2048 x 2.
        ("lfm2-1.2b", "KV cache **12 KiB per token** and **80 KiB of state per sequence** in "
         "its 10 state layers (model dtype, no parallelism)."),
        # 4 attention layers x 2 x 8 x 128 x 2 bytes beside 27 Mamba-2 layers.
        ("nemotron-nano-9b-v2", "KV cache **16 KiB per token** and **71,064 KiB of state per "
         "sequence** in its 27 state layers"),
        ("llama-3.1-8b-instruct", "KV cache **128 KiB per token** (model dtype, no parallelism)."),
    ],
)  # fmt: skip
def test_a_model_page_states_kv_per_token_and_state_per_sequence(model: str, sentence: str) -> None:
    assert sentence in catalog_pages.model_page(MODELS[model])


def _head_dim(model: str) -> str:
    page = catalog_pages.model_page(MODELS[model])
    return page.split("<td>Head dimension</td><td>", 1)[1].split("</td>", 1)[0]


def test_a_latent_attention_models_head_dimension_is_its_own_not_hidden_over_heads() -> None:
    # DeepSeek-R1's page said "Head dimension 56" (7168 / 128): its config's MLA widths are
    # qk_nope 128 + qk_rope 64, v 128, and a token caches the 512-wide latent and 64 rotary
    assert _head_dim("deepseek-r1") == (
        "query/key 192 (128 + 64 rotary), value 128; latent KV 512 + 64 rotary per token and layer"
    )
    assert _head_dim("llama-3.1-8b-instruct") == "128"


@pytest.mark.parametrize(
    ("model", "sentence"),
    [
        # 36 layers x 2 x 8 KV heads x 64 x 2 bytes = 72 KiB over the last 128 tokens; the 18
        # full-attention layers' 36 KiB beyond them (the page's table: 4.50 GiB at 131,072).
        ("gpt-oss-120b", "KV cache **72 KiB per token** of the last 128 tokens and **36 KiB per "
         "token** before them, its 18 sliding-window layers keeping only the last 128 (model "
         "dtype, no parallelism)."),
    ],
)  # fmt: skip
def test_a_sliding_window_models_page_says_what_a_token_beyond_the_window_adds(
    model: str, sentence: str
) -> None:
    # The page said 'KV cache 72 KiB per token' of gpt-oss-120b beside a table that counts 36 KiB
    # a token beyond the window: 72 KiB x 131,072 tokens is 9 GiB, the table's 4.50 GiB.
    assert sentence in catalog_pages.model_page(MODELS[model])
