"""The catalog's GPU facts as the calculators take them, by catalog id, for tests that plan on a
named GPU (`registry.catalog.gpu_traits`, the one projection the CLI, the registry and the pages
use); "" is a GPU given only by its memory."""

from infermeter.calculators.gpu_traits import UNKNOWN_GPU, GpuTraits
from infermeter.registry.catalog import gpu_traits, load_gpus


def traits(gpu_id: str) -> GpuTraits:
    """The catalog GPU `gpu_id`'s traits; UNKNOWN_GPU for ""."""
    return UNKNOWN_GPU if not gpu_id else gpu_traits(load_gpus()[gpu_id])
