"""The first vLLM release that serves each family newer than the oldest release a plan models: a
plan for an earlier release says that it applies that release's memory terms to a model the
release does not serve (`release_note`).

The fact is the family's recipe's `min_vllm_version` where one of vLLM 0.34.0's recipes/models
names it, else the first release whose vllm/model_executor/models/registry.py lists its
architecture. A plan keys releases by minor release, so 0.10.2 is (0, 10).
"""

from dataclasses import dataclass

from infermeter.calculators.domyn_edge import DOMYN_EDGE_TYPE
from infermeter.calculators.dory import DORY_TYPE
from infermeter.calculators.glm5_next import GLM5_NEXT_TYPE
from infermeter.calculators.inkling import INKLING_TYPE
from infermeter.calculators.minimax_m3 import MINIMAX_M3_TYPES
from infermeter.calculators.mistral_large4 import MISTRAL_LARGE4_TYPE
from infermeter.calculators.model_arch import ModelArch
from infermeter.calculators.zaya import ZAYA_TYPE

RECIPE = "its recipe's min_vllm_version"
REGISTRY = "the first release that registers it"


@dataclass(frozen=True)
class FirstRelease:
    """A family's name in the note, the first release that serves it, and what says so."""

    family: str
    release: tuple[int, int]
    source: str  # RECIPE or REGISTRY


# model_type -> its family's first release, each with where it is read.
FIRST_RELEASES: dict[str, FirstRelease] = {
    # recipes/models/MiniMaxAI/MiniMax-M3.yaml (both of its text models' types)
    **dict.fromkeys(MINIMAX_M3_TYPES, FirstRelease("MiniMax-M3", (0, 24), RECIPE)),
    # recipes/models/thinkingmachines/Inkling.yaml
    INKLING_TYPE: FirstRelease("Inkling", (0, 26), RECIPE),
    # recipes/models/reflection/Beam-1.0-501B-A23B.yaml
    "beam": FirstRelease("Beam", (0, 33), RECIPE),
    # No recipe: Lfm3ForCausalLM in 0.34.0's registry.py, not 0.33.0's.
    "lfm3": FirstRelease("LFM3", (0, 34), REGISTRY),
    # Lfm2ForCausalLM first in 0.10.2 (0.10.1 has none), Lfm2MoeForCausalLM in 0.11.1 (0.11.0
    # has none).
    "lfm2": FirstRelease("LFM2", (0, 10), REGISTRY),
    "lfm2_moe": FirstRelease("LFM2-MoE", (0, 11), REGISTRY),
    # recipes/models/mistralai/Mistral-Large-4-1T-A52B.yaml
    MISTRAL_LARGE4_TYPE: FirstRelease("Mistral Large 4", (0, 34), RECIPE),
    # DoryForCausalLM first in 0.33.0
    DORY_TYPE: FirstRelease("Dory", (0, 33), REGISTRY),
    # DomynEdgeForCausalLM first in 0.33.0
    DOMYN_EDGE_TYPE: FirstRelease("DomynEdge", (0, 33), REGISTRY),
    # ZayaForCausalLM first in 0.34.0
    ZAYA_TYPE: FirstRelease("ZAYA1", (0, 34), REGISTRY),
    # Glm5NextForCausalLM first in 0.30.0; recipes/models/zai-org/GLM-5.3-Flash.yaml says
    # min_vllm_version 0.29.0, whose registry does not list it.
    GLM5_NEXT_TYPE: FirstRelease("GLM-5-Next", (0, 30), REGISTRY),
}


def release_note(arch: ModelArch, version: tuple[int, int]) -> list[str]:
    """A note when `version` predates the first release that serves `arch`'s family
    (`FIRST_RELEASES`): the plan then applies that release's memory terms to a model it does
    not serve."""
    first = FIRST_RELEASES.get(arch.model_type)
    if first is None or version >= first.release:
        return []
    (major, minor), source = first.release, first.source
    return [
        f"{first.family} is served from vLLM {major}.{minor} ({source}); "
        f"this plan applies {version[0]}.{version[1]}'s memory terms to it"
    ]
