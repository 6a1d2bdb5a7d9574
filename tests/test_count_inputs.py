"""A count the calculators divide or loop by is refused below 1 in one way, naming the input
(`calculators.limits.at_least_one`), whichever function a library caller reaches first."""

from collections.abc import Callable

import pytest

from infermeter.calculators.config_reader import parse_config
from infermeter.calculators.errors import InputError
from infermeter.calculators.interconnect import decode_step_traffic
from infermeter.calculators.kv_cache import kv_cache_shape
from infermeter.calculators.limits import above_zero, at_least_one
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.parallel import ParallelLayout
from infermeter.calculators.vllm_settings import VllmSettings, check_settings
from infermeter.registry.catalog import load_models

ARCH: ModelArch = parse_config(load_models()["llama-3.1-8b-instruct"].config)
GIB = 1024**3


def _settings(**given: int) -> Callable[[], object]:
    return lambda: check_settings(VllmSettings(gpu_memory_bytes=80 * GIB, **given))


CASES = [
    ("tensor_parallel_size", lambda: kv_cache_shape(ARCH, tensor_parallel_size=0)),
    ("batch", lambda: decode_step_traffic(ARCH, ParallelLayout(), 0, 2)),
    (
        "pipeline_parallel_size",
        lambda: decode_step_traffic(ARCH, ParallelLayout(pipeline_parallel_size=0), 1, 2),
    ),
    ("data_parallel_size", _settings(data_parallel_size=0)),
    ("max_num_seqs", _settings(max_num_seqs=0)),
]


@pytest.mark.parametrize(("name", "call"), CASES, ids=[name for name, _ in CASES])
def test_a_count_below_one_is_refused_naming_it(name: str, call: Callable[[], object]) -> None:
    with pytest.raises(InputError) as refused:
        call()
    assert str(refused.value) == f"{name}: expected an integer >= 1, got 0"


def test_the_checks_pass_what_they_allow_and_refuse_nan() -> None:
    assert at_least_one("batch", 1) == 1
    assert above_zero("memory_bandwidth_bytes_per_s", 0.5) == 0.5
    with pytest.raises(InputError, match=r"^memory_bandwidth_bytes_per_s: expected a number > 0"):
        above_zero("memory_bandwidth_bytes_per_s", float("nan"))
