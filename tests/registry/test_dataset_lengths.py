"""The data sets the registry's results name by name only, against `calculators.perf_datasets`:
each is in its table of mean lengths, or knowingly absent with the reason why."""

from pathlib import Path

import pytest

from infermeter.calculators.errors import InputError
from infermeter.calculators.perf_datasets import (
    DATASETS,
    UNKNOWN_LENGTHS,
    dataset_key,
    dataset_lengths,
    unknown_lengths,
)
from infermeter.registry.estimate import workload_dataset
from infermeter.registry.result_reader import load_results, result_files

REPO = Path(__file__).resolve().parents[2]


def _named_data_sets() -> set[str]:
    results = load_results(REPO, result_files(REPO))
    return {name for _, result in results if (name := workload_dataset(result))}


def test_each_data_set_the_results_name_has_mean_lengths_or_a_reason_for_none() -> None:
    names = _named_data_sets()
    assert {"llama2-70b-99.9", "gpt-oss-120b", "gptj-99"} <= names  # the registry's MLPerf ones
    unlisted = {n for n in names if dataset_key(n) is None and unknown_lengths(n) is None}
    assert not unlisted, "add each to DATASETS (with its source) or UNKNOWN_LENGTHS (why not)"
    both = {n for n in names if dataset_key(n) is not None and unknown_lengths(n) is not None}
    assert not both
    # every reason still names a data set the registry has: none is left over from a rename
    reasons = {unknown_lengths(name) for name in names} - {None}
    assert reasons == set(UNKNOWN_LENGTHS.values())


@pytest.mark.parametrize("key", sorted(DATASETS))
def test_each_data_set_names_the_source_of_its_figures(key: str) -> None:
    lengths = DATASETS[key]
    assert "output:" in lengths.source
    assert "https://github.com/" in lengths.source
    assert lengths.input_tokens > 0
    assert lengths.output_tokens > 0
    if lengths.input_approximate:
        assert "input:" in lengths.source


def test_mlperf_outputs_are_the_reference_implementations() -> None:
    # the accuracy targets' tokens per sample in mlcommons/inference at b66003e1
    expected = {"llama2-70b-99": 294.45, "mixtral-8x7b": 144.84, "llama3.1-405b": 684.68,
                "deepseek-r1": 3886.2274}  # fmt: skip
    assert {b: dataset_lengths(b).output_tokens for b in expected} == expected


def test_a_data_set_the_table_lacks_is_refused_with_the_known_ones() -> None:
    assert dataset_key("gpt-oss-120b") is None
    assert (
        unknown_lengths("MLPerf Inference gpt-oss-120b data set") == UNKNOWN_LENGTHS["gpt-oss-120b"]
    )
    with pytest.raises(InputError, match="mlperf-deepseek-r1"):
        dataset_lengths("gpt-oss-120b")
