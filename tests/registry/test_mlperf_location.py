"""Where an MLPerf row's run lies: the folders read from its `Location`."""

from collections.abc import Callable
from typing import Any

import pytest

from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.harvest.mlperf_location import system_folder
from infermeter.registry.harvest.mlperf_power import is_power_capped
from infermeter.registry.harvest.mlperf_setup import system_description_path


@pytest.mark.parametrize(
    ("location", "folder"),
    [
        (
            "./closed/NVIDIA/results/H200-SXM-141GBx8_TRT_MaxQ/llama2-70b-99.9/Server/",
            "H200-SXM-141GBx8_TRT_MaxQ",
        ),
        ("closed/Naeem Khoshnevis/results/H200x1/llama3.1-8b/Offline/performance/run_1", "H200x1"),
    ],
)
def test_system_folder_of_a_row(location: str, folder: str) -> None:
    assert system_folder({"Location": location}) == folder


@pytest.mark.parametrize(
    "location",
    [
        "closed/NVIDIA",
        "closed/NVIDIA/results",
        "./closed/NVIDIA/results//gptj",
        "closed/NVIDIA/systems/X",
    ],
)
@pytest.mark.parametrize("reader", [system_folder, is_power_capped, system_description_path])
def test_every_reader_of_the_system_folder_refuses_a_location_without_one(
    location: str, reader: Callable[[dict[str, Any]], object]
) -> None:
    with pytest.raises(HarvestError, match="expected <division>/<submitter>/results/<system>/"):
        reader({"Location": location, "Model": "llama2-70b-99.9"})
