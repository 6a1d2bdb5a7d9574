"""`--shared-prefix-tokens N`: every prompt starts with the same N tokens, the rest unique."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from click.testing import CliRunner
from tiny_model import train_tokenizer
from tokenizers import Tokenizer

from infermeter.bench.cli.main import main
from infermeter.bench.errors import BenchConfigError
from infermeter.bench.workloads.lengths import LengthDistribution
from infermeter.bench.workloads.profiles import PROFILES
from infermeter.bench.workloads.prompts import RequestFactory, WorkloadSpec


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    """The tiny byte-level BPE tokenizer of the test model, trained here (no download)."""
    return cast(Tokenizer, train_tokenizer())


def _factory(prefix: int, tokenizer: Tokenizer | None = None, salt: int = 0) -> RequestFactory:
    spec = WorkloadSpec(
        PROFILES["chat"],
        input_len=LengthDistribution("uniform", 40, 120),
        seed=7,
        prompt_salt=salt,
        shared_prefix_tokens=prefix,
    )
    return RequestFactory(spec, tokenizer=tokenizer)


def test_shared_prefix_first_tokens_identical_rest_unique_lengths_exact(
    tokenizer: Tokenizer,
) -> None:
    requests = [_factory(32, tokenizer).build(index) for index in range(30)]
    ids = [tokenizer.encode(r.prompt, add_special_tokens=False).ids for r in requests]
    assert len({tuple(encoded[:32]) for encoded in ids}) == 1
    assert len({tuple(encoded[32:]) for encoded in ids}) == 30
    assert [len(encoded) for encoded in ids] == [r.input_tokens for r in requests]
    assert all(r.input_tokens_exact for r in requests)
    unshared = [_factory(0, tokenizer).build(index) for index in range(30)]
    assert [r.input_tokens for r in requests] == [r.input_tokens for r in unshared]
    assert len({tuple(tokenizer.encode(r.prompt).ids[:32]) for r in unshared}) == 30


def test_shared_prefix_without_tokenizer_shares_the_first_words() -> None:
    requests = [_factory(16).build(index) for index in range(20)]
    words = [r.prompt.split() for r in requests]
    assert len({tuple(w[:16]) for w in words}) == 1
    assert len({tuple(w[16:]) for w in words}) == 20
    assert [len(w) for w in words] == [r.input_tokens for r in requests]


def test_shared_prefix_prompt_shorter_than_the_prefix_is_its_start(tokenizer: Tokenizer) -> None:
    factory = _factory(500, tokenizer)  # every prompt (40-120 tokens) is a cut of the prefix
    requests = sorted((factory.build(index) for index in range(5)), key=lambda r: r.input_tokens)
    ids = [tokenizer.encode(r.prompt, add_special_tokens=False).ids for r in requests]
    assert [len(encoded) for encoded in ids] == [r.input_tokens for r in requests]
    assert all(short == ids[-1][: len(short)] for short in ids)


def test_shared_prefix_changes_with_the_salt() -> None:
    first = _factory(16, salt=0).build(0).prompt.split()[:16]
    assert _factory(16, salt=1).build(0).prompt.split()[:16] != first


def test_shared_prefix_refuses_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(BenchConfigError, match="not to a --dataset"):
        RequestFactory(
            WorkloadSpec(PROFILES["chat"], shared_prefix_tokens=8),
            dataset=[],
        )


@pytest.mark.parametrize(
    ("option", "value"), [("--shared-prefix-tokens", "8"), ("--input-len", "64")]
)
def test_an_option_of_synthesised_prompts_is_refused_with_a_dataset(
    tmp_path: Path, option: str, value: str
) -> None:
    # --input-len was passed over: the prompts kept the dataset's lengths, and nothing said so.
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("{}\n")
    run = CliRunner().invoke(
        main,
        ["bench", "run", "--endpoint", "http://127.0.0.1:9", "--dataset", str(dataset),
         option, value],
    )  # fmt: skip
    assert run.exit_code == 2, run.output
    assert run.stderr == (
        f"Error: {option}: applies to synthesised prompts, not to a --dataset's, which keep "
        "their own lengths\n"
    )
