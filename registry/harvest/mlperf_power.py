"""The board power limit of an MLPerf run in the power category (MaxQ), read from its submission.

MLPerf's power submissions measure the system's energy; their systems run under limits the
submitter sets, and their result folders end `_MaxQ` (NVIDIA's `H200-SXM-141GBx8_TRT_MaxQ`).
The results table names the stock accelerator (`NVIDIA H200-SXM-141GB`) and the system
description its stock board power (`hw_notes: H200 TGP 700W`), yet NVIDIA's harness sets each
GPU's limit with `nvidia-smi -pl <power_limit>` (v4.1 `code/common/power_limit.py`) from the
configuration class of the system (`H200_SXM_141GBx8_MaxQ` in
`configs/<benchmark>/<scenario>/__init__.py`): 500 W for llama2-70b and mixtral-8x7b, 350 W for
gptj, on a 700 W part. A throughput measured so is not the part's as sold: the harvester files
the row under the catalog entry that names the part at that limit
(`GpuSourceName.power_limit_w`), and skips a MaxQ row whose limit no file read states.
"""

import re
from typing import Any

from infermeter.registry.harvest.mlperf_location import submission_root, system_folder
from infermeter.registry.harvest.mlperf_names import benchmark_family
from infermeter.registry.harvest.tree import SourceTree

_CLASS = re.compile(r"^class (\w+)\((\w+)\):\n((?:[ \t]+\S.*\n|[ \t]*\n)*)", re.M)
_POWER_LIMIT = re.compile(r"^[ \t]+power_limit\s*=\s*(\d+)\s*$", re.M)


def is_power_capped(row: dict[str, Any]) -> bool:
    """Whether the row's run is one of MLPerf's power category (its system folder ends
    `_MaxQ`)."""
    return system_folder(row).endswith("_MaxQ")


def power_config_path(row: dict[str, Any]) -> str:
    """`closed/NVIDIA/configs/gptj/Server/__init__.py`: the row's benchmark and scenario
    configurations in its submission."""
    family = benchmark_family(str(row["Model"]))
    return f"{submission_root(row)}/configs/{family}/{row['Scenario']}/__init__.py"


def _config_classes(row: dict[str, Any]) -> list[str]:
    """The configuration classes that may hold the row's system: `H200_SXM_141GBx8_MaxQ` of
    `H200-SXM-141GBx8_TRT_MaxQ`, its `_HighAccuracy_` twin first for a -99.9 benchmark."""
    system = system_folder(row).replace("_TRT", "").replace("-", "_")
    stem = system.removesuffix("_MaxQ")
    high = [f"{stem}_HighAccuracy_MaxQ"] if str(row["Model"]).endswith("-99.9") else []
    return [*high, system]


def power_limit_w(row: dict[str, Any], config: str | None) -> tuple[int, str] | None:
    """(the limit in watts, where it was read) that the row's configuration class sets, or
    that the class it derives from sets; None when none is read."""
    if config is None:
        return None
    classes = {match[1]: (match[2], match[3]) for match in _CLASS.finditer(config)}
    for name in _config_classes(row):
        seen = name
        while name in classes:
            base, body = classes[name]
            if limit := _POWER_LIMIT.search(body):
                inherited = f", which {seen} inherits" if seen != name else ""
                where = f"{power_config_path(row)}: {name} sets power_limit = {limit[1]}{inherited}"
                return int(limit[1]), where
            name = base
    return None


def read_power_limits(tree: SourceTree, rows: list[dict[str, Any]]) -> list[tuple[int, str] | None]:
    """Each power-capped row's limit and where it was read (None for the others), in one go."""
    capped = [row for row in rows if is_power_capped(row)]
    texts = tree.read_many(sorted({power_config_path(row) for row in capped}))
    return [
        power_limit_w(row, texts[power_config_path(row)]) if is_power_capped(row) else None
        for row in rows
    ]
