"""Named data sets' mean lengths, for a prediction asked for a data set rather than lengths.

Output means are the MLPerf accuracy runs' `TOKENS_PER_SAMPLE`, as the registry's MLPerf result
files quote them (their mean over the registry's results of the benchmark). Input means are the
typical figures quoted for each task and are marked approximate: no file in this repository
states them yet, and a prediction for a data set carries that uncertainty in its measured error
(the error tables count these rows like any other).
"""

from dataclasses import dataclass

from infermeter.calculators.errors import InputError


@dataclass(frozen=True)
class DatasetLengths:
    """A data set's mean prompt and output lengths in tokens, and where each comes from."""

    name: str
    input_tokens: float
    output_tokens: float
    source: str
    input_approximate: bool = True


_TOKENS_PER_SAMPLE = (
    "MLPerf accuracy log TOKENS_PER_SAMPLE, as the registry's result files quote it"
)

DATASETS: dict[str, DatasetLengths] = {
    "mlperf-llama2-70b": DatasetLengths(
        "MLPerf llama2-70b (OpenOrca)", 294, 290, _TOKENS_PER_SAMPLE
    ),
    "mlperf-mixtral-8x7b": DatasetLengths(
        "MLPerf mixtral-8x7b (OpenOrca, GSM8K, MBXP)", 200, 145, _TOKENS_PER_SAMPLE
    ),
    "mlperf-llama3.1-405b": DatasetLengths(
        "MLPerf llama3.1-405b (long-context tasks)", 9400, 651, _TOKENS_PER_SAMPLE
    ),
    "mlperf-deepseek-r1": DatasetLengths(
        "MLPerf deepseek-r1 (math, code, QA reasoning)", 800, 3702, _TOKENS_PER_SAMPLE
    ),
}

# MLPerf benchmark names (`llama2-70b-99.9`) and the registry's data set names to the table's keys.
_ALIASES = {
    "llama2-70b": "mlperf-llama2-70b",
    "mixtral-8x7b": "mlperf-mixtral-8x7b",
    "llama3.1-405b": "mlperf-llama3.1-405b",
    "deepseek-r1": "mlperf-deepseek-r1",
}


def dataset_key(name: str) -> str | None:
    """The table's key for a data set or MLPerf benchmark name; None when it has none."""
    if name in DATASETS:
        return name
    text = name.lower().replace("mlperf inference ", "").replace(" data set", "")
    for prefix, key in _ALIASES.items():
        if text == prefix or text.startswith(prefix + "-"):
            return key
    return None


def dataset_lengths(name: str) -> DatasetLengths:
    """The mean lengths of a named data set; InputError naming the known ones otherwise."""
    key = dataset_key(name)
    if key is None:
        raise InputError(f"dataset: expected one of {', '.join(sorted(DATASETS))}, got {name!r}")
    return DATASETS[key]
