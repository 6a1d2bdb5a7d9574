"""`bench run`, `bench import` and `registry` options under hostile values: refused in one line,
before anything starts, never a traceback or a hang."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_helpers import check_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bench.synthetic_run import SYNTHETIC_VLLM_FILE

DEAD = "http://127.0.0.1:9"  # nothing listens: a case that got past the checks would say so
IMPORT = [
    "bench", "import", str(SYNTHETIC_VLLM_FILE), "--gpu", "h100-sxm", "--gpu-count", "1",
    "--model-id", "llama-3.1-8b-instruct", "--engine-version", "0.9.1",
    "--command", "vllm bench serve --max-concurrency 16", "--submitter", "someone",
]  # fmt: skip
ANSWER = ["registry", "answer", "--model", "llama-3.1-8b-instruct"]
BIG = "9" * 26
TOO_LONG = "a" * 300 + ".json"

# (arguments, exit code, text the one error line must hold)
NAMED = [
    (["bench", "run", "--endpoint", DEAD, "--concurrency", BIG], 2, "--concurrency"),
    (["bench", "run", "--endpoint", DEAD, "--concurrency", "9" * 5000], 2, "--concurrency"),
    (["bench", "run", "--endpoint", DEAD, "--num-requests", BIG], 2, "--num-requests"),
    (["bench", "run", "--endpoint", DEAD, "--input-len", "999999999999"], 2, "--input-len"),
    (["bench", "run", "--endpoint", DEAD, "--output-len", "uniform:1:1e300"], 2, "--output-len"),
    (["bench", "run", "--endpoint", DEAD, "--workers", "1000", "--concurrency", "4"], 2,
     "--workers"),
    (["bench", "run", "--endpoint", DEAD, "--workers", "5", "--concurrency", "1,4"], 2,
     "--workers: 5 client processes for at most 4"),
    (["bench", "run", "--model", "x", "--gpu", "h100-sxm", "--vllm-arg", "--foo 'bar"], 2,
     "--vllm-arg"),
    (["bench", "run", "--endpoint", DEAD, "--request-rate", "nan"], 2, "--request-rate"),
    (["bench", "run", "--endpoint", DEAD, "--timeout", "nan"], 2, "--timeout"),
    ([*IMPORT, "--timezone", "+99:00", "--input-len", "1024", "--output-len", "128"], 1,
     "--timezone"),
    ([*IMPORT, "--timezone", "+14:30", "--input-len", "1024", "--output-len", "128"], 1,
     "--timezone"),
    ([*IMPORT, "--timezone", "UTC", "--input-len", "0", "--output-len", "128"], 1,
     "--input-len"),
    ([*IMPORT, "--timezone", "UTC", "--input-len", "1024", "--output-len", "uniform:9:3"], 1,
     "--output-len"),
    ([*IMPORT, "--timezone", "UTC", "--input-len", "normal:nan:1", "--output-len", "1"], 1,
     "--input-len"),
    # A name longer than a file system takes (255 bytes): Path.is_dir raised its OSError.
    (["bench", "run", "--endpoint", DEAD, "--output", TOO_LONG], 2, "File name too long"),
    ([*IMPORT, "--timezone", "UTC", "--input-len", "1024", "--output-len", "128", "--output",
      TOO_LONG], 1, "--output: " + TOO_LONG[:60] + "…: cannot write: File name too long"),
    (["registry", "index", "--out", "/proc/infermeter-index"], 1, "--out: cannot write"),
    (["registry", "schemas", "--dir", "/proc/infermeter-schemas"], 1, "--dir: cannot write"),
    # NaN passed click's FloatRange: a traceback (--slo-ttft-ms), or a wrong answer read as
    # every percentile (--percentile) or no bound (inf).
    *(
        ([*ANSWER, option, value], 2, option)
        for option in ("--percentile", "--slo-ttft-ms", "--slo-tpot-ms", "--slo-e2e-ms")
        for value in ("nan", "inf")
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "code", "named"), NAMED, ids=[" ".join(a[:6])[:70] for a, _, _ in NAMED]
)
def test_fuzz_bench_named_case_is_refused_in_one_line(
    args: list[str], code: int, named: str
) -> None:
    result = check_cli(args, "bench-options", limit_s=15)
    assert result.exit_code == code, result.output
    assert named in result.stderr


def test_fuzz_bench_unwritable_index_and_schema_folders(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    for args in (
        ["registry", "index", "--out", str(plain / "index")],
        ["registry", "schemas", "--dir", str(plain)],
        ["registry", "schemas", "--dir", str(plain / "sub")],
    ):
        result = check_cli(args, "bench-options")
        assert result.exit_code in (1, 2), result.output
        assert "--out" in result.stderr or "--dir" in result.stderr
    assert plain.read_text() == "x"


def test_fuzz_bench_import_timezone_offsets_at_the_ends_are_real(tmp_path: Path) -> None:
    for zone in ("+14:00", "-12:00", "+05:45"):
        output = tmp_path / f"{zone}.json"
        result = check_cli(
            [*IMPORT, "--timezone", zone, "--input-len", "1024", "--output-len", "128",
             "--output", str(output)],
            "bench-options",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert output.is_file()


VALUES = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats().map(repr),
    st.sampled_from(["nan", "inf", "", "1,,2", "0", "-1", "uniform:5:1", "normal:1:-1",
                     "lognormal:0:0", "fixed:", ":", "1e309", "9" * 5000, "\x00", "'"]),
)  # fmt: skip
RUN_OPTIONS = ["--concurrency", "--request-rate", "--num-requests", "--warmup", "--duration",
               "--input-len", "--output-len", "--timeout", "--burstiness", "--workers",
               "--slo-ttft-ms", "--shared-prefix-tokens", "--vllm-arg"]  # fmt: skip


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(RUN_OPTIONS), VALUES), min_size=1, max_size=3))
def test_fuzz_bench_run_random_options_never_crash(pairs: list[tuple[str, str]]) -> None:
    options = [part for name, value in pairs for part in (name, value)]
    # Whatever passes the checks meets a port where nothing listens: exit 1, one line.
    result = check_cli(["bench", "run", "--endpoint", DEAD, "--quiet", *options], "bench-options")
    assert result.exit_code in (1, 2)


def test_fuzz_bench_read_only_index_folder(read_only_folder: Path) -> None:
    result = check_cli(
        ["registry", "index", "--out", str(read_only_folder / "index")], "bench-options"
    )
    assert result.exit_code == 1
    assert "--out: cannot write" in result.stderr
