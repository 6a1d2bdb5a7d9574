"""Hyper-connections: `streams` copies of the residual stream instead of one. Before each
sub-block (attention, MLP) a float32 projection of the flattened streams (streams x hidden
inputs) gives the gates that mix them into the sub-block's input and spread its output back,
with a bias per gate and a few scales; a head merges the streams into one before the final norm.

The families differ in the gates one boundary computes (vLLM's modules, replicated on every
tensor-parallel rank, all float32):
- DeepSeek-V4's manifold-constrained hyper-connections (`vllm/models/deepseek_v4`): a pre and a
  post gate per stream and a streams x streams mixing matrix, (2 + streams) x streams gates,
  3 scales;
- HY-V4's independent hyper-connections (`vllm/models/hy_v4/nvidia/hc.py`, `HYV4HCPreLayer`):
  a pre and a post gate per stream, no mixing matrix, 2 scales.
Both heads (`hc_head_fn`): one gate per stream, its bias and one scale. GLM-5-Next
(`vllm/models/glm5next/common/model.py`) has DeepSeek-V4's boundaries and no head.
Qwen4-Exp's gated residual (`vllm/models/qwen4_exp/nvidia/hyperconnection.py`, `GatedResidual`)
is low-rank and in the model dtype, never quantized: a per-stream RMSNorm weight (streams x
hidden), the streams x hidden -> `low_rank` down-projection merged with the streams x hidden ->
streams injection (rows padded to a multiple of 16), and the `low_rank` -> streams x hidden
up-projection; its final mixer has no injection.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class HyperConnections:
    """The hyper-connections of a model: `streams` residual copies, `gates` outputs of each
    boundary's projection, `scales` scalars of each boundary, two boundaries a layer."""

    streams: int
    gates: int
    scales: int
    # Qwen4-Exp's low-rank gated residual: the rank of its mixing (0: the float32 gates).
    low_rank: int = 0
    # False: no learned head; the streams are summed (GLM-5-Next's hc_contract).
    head: bool = True

    @property
    def float32(self) -> bool:
        """Whether the parameters are float32 (else the model dtype, unquantized)."""
        return not self.low_rank

    def boundary_params(self, hidden: int) -> int:
        """Parameters of one boundary: the projection, a bias per gate, the scales; or the
        gated residual's norm, padded down-projection and injection, and up-projection."""
        width = self.streams * hidden
        if self.low_rank:
            rows = -(-(self.low_rank + self.streams) // 16) * 16
            return width + width * rows + self.low_rank * width
        return self.gates * width + self.gates + self.scales

    def layer_params(self, hidden: int) -> int:
        """Parameters of one decoder layer's two boundaries (attention and MLP)."""
        return 2 * self.boundary_params(hidden)

    def head_params(self, hidden: int) -> int:
        """Parameters of the head that merges the streams: a gate per stream from the
        flattened streams, a bias per stream, one scale; or the gated residual's mixer (norm,
        down- and up-projection, no injection)."""
        width = self.streams * hidden
        if not self.head:
            return 0
        if self.low_rank:
            return width + 2 * width * self.low_rank
        return self.streams * width + self.streams + 1


def manifold_constrained(streams: int, head: bool = True) -> HyperConnections:
    """DeepSeek-V4's: (2 + streams) x streams gates and 3 scales a boundary; GLM-5-Next's the
    same without a head (`head` False)."""
    return HyperConnections(streams, (2 + streams) * streams, 3, head=head)


def independent(streams: int) -> HyperConnections:
    """HY-V4's iHC: a pre and a post gate per stream and 2 scales a boundary."""
    return HyperConnections(streams, 2 * streams, 2)


def gated_residual(streams: int, low_rank: int) -> HyperConnections:
    """Qwen4-Exp's low-rank gated residual, in the model dtype."""
    return HyperConnections(streams, 0, 0, low_rank)
