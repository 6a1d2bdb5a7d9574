"""Profiles, length distributions, prompt synthesis and the ShareGPT loader."""

from __future__ import annotations

import json
import os
import random
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest
from tiny_model import train_tokenizer

from infermeter.bench.errors import BenchConfigError, WorkloadFileError
from infermeter.bench.workloads.dataset import load_sharegpt, load_tokenizer
from infermeter.bench.workloads.lengths import LengthDistribution, parse_length
from infermeter.bench.workloads.profiles import PROFILES, get_profile
from infermeter.bench.workloads.prompts import RequestFactory, WorkloadSpec


@pytest.fixture(scope="module")
def byte_level_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny tokenizer, saved as a `tokenizer.json` file."""
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    train_tokenizer().save(str(path))
    return path


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("512", LengthDistribution("fixed", 512)),
        ("fixed:64", LengthDistribution("fixed", 64)),
        ("uniform:8192:32768", LengthDistribution("uniform", 8192, 32768)),
        ("normal:128:32", LengthDistribution("normal", 128, 32)),
        ("lognormal:256:0.5", LengthDistribution("lognormal", 256, 0.5)),
    ],
)
def test_parse_length_reads_each_distribution(spec: str, expected: LengthDistribution) -> None:
    assert parse_length(spec) == expected


@pytest.mark.parametrize(
    "spec", ["", "abc", "0", "uniform:10", "uniform:10:5", "normal:10:-1", "zipf:1:2", "1.5"]
)
def test_parse_length_rejects_bad_spec_naming_the_option(spec: str) -> None:
    with pytest.raises(BenchConfigError) as caught:
        parse_length(spec, "--output-len")
    assert caught.value.option == "--output-len"


@pytest.mark.parametrize(
    ("distribution", "median", "low", "high"),
    [
        (LengthDistribution("fixed", 100), 100, 100, 100),
        (LengthDistribution("uniform", 10, 20), 15, 10, 20),
        (LengthDistribution("normal", 200, 10, minimum=150, maximum=250), 200, 150, 250),
        (LengthDistribution("lognormal", 300, 0.5, minimum=1, maximum=5000), 300, 1, 5000),
    ],
)
def test_length_distribution_samples_have_documented_shape(
    distribution: LengthDistribution, median: float, low: int, high: int
) -> None:
    rng = random.Random(0)
    samples = [distribution.sample(rng) for _ in range(4000)]
    assert min(samples) >= low
    assert max(samples) <= high
    assert statistics.median(samples) == pytest.approx(median, rel=0.05)


def test_profiles_are_named_and_rag_has_long_inputs() -> None:
    assert set(PROFILES) == {"chat", "rag", "batch", "chat-multiturn"}
    rng = random.Random(1)
    rag = get_profile("rag")
    inputs = [rag.input_len.sample(rng) for _ in range(500)]
    outputs = [rag.output_len.sample(rng) for _ in range(500)]
    assert min(inputs) >= 8192
    assert max(inputs) <= 32768
    assert max(outputs) <= 256


def test_get_profile_rejects_unknown_name() -> None:
    with pytest.raises(BenchConfigError, match="known: batch, chat, chat-multiturn, rag"):
        get_profile("video")


def test_request_factory_is_reproducible_from_seed() -> None:
    spec = WorkloadSpec(profile=get_profile("chat"), seed=3)
    first = [RequestFactory(spec).build(i) for i in range(5)]
    assert first == [RequestFactory(spec).build(i) for i in range(5)]
    other = [
        RequestFactory(WorkloadSpec(profile=get_profile("chat"), seed=4)).build(i) for i in range(5)
    ]
    assert [r.prompt for r in first] != [r.prompt for r in other]


def test_request_factory_salt_changes_text_not_lengths() -> None:
    plain = RequestFactory(WorkloadSpec(profile=get_profile("chat"), seed=3)).build(0)
    salted = RequestFactory(WorkloadSpec(profile=get_profile("chat"), seed=3, prompt_salt=9)).build(
        0
    )
    assert (plain.input_tokens, plain.max_tokens) == (salted.input_tokens, salted.max_tokens)
    assert plain.prompt != salted.prompt


def test_request_factory_prompts_share_no_prefix_block() -> None:
    factory = RequestFactory(
        WorkloadSpec(profile=get_profile("batch"), input_len=parse_length("64"))
    )
    heads = {tuple(factory.build(i).prompt.split()[:16]) for i in range(500)}
    assert len(heads) == 500


def test_request_factory_word_prompts_have_one_word_per_token() -> None:
    spec = WorkloadSpec(
        profile=get_profile("chat"),
        input_len=parse_length("uniform:100:200"),
        output_len=parse_length("32"),
    )
    request = RequestFactory(spec).build(7)
    assert len(request.prompt.split()) == request.input_tokens
    assert request.max_tokens == 32
    assert request.expected_output_tokens == 32
    assert not request.input_tokens_exact


@pytest.mark.parametrize("length", [1, 17, 128, 1000])
def test_request_factory_with_tokenizer_gives_exact_token_count(
    byte_level_tokenizer: Path, length: int
) -> None:
    tokenizer = load_tokenizer(str(byte_level_tokenizer))
    spec = WorkloadSpec(profile=get_profile("chat"), input_len=parse_length(str(length)))
    factory = RequestFactory(spec, tokenizer=tokenizer)
    for index in range(5):
        request = factory.build(index)
        assert request.input_tokens_exact
        encoded = tokenizer.encode(request.prompt, add_special_tokens=False)
        assert len(encoded.ids) == length


def test_load_tokenizer_reports_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WorkloadFileError) as caught:
        load_tokenizer(str(tmp_path / "nothing" / "tokenizer.json"))
    assert caught.value.option == "--tokenizer"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (os.mkfifo, "fifo: is a FIFO (named pipe); a tokenizer must be a regular file"),
        (os.mkdir, "fifo/tokenizer.json: No such file or directory"),
        (lambda path: None, "fifo: no such file or folder, nor a Hugging Face id (owner/name)"),
    ],
    ids=["fifo", "folder without tokenizer.json", "missing"],
)
def test_load_tokenizer_reads_a_name_on_disk_there_and_says_what_it_is(
    tmp_path: Path, make: Callable[[Path], None], message: str
) -> None:
    # Each was looked up on the Hugging Face Hub as a model id: 'Repo id must use
    # alphanumeric chars …', or retries against huggingface.co where it cannot be reached.
    path = tmp_path / "fifo"
    make(path)
    with pytest.raises(WorkloadFileError) as caught:
        load_tokenizer(str(path))
    assert caught.value.one_line() == f"--tokenizer: {tmp_path}/{message}"


def _sharegpt_line(human: str, gpt: str) -> str:
    return json.dumps(
        {
            "id": "x",
            "conversations": [{"from": "human", "value": human}, {"from": "gpt", "value": gpt}],
        }
    )


def test_load_sharegpt_reads_jsonl_prompts_and_reply_lengths(tmp_path: Path) -> None:
    path = tmp_path / "sharegpt.jsonl"
    lines = [
        _sharegpt_line("what is a GPU", "a graphics processor that serves tokens"),
        json.dumps({"conversations": [{"from": "gpt", "value": "no human turn"}]}),
        _sharegpt_line("why", "because"),
    ]
    path.write_text("\n".join(lines) + "\n")
    entries = load_sharegpt(path)
    assert [(e.prompt, e.input_tokens, e.reference_output_tokens) for e in entries] == [
        ("what is a GPU", 4, 6),
        ("why", 1, 1),
    ]
    factory = RequestFactory(WorkloadSpec(profile=get_profile("chat"), seed=1), dataset=entries)
    requests = [factory.build(i) for i in range(4)]
    assert {r.prompt for r in requests} == {"what is a GPU", "why"}
    assert all(r.max_tokens in (6, 1) for r in requests)


def test_load_sharegpt_reads_the_real_files_first_human_turn() -> None:
    # The JSON-array file vLLM's benchmarks download (an excerpt: tests/data/datasets/).
    path = Path(__file__).resolve().parents[1] / "data/datasets/sharegpt-v3-excerpt.json"
    (entry,) = load_sharegpt(path)
    assert entry.prompt.startswith("Summarize the main ideas of Jeff Walker's Product Launch")
    assert (entry.input_tokens, entry.reference_output_tokens) == (29, 202)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_load_sharegpt_reads_a_line_holding_a_unicode_line_separator(
    tmp_path: Path, separator: str
) -> None:
    # json.dumps(…, ensure_ascii=False) leaves U+2028 in a string as it is; JSON Lines end at
    # a line feed, but str.splitlines broke the line there ('bad.jsonl:1: not a JSON line:
    # Unterminated string').
    path = tmp_path / "sharegpt.jsonl"
    line = json.dumps(
        {"conversations": [{"from": "human", "value": f"one{separator}two"},
                           {"from": "gpt", "value": "three"}]},
        ensure_ascii=False,
    )  # fmt: skip
    path.write_text(f"{line}\r\n{_sharegpt_line('why', 'because')}\n", encoding="utf-8")
    entries = load_sharegpt(path)
    assert [(e.prompt, e.reference_output_tokens) for e in entries] == [
        (f"one{separator}two", 1),
        ("why", 1),
    ]


def test_load_sharegpt_names_file_and_line_of_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_sharegpt_line("a", "b") + "\n{not json\n")
    with pytest.raises(WorkloadFileError, match=r"bad\.jsonl:2: not a JSON line"):
        load_sharegpt(path)


def test_load_sharegpt_rejects_file_without_conversations(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(json.dumps({"text": "hello"}) + "\n")
    with pytest.raises(WorkloadFileError, match="conversations"):
        load_sharegpt(path)


# --- one length syntax for bench run and bench import ----------------------------------------


@pytest.mark.parametrize(
    ("spec", "stated"),
    [
        ("512", {"kind": "fixed", "value": 512}),
        ("fixed:512", {"kind": "fixed", "value": 512}),
        ("uniform:100:200", {"kind": "uniform", "min": 100, "max": 200}),
        ("normal:128:32", {"kind": "normal", "mean": 128.0, "stddev": 32.0}),
        # median 512, sigma 0.7: mean 512·e^0.245 = 654.1, stddev mean·√(e^0.49 − 1) = 520.2
        ("lognormal:512:0.7", {"kind": "lognormal", "mean": 654.142, "stddev": 520.163}),
    ],
)
def test_length_syntax_is_one_for_run_and_import(spec: str, stated: dict[str, object]) -> None:
    from infermeter.bench.importers.common import parse_length as import_length
    from infermeter.bench.workloads.lengths import length_model

    assert import_length(spec, "--input-len").model_dump(exclude_none=True) == stated
    assert length_model(parse_length(spec)).model_dump(exclude_none=True) == stated


@pytest.mark.parametrize("spec", ["zero", "uniform:5:1", "fixed:0", "normal:5", "beta:1:2", "1.5"])
def test_length_errors_are_one_for_run_and_import(spec: str) -> None:
    from infermeter.bench.importers.common import ResultImportError
    from infermeter.bench.importers.common import parse_length as import_length

    with pytest.raises(BenchConfigError) as run_error:
        parse_length(spec, "--output-len")
    with pytest.raises(ResultImportError) as import_error:
        import_length(spec, "--output-len")
    assert str(run_error.value) == str(import_error.value)
    assert import_error.value.option == "--output-len"


def test_length_dataset_is_for_import_and_said_so_by_run() -> None:
    from infermeter.bench.importers.common import parse_length as import_length

    stated = import_length("dataset", "--input-len").model_dump(exclude_none=True)
    assert stated == {"kind": "dataset"}
    stated = import_length("dataset:4096", "--input-len").model_dump(exclude_none=True)
    assert stated == {"kind": "dataset", "max": 4096}
    # It said "'dataset': the dataset's lengths come with --dataset FILE" to a command line that
    # gave --dataset FILE.
    with pytest.raises(BenchConfigError) as caught:
        parse_length("dataset", "--output-len")
    assert caught.value.one_line() == (
        "--output-len: 'dataset' is for bench import; bench run takes a dataset's lengths from "
        "--dataset FILE when --output-len is left out"
    )
