"""`identity.serving.other_options`: every `vllm serve` option no identity field states, as
given, so that two runs differing in any option differ in their identity."""

from __future__ import annotations

import pytest

from infermeter.bench.result.deployment_plan import other_options


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["-O0"], "-O0"),
        (["--block-size 32", "--enforce-eager"], "--block-size 32 --enforce-eager"),
        (["vllm serve /models/x --load-format dummy -O0 --port 8000"], "-O0"),
        (["--max-model-len=4096", "-tp 2", "--enable-prefix-caching"], None),
        (["--api-key sk-1234 --host 0.0.0.0 --swap-space 4"], "--swap-space 4"),
        (["--hf-token", "hf_secret", "--seed=3"], "--seed=3"),
        ([], None),
    ],
)
def test_other_options_keeps_what_no_field_states(
    arguments: list[str], expected: str | None
) -> None:
    assert other_options(arguments) == expected
