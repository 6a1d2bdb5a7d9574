"""Named data sets' mean lengths, for a prediction asked for a data set rather than lengths.

Every figure names its source in the entry's `source`: a repository file at a commit, or the
registry's results it is read from. Output means are the MLPerf reference implementation's
(the accuracy target's `tokens_per_sample` beside its README) where it states one in tokens, else
its output cap where the registry's results show the outputs reaching it.
Input means are approximate where no public source states the data set's mean prompt in the
model's tokens (`input_approximate`); a prediction for a data set carries that uncertainty in
its measured error (the error tables count these rows like any other). `UNKNOWN_LENGTHS` lists
the MLPerf benchmarks whose data sets the table knowingly lacks, and why.
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


# mlcommons/inference, where each benchmark's reference implementation and accuracy target live.
_INFERENCE = "https://github.com/mlcommons/inference/blob/b66003e10e2db4b8c36a448b0545ec90fcc6e9e9/"
_NO_INPUT_SOURCE = (
    "input: a typical figure for the task; no public source found states the data set's mean "
    "prompt in tokens"
)
# Hugging Face's card of CNN/DailyMail 3.0.0, the articles MLPerf's summarization benchmarks use
# (its validation split's 13,368).
_CNN_DAILYMAIL_CARD = (
    "https://github.com/huggingface/datasets/blob/7fd476b91733aedacca4fbe96c92b3db01c2dd68/"
    "datasets/cnn_dailymail/README.md"
)

DATASETS: dict[str, DatasetLengths] = {
    "mlperf-llama2-70b": DatasetLengths(
        "MLPerf llama2-70b (OpenOrca)",
        294,
        294.45,
        f"{_NO_INPUT_SOURCE}. output: the reference's tokens per sample over the 24,576 samples, "
        f"{_INFERENCE}language/llama2-70b/README.md",
    ),
    "mlperf-mixtral-8x7b": DatasetLengths(
        "MLPerf mixtral-8x7b (OpenOrca, GSM8K, MBXP)",
        200,
        144.84,
        f"{_NO_INPUT_SOURCE}. output: the reference's tokens_per_sample over the 15,000 samples, "
        f"{_INFERENCE}language/mixtral-8x7b/README.md",
    ),
    "mlperf-llama3.1-405b": DatasetLengths(
        "MLPerf llama3.1-405b (long-context tasks)",
        9400,
        684.68,
        f"{_NO_INPUT_SOURCE}. output: the reference's tokens_per_sample over the 8,313 samples, "
        f"{_INFERENCE}language/llama3.1-405b/README.md",
    ),
    "mlperf-deepseek-r1": DatasetLengths(
        "MLPerf deepseek-r1 (math, code, QA reasoning)",
        800,
        3886.2274,
        f"{_NO_INPUT_SOURCE}. output: the reference's mean-output-tok-len over the 4,388 "
        f"samples, {_INFERENCE}language/deepseek-r1/README.md",
    ),
    "mlperf-llama3.1-8b": DatasetLengths(
        "MLPerf llama3.1-8b (CNN/DailyMail)",
        781,
        128,
        "input: the mean token count of CNN/DailyMail 3.0.0's articles (its tokens, not Llama "
        "3's, and without the prompt's instruction), "
        f"{_CNN_DAILYMAIL_CARD}. output: the reference's cap, max_tokens 128 "
        f"({_INFERENCE}language/llama3.1-8b/SUT_VLLM.py), which the outputs reach: the "
        "registry's 46 MLPerf Offline results generate 127.99 to 129.0 tokens per sample "
        "(LoadGen's tokens per second over samples per second)",
    ),
}

# MLPerf benchmark names (`llama2-70b-99.9`) and the registry's data set names to the table's keys.
_ALIASES = {
    "llama2-70b": "mlperf-llama2-70b",
    "mixtral-8x7b": "mlperf-mixtral-8x7b",
    "llama3.1-405b": "mlperf-llama3.1-405b",
    "deepseek-r1": "mlperf-deepseek-r1",
    "llama3.1-8b": "mlperf-llama3.1-8b",
}

# MLPerf benchmarks (as `_ALIASES` names them) whose data sets the table knowingly lacks: the
# sources found state no mean input, or no mean output, in tokens.
UNKNOWN_LENGTHS: dict[str, str] = {
    "gptj": (
        "no mean output in tokens: the accuracy target's GEN_LEN counts characters (4,016,878 "
        f"over 13,368 samples, {_INFERENCE}tools/submission/submission_checker/constants.py), "
        "and the results state samples per second only"
    ),
    "gpt-oss-120b": (
        "no mean input: the output mean of the performance data set is stated, 1,278.20 tokens "
        f"over 6,396 samples ({_INFERENCE}compliance/TEST09/gpt-oss-120b/audit.config), the "
        "prompts' is not"
    ),
    "qwen3-vl-235b-a22b": (
        "no mean input or output: the README states the input length of its 20 calibration "
        f"samples only ({_INFERENCE}multimodal/qwen3-vl/README.md)"
    ),
}


def _benchmark(name: str) -> str:
    """The MLPerf benchmark or table key a data set name reads as, lower case."""
    return name.lower().replace("mlperf inference ", "").replace(" data set", "")


def _named(prefixes: dict[str, str], name: str) -> str | None:
    text = _benchmark(name)
    for prefix, value in prefixes.items():
        if text == prefix or text.startswith(prefix + "-"):
            return value
    return None


def dataset_key(name: str) -> str | None:
    """The table's key for a data set or MLPerf benchmark name; None when it has none."""
    if name in DATASETS:
        return name
    return _named(_ALIASES, name)


def unknown_lengths(name: str) -> str | None:
    """Why the table lacks a data set or MLPerf benchmark it knowingly lacks; None otherwise."""
    return _named(UNKNOWN_LENGTHS, name)


def dataset_lengths(name: str) -> DatasetLengths:
    """The mean lengths of a named data set; InputError naming the known ones otherwise."""
    key = dataset_key(name)
    if key is None:
        raise InputError(f"dataset: expected one of {', '.join(sorted(DATASETS))}, got {name!r}")
    return DATASETS[key]
