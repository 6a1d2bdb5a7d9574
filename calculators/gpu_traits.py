"""The facts of a GPU that change what vLLM sets up on it, as the GPU catalog states them.

The calculators read no catalog: `registry.catalog.gpu_traits` projects a catalog entry into
`GpuTraits`, and the pages receive the same projection in `assets/catalog.json` (`as_dict`,
read back with `from_dict`). A GPU given only by its memory has the defaults: no known compute
capability, no NVLink SHARP, a vendor nobody named.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The most GPUs one server's NVLink joins (an HGX baseboard): a larger NVLink domain (an NVL72
# rack) spans servers, which is multi-node NVLink.
SERVER_NVLINK_GPUS = 8


@dataclass(frozen=True)
class GpuTraits:
    """One GPU's facts as the memory plan reads them (see the module docstring)."""

    name: str = ""  # as marketed; vLLM's batch defaults look for "a100" in the device's name
    vendor: str = ""  # nvidia, amd; "" when not known
    compute_capability: tuple[int, int] | None = None  # NVIDIA's (major, minor); None: unknown
    nvlink_sharp: bool = False  # an NVSwitch fabric with NVLink SHARP (NCCL's NVLS)
    nvlink_domain_gpus: int = 1  # the most GPUs the GPU's NVLink joins

    @property
    def capability_major(self) -> int | None:
        """The compute capability's major (10 for sm_100 and sm_103); None when unknown."""
        return None if self.compute_capability is None else self.compute_capability[0]

    @property
    def rocm(self) -> bool:
        """Whether vLLM runs on ROCm here: an AMD Instinct GPU."""
        return self.vendor == "amd"

    @property
    def multi_node_nvlink(self) -> bool:
        """Whether the NVLink domain spans servers (a GB200/GB300 NVL72 rack)."""
        return self.nvlink_domain_gpus > SERVER_NVLINK_GPUS

    def as_dict(self) -> dict[str, Any]:
        """The traits as JSON-ready data (`from_dict` reads them back)."""
        capability = self.compute_capability
        return {
            "name": self.name,
            "vendor": self.vendor,
            "compute_capability": None if capability is None else list(capability),
            "nvlink_sharp": self.nvlink_sharp,
            "nvlink_domain_gpus": self.nvlink_domain_gpus,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "GpuTraits":
        """The traits `as_dict` wrote."""
        capability = data["compute_capability"]
        return cls(
            name=data["name"],
            vendor=data["vendor"],
            compute_capability=None if capability is None else (capability[0], capability[1]),
            nvlink_sharp=data["nvlink_sharp"],
            nvlink_domain_gpus=data["nvlink_domain_gpus"],
        )


# A GPU given only by its memory (`calc vram --gpu-memory-gib`, a log's GPU the catalog lacks).
UNKNOWN_GPU = GpuTraits()
