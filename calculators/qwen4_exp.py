"""Qwen4-Exp (`model_type` qwen4_exp_text, the text_config of the qwen4_exp wrapper) as vLLM
0.29.0 and 0.34.0 serve it (`vllm/models/qwen4_exp/nvidia`): Qwen3-Next's hybrid of Gated
DeltaNet and gated full attention with a shared-expert MoE (read as the qwen3_next family),
plus what this module counts:
- hyper-connections over `hc_count` streams: Qwen4-Exp's low-rank gated residual
  (`calculators.hyper_connections.gated_residual`), around each sub-block and as the final mixer;
- QSA (`qsa.py`, `qsa_indexer.py`) on the attention layers when `indexer_n_heads` is set: a
  replicated `index_qk_proj` hidden -> (indexer_n_heads + indexer_kv_heads) x indexer_head_dim,
  two RMSNorms of indexer_head_dim; its caches beside the layer's own KV: one bfloat16 key of
  indexer_head_dim per `indexer_compress_ratio` tokens (`QSACompressedKeyCache`, an
  MLAAttentionSpec with tokens_per_state; `--attention-config indexer_kv_dtype` fp8 halves it,
  not read here) and a ring of the last compress_ratio (+ speculative) raw keys
  (`QSARawKeyCache`, a CircularBufferSpec: a few hundred bytes a request, not counted);
- per-layer embeddings (PLE, `ple_layer.py`, `ngram_embedding.py`) on the 1-based
  `ple_layer_ids`: a hashed n-gram table of (ngram_size - 1) x heads_per_ngram heads, each head
  the next prime above `ngram_vocab_size_base`, rows summed and padded to
  `make_ngram_vocab_size_divisible_by`, of ple_embed_dim / heads columns, split by rows over
  the tensor-parallel ranks (the expert-TP group, TP by default; on the GPU unless
  `--engram-config` offloads it); a replicated kv_proj ple_embed_dim -> hc_count x hidden +
  hidden, three grouped norms and a depthwise convolution of hc_count x hidden channels; and a
  short-convolution state per sequence ((ple_conv_kernel_size - 1) x ngram_size rows of
  hc_count x hidden, replicated), planned as one more state layer with the Gated DeltaNet's page
  (vLLM gives every Mamba spec the largest page).
Between 0.29.0 and 0.34.0: 0.34 makes every layer MoE (0.29 followed Qwen3-Next's
`mlp_only_layers` / `decoder_sparse_step`, which the reader applies as before), names the QSA
layers "qwen_sparse_attention" or "indexed_attention" (0.29: "full_attention"), and may store
the PLE table in fp8 or NVFP4 (`ple_embedding_dtype`, refused here by name: not modelled).
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infermeter.calculators.config_fields import int_field, optional_int
from infermeter.calculators.errors import ConfigError
from infermeter.calculators.hyper_connections import gated_residual

# Qwen4ExpTextConfig's defaults (vLLM 0.29.0's vllm/models/qwen4_exp/config.py).
QWEN4_EXP_DEFAULTS: dict[str, Any] = {
    "hc_count": 4, "hc_lowrank": 320, "ple_conv_kernel_size": 4, "ngram_size": 3,
    "heads_per_ngram": 8, "ngram_vocab_size_base": 20_000_000,
    "make_ngram_vocab_size_divisible_by": 128,
}  # fmt: skip
QWEN4_EXP_NOTE = (
    "Qwen4-Exp: Qwen3-Next's hybrid with low-rank hyper-connections (model dtype), QSA's "
    "compressed bfloat16 indexer keys planned as bytes beside each full-attention block (the "
    "raw-key ring buffer and vLLM's page-size unification of these caches are not modelled), "
    "the PLE n-gram tables on the GPU split by rows over the ranks, and the PLE "
    "short-convolution state as one more state layer; the activation peak and CUDA graphs as "
    "for Qwen3-Next (the hc_count streams' activations are not read)"
)
_WITNESSES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)  # exact below 3.3e24


def _is_prime(value: int) -> bool:
    """Deterministic Miller-Rabin, as `_is_prime_64` decides for 64-bit values."""
    if value < 2:
        return False
    for small in _WITNESSES:
        if value % small == 0:
            return value == small
    odd, twos = value - 1, 0
    while odd % 2 == 0:
        odd, twos = odd // 2, twos + 1
    for witness in _WITNESSES:
        x = pow(witness, odd, value)
        if x in (1, value - 1):
            continue
        for _ in range(twos - 1):
            x = x * x % value
            if x == value - 1:
                break
        else:
            return False
    return True


def _primes_after(start: int, count: int) -> list[int]:
    """The first `count` primes strictly greater than `start`."""
    primes: list[int] = []
    candidate = start + 1
    while len(primes) < count:
        if _is_prime(candidate):
            primes.append(candidate)
        candidate += 1
    return primes


def ple_table_rows(config: Mapping[str, Any], layers: int, where: str = "") -> list[int]:
    """Rows of each PLE layer's n-gram table (`_make_vocab_layout`, padded): layer k's heads
    are the primes k x heads + 1 ... (k + 1) x heads after ngram_vocab_size_base - 1."""
    heads = (int_field(config, "ngram_size", where) - 1) * int_field(
        config, "heads_per_ngram", where
    )
    base = int_field(config, "ngram_vocab_size_base", where)
    divisor = int_field(config, "make_ngram_vocab_size_divisible_by", where)
    if heads <= 0 or base <= 0 or divisor <= 0:
        raise ConfigError(
            f"{where}ngram_size/heads_per_ngram/ngram_vocab_size_base: expected positive n-gram "
            "heads, base and divisor"
        )
    primes = _primes_after(base - 1, heads * layers)
    return [
        math.ceil(sum(primes[k * heads : (k + 1) * heads]) / divisor) * divisor
        for k in range(layers)
    ]


@dataclass(frozen=True)
class Qwen4ExpParts:
    """What Qwen4-Exp adds to Qwen3-Next's layers: the PLE layers and the QSA indexers."""

    hidden: int
    streams: int
    ple_rows: tuple[int, ...]
    ple_embed_dim: int
    ple_head_dim: int
    ple_conv_kernel: int
    qsa_layers: int
    indexer_heads: int  # query and key heads of index_qk_proj
    indexer_head_dim: int
    compress_ratio: int

    def model_params(self, tp: int) -> tuple[int, int, int, int]:
        """(PLE tables, QSA linear, PLE linear, small) on one of `tp` ranks."""
        width = self.streams * self.hidden
        tables = sum(-(-rows // tp) * self.ple_head_dim for rows in self.ple_rows)
        ple_linear = len(self.ple_rows) * self.ple_embed_dim * (width + self.hidden)
        small = len(self.ple_rows) * (3 * width + width * self.ple_conv_kernel)
        qsa_linear = self.qsa_layers * self.hidden * self.indexer_heads * self.indexer_head_dim
        small += self.qsa_layers * 2 * self.indexer_head_dim
        return tables, qsa_linear, ple_linear, small

    @property
    def extra_bytes_per_token(self) -> int:
        """The QSA layers' compressed bfloat16 keys, bytes per token."""
        if not self.qsa_layers:
            return 0
        return math.ceil(self.qsa_layers * self.indexer_head_dim * 2 / self.compress_ratio)


def _ple_layers(config: Mapping[str, Any], num_layers: int, where: str) -> list[int]:
    ids = config.get("ple_layer_ids") or []
    if not isinstance(ids, list) or not all(
        isinstance(i, int) and 1 <= i <= num_layers for i in ids
    ):
        raise ConfigError(
            f"{where}ple_layer_ids: expected 1-based layer numbers from 1 to {num_layers}, "
            f"got {ids!r}"
        )
    return sorted(set(ids))


def qwen4_exp_fields(
    config: Mapping[str, Any], kinds: tuple[str, ...], where: str = ""
) -> dict[str, Any]:
    """`ModelArch` fields of a qwen4_exp_text config beyond Qwen3-Next's layers; `kinds`: the
    layer kinds (the full-attention ones are QSA layers when indexer_n_heads is set)."""
    hidden = int_field(config, "hidden_size", where)
    streams = int_field(config, "hc_count", where)
    if streams < 2:
        raise ConfigError(f"{where}hc_count: Qwen4-Exp requires hc_count > 1, got {streams}")
    if config.get("ple_embedding_dtype") is not None:
        raise ConfigError(
            f"{where}ple_embedding_dtype: the PLE table's fp8/NVFP4 storage is not modelled; "
            "expected it unset (the model dtype)"
        )
    ple = _ple_layers(config, len(kinds), where)
    embed_dim = optional_int(config, "ple_embed_dim", where, 0) or hidden
    heads = (int_field(config, "ngram_size", where) - 1) * int_field(
        config, "heads_per_ngram", where
    )
    if heads == 0:
        raise ConfigError(
            f"{where}heads_per_ngram: (ngram_size - 1) x heads_per_ngram n-gram heads is 0; "
            "expected heads > 0"
        )
    if ple and embed_dim % heads:
        raise ConfigError(
            f"{where}ple_embed_dim: {embed_dim} is not divisible by the {heads} n-gram heads"
        )
    qsa = config.get("indexer_n_heads") is not None
    parts = Qwen4ExpParts(
        hidden=hidden,
        streams=streams,
        ple_rows=tuple(ple_table_rows(config, len(ple), where)) if ple else (),
        ple_embed_dim=embed_dim,
        ple_head_dim=embed_dim // heads,
        ple_conv_kernel=int_field(config, "ple_conv_kernel_size", where),
        qsa_layers=kinds.count("full") if qsa else 0,
        indexer_heads=(
            int_field(config, "indexer_n_heads", where)
            + int_field(config, "indexer_kv_heads", where)
            if qsa
            else 0
        ),
        indexer_head_dim=int_field(config, "indexer_head_dim", where) if qsa else 0,
        compress_ratio=int_field(config, "indexer_compress_ratio", where) if qsa else 1,
    )
    if parts.compress_ratio <= 0:
        raise ConfigError(f"{where}indexer_compress_ratio: expected an integer > 0")
    low_rank = int_field(config, "hc_lowrank", where)
    return {"qwen4_exp": parts, "hyper_connections": gated_residual(streams, low_rank)}
