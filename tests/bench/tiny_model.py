"""A tiny, randomly initialised Llama model and its tokenizer, built offline for end-to-end tests.

Nothing is downloaded: a byte-level BPE tokenizer is trained on a few English sentences with the
`tokenizers` library, and a two-layer `LlamaForCausalLM` with random weights is saved beside it,
so that a real engine (`transformers serve`) can load the folder as it would a Hub checkpoint.

A random model emits arbitrary tokens: end-of-sequence at any step (short answers), lone bytes
of a multi-byte character (chunks without text), merges that re-encode differently (the
client's token count would rightly disagree with the server's). Its generation config therefore
suppresses every token but whole words with a leading space (`Ġthe`): the server honours
`max_tokens` exactly, every token streams as one chunk of text, and the received text encodes
back to the same number of tokens. That keeps the test's assertions exact; the engine, the HTTP
stream and the client's clock stay real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

END_OF_TEXT = "<|endoftext|>"

_CORPUS = """
The quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun.
People often find that a good story can change the way they think about the world.
When the water is cold, the children go back to the house and read a book by the fire.
Every small number has a name, and every name has a sound that we learn at school.
The old man walked along the river and looked at the boats that came from far away.
Some animals live in the high land, and others keep to the sea below the great hills.
Time and light move together, but the mother of all things is the earth under our feet.
""".strip()

# A plain chat template, so that `/v1/chat/completions` works too.
_CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n"
    "{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"
)


def train_tokenizer(vocab_size: int = 512) -> Any:
    """A tiny GPT-2-style byte-level BPE tokenizer (a `tokenizers.Tokenizer`) trained here on
    the corpus: nothing is downloaded."""
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError as error:
        raise ImportError(f"the tiny tokenizer needs `tokenizers` ({error})") from error
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[END_OF_TEXT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS.splitlines(), trainer=trainer)
    return tokenizer


def _train_tokenizer(vocab_size: int) -> tuple[Any, set[int]]:
    """The tiny tokenizer, and its whole-word token ids."""
    tokenizer = train_tokenizer(vocab_size)
    # "Ġ" is how byte-level BPE writes a leading space. A token counts as a whole word when its
    # text, encoded again, gives back that one token.
    whole_words = {
        token_id
        for token, token_id in tokenizer.get_vocab().items()
        if token.startswith("Ġ")
        and token[1:].isascii()
        and token[1:].isalpha()
        and tokenizer.encode(" " + token[1:]).ids == [token_id]
    }
    if len(whole_words) < 20:
        raise RuntimeError(f"the tiny tokenizer learnt only {len(whole_words)} whole words")
    return tokenizer, whole_words


def build_config_only_model(
    folder: Path, *, vocab_size: int = 512, max_position_embeddings: int = 512
) -> tuple[Path, list[int]]:
    """Write a tiny Llama's `config.json` and its tokenizer under `folder`, without weights
    (vLLM serves it with `--load-format dummy`); return `folder` and the whole-word token ids
    (for `allowed_token_ids`: a random model otherwise streams special tokens and lone bytes).

    Attention heads of 64 dimensions: vLLM's CPU attention rejects 16. Needs `tokenizers` only
    (no torch, no transformers), so the bench's own venv can build it.
    """
    tokenizer, whole_words = _train_tokenizer(vocab_size)
    end_of_text_id = tokenizer.token_to_id(END_OF_TEXT)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": END_OF_TEXT,
        "pad_token": END_OF_TEXT,
        "chat_template": _CHAT_TEMPLATE,
        "model_max_length": max_position_embeddings,
    }
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": tokenizer.get_vocab_size(),
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 64,
        "max_position_embeddings": max_position_embeddings,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "bos_token_id": None,
        "eos_token_id": end_of_text_id,
        "pad_token_id": end_of_text_id,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    for name, data in (("tokenizer_config.json", tokenizer_config), ("config.json", config)):
        (folder / name).write_text(json.dumps(data, indent=2) + "\n")
    return folder, sorted(whole_words)


def build_tiny_model(folder: Path, *, vocab_size: int = 512, seed: int = 0) -> Path:
    """Save a random two-layer Llama and its tokenizer under `folder`; return `folder`.

    The folder holds `config.json`, `generation_config.json`, `model.safetensors`,
    `tokenizer.json` and `tokenizer_config.json`: what `from_pretrained` and
    `transformers serve` load, and what `infermeter bench run --tokenizer` reads.
    """
    try:
        import torch
        from transformers import (
            GenerationConfig,
            LlamaConfig,
            LlamaForCausalLM,
            PreTrainedTokenizerFast,
        )
    except ImportError as error:
        raise ImportError(
            f"the tiny test model needs the `e2e` extra ({error}): pip install -e '.[e2e]'"
        ) from error

    tokenizer, whole_words = _train_tokenizer(vocab_size)
    end_of_text_id = tokenizer.token_to_id(END_OF_TEXT)

    fast_tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token=END_OF_TEXT,
        pad_token=END_OF_TEXT,
        chat_template=_CHAT_TEMPLATE,
        model_max_length=512,
    )
    fast_tokenizer.save_pretrained(folder)

    config = LlamaConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=None,
        eos_token_id=end_of_text_id,
        pad_token_id=end_of_text_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        do_sample=False,
        eos_token_id=end_of_text_id,
        pad_token_id=end_of_text_id,
        suppress_tokens=sorted(set(range(config.vocab_size)) - whole_words),
    )
    model.save_pretrained(folder)
    return folder
