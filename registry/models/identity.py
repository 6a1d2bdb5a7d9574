"""Identity: what makes two runs comparable (hardware, engine, model, settings, workload)."""

from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from infermeter.calculators.kv_cache import KvCacheDtype
from infermeter.registry.models.common import (
    CPU_DEVICE_ID,
    DeviceFormFactor,
    Fraction,
    HfRepo,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Seed,
    Sha256Hex,
    Slug,
    StrictModel,
    Text,
)

__all__ = [
    "DatasetLength",
    "Disaggregation",
    "EngineIdentity",
    "FixedLength",
    "GpuIdentity",
    "Identity",
    "ModelIdentity",
    "NormalLength",
    "ServingSettings",
    "SpeculativeDecoding",
    "UniformLength",
    "Workload",
]


class GpuIdentity(StrictModel):
    """The GPUs that served the model."""

    id: Slug = Field(
        description="GPU id in the GPU catalog (registry/catalogs/gpus.yaml), or `cpu` for a "
        "run without a GPU (the engine served on the host's CPU; kept out of GPU comparisons)."
    )
    count: PositiveInt = Field(
        description="Number of GPUs that served the model (1 for a run on the CPU)."
    )
    form_factor: DeviceFormFactor = Field(
        description="Board form factor of the GPUs; `cpu` exactly when `id` is `cpu`."
    )
    nodes: PositiveInt | None = Field(
        None,
        description="Hosts the GPUs were spread over (e.g. vLLM over a Ray cluster); null if "
        "not stated.",
    )
    gpus_per_node: PositiveInt | None = Field(
        None,
        description="GPUs used on each of the `nodes` hosts; null if not stated.",
    )

    @model_validator(mode="after")
    def _cpu_is_cpu(self) -> Self:
        if (self.id == CPU_DEVICE_ID) != (self.form_factor == CPU_DEVICE_ID):
            raise ValueError(
                f"id {self.id!r} with form_factor {self.form_factor!r}: a run on the CPU has "
                f"both {CPU_DEVICE_ID!r}, a GPU neither"
            )
        return self


class EngineIdentity(StrictModel):
    """The inference engine."""

    name: Slug = Field(description="Engine name, e.g. `vllm`.")
    version: Text = Field(description="Engine version as the engine reports it, e.g. `0.8.5`.")


Dtype = Literal["bfloat16", "float16", "float32"]


class ModelIdentity(StrictModel):
    """The model served, with its numeric formats."""

    id: Slug = Field(description="Model id in the model catalog (registry/catalogs/models.yaml).")
    hf_repo: HfRepo = Field(description="Hugging Face repository the weights came from.")
    revision: Text | None = Field(
        None,
        description="Repository revision (commit hash or tag) of the weights; null if unknown.",
    )
    quantization: Annotated[str, Field(pattern=r"^[a-z0-9_-]+$", max_length=50)] | None = Field(
        None,
        description="Weight quantization method as vLLM names it (`fp8`, `awq`, `gptq`, …); "
        "null for unquantized weights.",
    )
    dtype: Dtype | None = Field(
        None,
        description="Activation and unquantized-weight dtype; null if the source does not say.",
    )
    kv_cache_dtype: KvCacheDtype | None = Field(
        None,
        description="KV cache dtype as vLLM's `--kv-cache-dtype` (`auto` = same as dtype); "
        "null if the source does not say.",
    )


class SpeculativeDecoding(StrictModel):
    """Draft tokens proposed and verified per step, as the source names the method."""

    method: Text = Field(description="The method as the source names it, e.g. `MTP`, `EAGLE3`.")
    draft_tokens: PositiveInt | None = Field(
        None, description="Tokens proposed per step; null if not stated."
    )
    draft_model: Text | None = Field(
        None, description="The draft model, if a separate one; null if none or not stated."
    )


class Disaggregation(StrictModel):
    """Prefill and decode served by separate GPU pools (each count as the source states it)."""

    prefill_gpus: PositiveInt | None = Field(None, description="GPUs serving prefill, in all.")
    decode_gpus: PositiveInt | None = Field(None, description="GPUs serving decode, in all.")
    prefill_workers: PositiveInt | None = Field(
        None, description="Prefill engine instances; null if not stated."
    )
    decode_workers: PositiveInt | None = Field(
        None, description="Decode engine instances; null if not stated."
    )


class ServingSettings(StrictModel):
    """Engine settings that change performance; vLLM option names. Null where not stated."""

    tensor_parallel_size: PositiveInt | None = Field(
        None, description="`--tensor-parallel-size`: GPUs one model replica is split over."
    )
    pipeline_parallel_size: PositiveInt | None = Field(
        None, description="`--pipeline-parallel-size`: pipeline stages of one replica."
    )
    data_parallel_size: PositiveInt | None = Field(
        None,
        description="`--data-parallel-size`: model replicas served behind one endpoint; the GPU "
        "count is tensor × pipeline × data parallel sizes.",
    )
    max_model_len: PositiveInt | None = Field(
        None, description="`--max-model-len`: longest sequence (prompt + output) in tokens."
    )
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)] | None = Field(
        None, description="`--gpu-memory-utilization`: fraction of GPU memory vLLM may use."
    )
    max_num_seqs: PositiveInt | None = Field(
        None, description="`--max-num-seqs`: most sequences in one batch."
    )
    max_num_batched_tokens: PositiveInt | None = Field(
        None, description="`--max-num-batched-tokens`: most tokens in one scheduler step."
    )
    enable_prefix_caching: bool | None = Field(
        None, description="Whether automatic prefix caching was on."
    )
    enable_chunked_prefill: bool | None = Field(None, description="Whether chunked prefill was on.")
    load_format: Text | None = Field(
        None,
        description="`--load-format`: how vLLM loaded the weights; `dummy` means random weights "
        "(a smoke test: the speed of the architecture, not the model's real output).",
    )
    other_options: Text | None = Field(
        None,
        description="Every other `vllm serve` option of the command, as given and in its "
        "order (e.g. `-O0 --block-size 32`): those no field above states, less where it "
        "listens and its secrets; null when there are none or the source does not say.",
    )
    expert_parallel_size: PositiveInt | None = Field(
        None, description="GPUs the experts of an MoE model are spread over; null if not stated."
    )
    speculative: SpeculativeDecoding | None = Field(
        None, description="Speculative decoding, as the source states it; null if none stated."
    )
    disaggregated: Disaggregation | None = Field(
        None,
        description="Prefill and decode on separate GPUs (disaggregated serving); null when "
        "they share GPUs or the source does not say.",
    )


class FixedLength(StrictModel):
    """Every request has the same length."""

    kind: Literal["fixed"] = Field(description="Distribution kind.")
    value: NonNegativeInt = Field(description="Length in tokens.")


class UniformLength(StrictModel):
    """A range: lengths drawn uniformly from [min, max] (e.g. InferenceX's [0.8·L, L])."""

    kind: Literal["uniform"] = Field(description="Distribution kind.")
    min: NonNegativeInt = Field(description="Smallest length in tokens.")
    max: NonNegativeInt = Field(description="Largest length in tokens.")

    @model_validator(mode="after")
    def _min_not_above_max(self) -> Self:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


class NormalLength(StrictModel):
    """Lengths drawn from a normal (`normal`) or log-normal (`lognormal`) distribution."""

    kind: Literal["normal", "lognormal"] = Field(description="Distribution kind.")
    mean: NonNegativeFloat = Field(description="Mean length in tokens.")
    stddev: NonNegativeFloat = Field(description="Standard deviation of the length in tokens.")
    min: NonNegativeInt | None = Field(None, description="Lengths below are clipped to this.")
    max: NonNegativeInt | None = Field(None, description="Lengths above are clipped to this.")


class DatasetLength(StrictModel):
    """Lengths as they come in the dataset named by the workload (e.g. MLPerf's OpenOrca set)."""

    kind: Literal["dataset"] = Field(description="Distribution kind.")
    mean: NonNegativeFloat | None = Field(
        None, description="Mean length in tokens as the source states it; null if not stated."
    )
    max: NonNegativeInt | None = Field(
        None, description="Lengths above are truncated to this; null if not truncated."
    )


LengthDistribution = Annotated[
    FixedLength | UniformLength | NormalLength | DatasetLength, Field(discriminator="kind")
]


class TraceWorkload(StrictModel):
    """A replayed request trace (`bench run --trace`): which file, how much of it, how fast.
    Two replays are one workload only when all of these agree."""

    name: Text = Field(description="The trace's name (its header's, else its file name).")
    sha256: Sha256Hex = Field(
        description="SHA-256 (hex) of the trace file as read (compressed bytes for a gzip file)."
    )
    format: Literal["mooncake", "infermeter", "aiperf_dag"] = Field(
        description="The trace's format: Mooncake's JSONL (FAST'25, as AIPerf reads it), "
        "infermeter's own (the same lines after a header that states the block size), or "
        "AIPerf's Conversation DAG (`dag_jsonl`: conversations with forks and subagents)."
    )
    block_size: PositiveInt | None = Field(
        None,
        description="Tokens per block ID (`hash_ids`): requests sharing a leading ID share "
        "that block of prompt; null for a DAG, whose prompts are its text.",
    )
    requests: PositiveInt = Field(description="Requests replayed.")
    requests_in_file: PositiveInt = Field(description="Requests the whole trace holds.")
    cut: Text | None = Field(
        None, description="Where the replay stopped short of the file's end; null if it did not."
    )
    speed: PositiveFloat | None = Field(
        None,
        description="Arrivals as recorded, sped up by this factor (2: twice as fast); null "
        "when the trace was re-timed at `rate`.",
    )
    rate: PositiveFloat | None = Field(
        None,
        description="Arrivals re-timed as a Poisson process at this many requests/s; null when "
        "the trace's own arrivals were kept.",
    )
    concurrency: PositiveInt | None = Field(
        None,
        description="A DAG's roots run this many at once (a DAG records no arrival times); "
        "null otherwise.",
    )
    prefix_reuse_max: Fraction | None = Field(
        None,
        description="The trace's theoretical prefix-cache hit rate: the share of replayed input "
        "tokens in leading blocks whose IDs all came earlier; null without block IDs.",
    )

    @model_validator(mode="after")
    def _speed_or_rate(self) -> Self:
        if [self.speed, self.rate, self.concurrency].count(None) != 2:
            raise ValueError("give exactly one of speed, rate and concurrency")
        if self.requests > self.requests_in_file:
            raise ValueError("more requests replayed than the file holds")
        return self


class Workload(StrictModel):
    """The traffic: what requests look like (how many are in flight is the load point's `load`)."""

    profile: Literal["chat", "rag", "batch", "chat-multiturn", "custom"] = Field(
        description="infermeter traffic profile, or `custom` for anything else. "
        "`chat-multiturn`: sessions of several turns, each sending the whole chat so far; "
        "`input_len` is then each new user message and `output_len` each reply."
    )
    input_len: LengthDistribution = Field(description="Prompt length distribution in tokens.")
    output_len: LengthDistribution = Field(description="Output length distribution in tokens.")
    dataset: Text | None = Field(
        None, description="Dataset the prompts came from (e.g. `sharegpt`); null for random tokens."
    )
    dataset_sha256: Sha256Hex | None = Field(
        None,
        description="SHA-256 (hex) of the dataset file the prompts came from, so that two files "
        "of one name never count as one workload; null when no file's hash was recorded.",
    )
    seed: Seed | None = Field(None, description="Random seed of the request generator.")
    api: Literal["completions", "chat"] | None = Field(
        None,
        description="OpenAI-compatible endpoint used: `/v1/completions` or `/v1/chat/completions`.",
    )
    accuracy_target: Text | None = Field(
        None,
        description="The output quality a run had to reach to count, as the source states it "
        "(e.g. MLPerf's `99.9 % of the reference`); null if none.",
    )
    ignore_eos: bool | None = Field(
        None,
        description="Whether generation ignored the end-of-sequence token (so every request "
        "produced its full output length); null if not stated.",
    )
    turns: LengthDistribution | None = Field(
        None,
        description="Multi-turn sessions: turns per session; each turn sends every earlier user "
        "message and the reply the server gave to it, then the new message. Null: one request "
        "per prompt.",
    )
    think_time_s: NonNegativeFloat | None = Field(
        None,
        description="Multi-turn sessions: mean pause (exponential) between a reply and the "
        "user's next message, seconds.",
    )
    trace: TraceWorkload | None = Field(
        None,
        description="A replayed request trace; its identity, not the lengths, groups it with "
        "other runs. Null: requests synthesised from the lengths or a dataset.",
    )


class Identity(StrictModel):
    """What makes two runs comparable; see COMPARABLE_PROPERTIES for the exact list."""

    gpu: GpuIdentity = Field(description="The GPUs.")
    engine: EngineIdentity = Field(description="The inference engine.")
    model: ModelIdentity = Field(description="The model and its numeric formats.")
    serving: ServingSettings = Field(description="Engine settings.")
    workload: Workload = Field(description="The shape of the requests.")
