"""Provenance: who or what produced a result's numbers, and how to check them."""

from typing import Annotated, Literal

from pydantic import Field, model_validator

from infermeter.registry.models.common import (
    DeviceFormFactor,
    DocumentTitle,
    FullDate,
    LongText,
    NonNegativeInt,
    PartialDate,
    PositiveInt,
    Slug,
    StrictModel,
    Text,
    Timestamp,
    Url,
)

__all__ = ["GUIDELLM_TOOL", "Host", "MeasuredSource", "MlperfEntry", "ReportedSource", "Tool"]

GUIDELLM_TOOL = "guidellm"
"""GuideLLM's `source.tool.name` (`bench import` of its report). Its measured window
(`duration_s`) is the span between its warmup and cooldown, which a request it counts may
cross, so the checks that a point's requests lie inside their window skip its points."""


class Tool(StrictModel):
    """The benchmark tool that measured."""

    name: Slug = Field(description="Tool name, e.g. `infermeter`.")
    version: Text = Field(description="Tool version.")
    commit: Annotated[str, Field(pattern=r"^[0-9a-f]{7,40}$")] | None = Field(
        None, description="Git commit of the tool, if run from a checkout."
    )


# What both hosts of a run (the engine's and the client's) state of their machine.
CpuModel = Annotated[Text | None, Field(description="CPU model.")]
HostMemoryBytes = Annotated[NonNegativeInt | None, Field(description="Host memory, bytes.")]
OperatingSystem = Annotated[Text | None, Field(description="Operating system and kernel.")]


class Host(StrictModel):
    """Fingerprint of the machine that ran the engine."""

    gpu_sku: Text = Field(description="GPU name as the driver reports it.")
    gpu_count: PositiveInt = Field(description="GPUs visible on the host.")
    form_factor: DeviceFormFactor | None = Field(None, description="GPU form factor, if known.")
    driver: Text | None = Field(None, description="NVIDIA/AMD driver version.")
    cuda: Text | None = Field(None, description="CUDA (or ROCm) version.")
    cpu: CpuModel = None
    ram_bytes: HostMemoryBytes = None
    os: OperatingSystem = None
    vllm_version: Text | None = Field(None, description="Installed vLLM version.")
    torch_version: Text | None = Field(None, description="Installed PyTorch version.")
    telemetry_gpu_indices: list[NonNegativeInt] | None = Field(
        None,
        description="NVML indices (as nvidia-smi numbers them) of the GPUs whose readings the "
        "points' GPU telemetry covers; null when no GPU was read.",
    )


class ClientHost(StrictModel):
    """The machine that ran the benchmark client (the load generator)."""

    cpu: CpuModel = None
    ram_bytes: HostMemoryBytes = None
    os: OperatingSystem = None
    python_version: Text | None = Field(None, description="Python version of the client.")


class ServerReport(StrictModel):
    """What the engine said about itself over HTTP (a server the tool did not launch)."""

    engine: Slug = Field(description="Engine the server identified as, e.g. `sglang`.")
    version: Text | None = Field(None, description="Version the server reported.")
    served_model: Text | None = Field(None, description="Model name the server answers to.")
    model_source: Text | None = Field(
        None, description="Weights the server says it loaded: a repository or a path."
    )
    max_model_len: PositiveInt | None = Field(
        None, description="Longest sequence the server accepts, tokens, as it reports."
    )
    read_from: list[Text] = Field(
        default_factory=list, description="The server's endpoints these facts were read from."
    )


class MeasuredSource(StrictModel):
    """Measured by a benchmark tool on the host described."""

    kind: Literal["measured"] = Field(description="Provenance kind.")
    tool: Tool = Field(description="The tool that measured.")
    command: LongText = Field(description="The exact command line that produced this file.")
    server_command: LongText | None = Field(
        None, description="The exact command line that started the engine, if the tool started it."
    )
    host: Host = Field(description="The host that ran the engine.")
    client: ClientHost | None = Field(
        None, description="The host that ran the benchmark client, which may differ."
    )
    server: ServerReport | None = Field(
        None, description="What the engine reported about itself, when the tool did not launch it."
    )
    started_at: Timestamp = Field(description="When the run started (RFC 3339 with a time zone).")
    finished_at: Timestamp = Field(description="When the run ended (RFC 3339 with a time zone).")
    submitter: Text = Field(description="Who submitted the result (GitHub user name).")
    complete: bool = Field(
        description="False when the run stopped before every planned load point was measured."
    )


MLPERF_RESULT_ID_PATTERN = r"^v?[0-9]+\.[0-9]+-[0-9]{4}$"
MLPERF_RUN_PATH_PATTERN = r"^(closed|open)/[A-Za-z0-9_.+-]+(?: [A-Za-z0-9_.+-]+)*/results/[^\s]+$"
"""A submitter's folder may be a name of words (v6.1's `closed/Naeem Khoshnevis/results/…`)."""


class MlperfEntry(StrictModel):
    """An MLPerf result as MLPerf's results messaging guidelines require it to be shown: its
    result ID, submitter, benchmark, version, division, scenario and system, and the footnote.
    MLPerf results are shown in a lane of their own and never ranked against other rows; any
    figure derived from them (per GPU, $) is not verified by MLCommons."""

    round: Annotated[str, Field(pattern=r"^v[0-9]+\.[0-9]+$")] = Field(
        description="MLPerf Inference version, e.g. `v5.1`."
    )
    result_id: Annotated[str, Field(pattern=MLPERF_RESULT_ID_PATTERN)] | None = Field(
        None,
        description="MLPerf result ID as the results table gives it, e.g. `5.1-0001`; null for "
        "a round whose table gives none (v6.1), whose run is then named by `path`.",
    )
    path: Annotated[str, Field(pattern=MLPERF_RUN_PATH_PATTERN)] | None = Field(
        None,
        description="The run's folder in the round's results repository, as its table's "
        "`Location` gives it (e.g. `closed/AMD/results/<system>/gpt-oss-120b/Server/performance/"
        "run_1`): how a row without a result ID (v6.1) is cited; null where the row has an ID.",
    )
    division: Literal["closed", "open"] = Field(description="MLPerf division.")
    availability: Literal["available", "preview", "rdi"] = Field(
        description="MLPerf availability category: available, preview, or research/development/"
        "internal (rdi)."
    )
    suite: Text = Field(description="System type, e.g. `datacenter`.")
    benchmark: Text = Field(description="The benchmark as MLPerf names it, e.g. `llama2-70b-99`.")
    scenario: Literal["Offline", "Server", "Interactive"] = Field(description="LoadGen scenario.")
    submitter: Text = Field(description="Submitting organization.")
    system: Text = Field(description="System under test, as submitted.")
    verified: bool = Field(
        description="Whether the result was verified through MLCommons review (true for the "
        "official results repositories)."
    )
    footnote: LongText = Field(
        description="The footnote MLPerf's guidelines require beside the result."
    )

    @model_validator(mode="after")
    def _named_once(self) -> "MlperfEntry":
        if (self.result_id is None) == (self.path is None):
            raise ValueError(
                "an MLPerf entry is named by its result_id or, where the round's table gives "
                "none, by its path: exactly one of the two"
            )
        return self

    def entry(self) -> str:
        """The result ID, or the run's path where the round gives no ID."""
        return self.result_id or str(self.path)


class ReportedSource(StrictModel):
    """Numbers published by a public source; only what the source states is filled in."""

    kind: Literal["reported"] = Field(description="Provenance kind.")
    url: Url = Field(description="Where the numbers are published.")
    title: DocumentTitle
    published: PartialDate | None = Field(
        None, description="Publication date as precise as the source gives it; null if none."
    )
    publisher: Text = Field(description="Who published the numbers (company, project, author).")
    conditions: LongText = Field(
        description="The test conditions as published, in the source's own terms."
    )
    retrieved: FullDate = Field(description="When the source was read, YYYY-MM-DD.")
    submitter: Text = Field(description="Who transcribed the numbers (GitHub user name).")
    revision: Text | None = Field(
        None,
        description="The exact version read: the git commit of the source repository, or the "
        "document version; null if the source has none.",
    )
    unofficial: bool | None = Field(
        None,
        description="True when the numbers come from a copy or fork, not from the publisher's "
        "own repository or site (shown as unofficial).",
    )
    mlperf: MlperfEntry | None = Field(
        None, description="For an MLPerf result: what MLPerf's guidelines require to show it."
    )


Source = Annotated[MeasuredSource | ReportedSource, Field(discriminator="kind")]
