"""The catalogs: GPUs, models and prices, each fact with the source it came from and its date."""

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from infermeter.calculators.price_tiers import PriceTierName
from infermeter.registry.models.common import (
    DocumentTitle,
    FormFactor,
    HfRepo,
    LongText,
    Name,
    NonNegativeFloat,
    PartialDate,
    PositiveFloat,
    PositiveInt,
    SchemaVersion,
    Slug,
    StrictModel,
    Text,
    Url,
)

__all__ = [
    "CatalogSource",
    "GpuCatalog",
    "GpuEntry",
    "ModelCatalog",
    "ModelEntry",
    "PriceCatalog",
    "PriceEntry",
    "PriceSource",
    "PublishedParams",
    "Tflops",
]


MAX_USD_PER_GPU_HOUR = 1000.0
"""The dearest price per GPU-hour a price catalog may state, written by hand or harvested. The
dearest in the catalogs is $18 (OCI's GB300, 2026) and no listing comes near $100; at $1,000 an
hour a month's rent would buy the GPU several times over, so a price above it is a misread column
or a corrupt row, not a price."""


SEGMENT_CLASSIFICATION = (
    "infermeter's own classification by the vendor's product line; no source states it"
)
"""What a GPU's `segment` is. A field whose JSON Schema carries `classification` is the
catalog's own label, which no source states: a GPU page shows this in place of its sources."""


class CatalogFile(StrictModel):
    """What every catalog file states first: the version of its format."""

    schema_version: SchemaVersion = Field(description="Version of this file format.")


class CatalogSource(StrictModel):
    """A public document that states some of an entry's facts."""

    url: Url = Field(description="Where the facts are published.")
    title: DocumentTitle
    date: PartialDate = Field(description="Publication or retrieval date, as precise as known.")
    fields: list[Text] = Field(
        min_length=1, description="The entry's fields this source supports, e.g. `memory_gb`."
    )


class PriceSource(StrictModel):
    """The public page or file a price was read from, and how its date is known."""

    url: Url = Field(
        description="Where the price is published; for a file in a git repository, its address "
        "at the commit read."
    )
    title: Text = Field(description="Title of the page, or the file and repository.")
    date: PartialDate = Field(
        description="The price's date, as precise as known; `date_basis` says how it is known."
    )
    date_basis: Literal["stated", "commit", "read"] = Field(
        description=(
            "How `date` is known: `stated` (the source states it), `commit` (the date of the "
            "commit the file was read at), `read` (neither is known, so it is the date the source "
            "was read and the price may be older; such a price never counts as recent)."
        )
    )
    official: bool = Field(
        description=(
            "True when the figure is the provider's own list price: its pricing page, price list "
            "or pricing API, read there or copied unchanged by a catalog whose fetcher reads it "
            "(SkyPilot's). False for a figure quoted by a third party (an article, a tracker, a "
            "note) or a marketplace's sampled offer."
        )
    )
    commit: Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")] | None = Field(
        None, description="The git commit of the file read, for a source in a git repository."
    )


class DerivedPrice(StrictModel):
    """A tier computed from another price, not listed by the provider."""

    rule: Text = Field(description="The rule, e.g. `reserved = on-demand × (1 − 0.35)`.")
    from_price: Slug = Field(description="Catalog id of the price the rule is applied to.")


Sources = Annotated[
    list[CatalogSource], Field(min_length=1, description="Where the facts come from.")
]
"""The sources of a catalog entry's facts (each source names the fields it supports)."""
EntryNotes = Annotated[LongText | None, Field(description="Anything a reader should know.")]
"""A catalog entry's free notes."""


class Tflops(StrictModel):
    """Dense (no sparsity) peak throughput per data type, TFLOPS (TOPS for int8); null if none."""

    fp32: NonNegativeFloat | None = Field(description="FP32, TFLOPS.")
    bf16: NonNegativeFloat | None = Field(description="BF16 tensor, TFLOPS.")
    fp16: NonNegativeFloat | None = Field(description="FP16 tensor, TFLOPS.")
    fp8: NonNegativeFloat | None = Field(description="FP8 tensor, TFLOPS.")
    int8: NonNegativeFloat | None = Field(description="INT8 tensor, TOPS.")
    fp4: NonNegativeFloat | None = Field(description="FP4 tensor, TFLOPS.")


class GpuLink(StrictModel):
    """One GPU-to-GPU link of a GPU, as a source states it (its bandwidth bounds the traffic
    of tensor- and pipeline-parallel decoding, `calculators.interconnect`)."""

    name: Text = Field(description="The link as a reader knows it, e.g. `NVLink 4`.")
    gb_s_per_direction: PositiveFloat = Field(
        description="Peak bandwidth of one GPU in one direction, GB/s: half the vendors' "
        "NVLink and Infinity Fabric figures, which sum both directions (NVLink 4: 900 → 450); "
        "PCIe 5.0 x16 is 63."
    )
    max_gpus: PositiveInt | None = Field(
        description="The most GPUs the link joins (a bridge: 2; an 8-GPU baseboard: 8); null "
        "for a link that joins every GPU of a server (PCIe)."
    )


ComputeCapability = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]?\.[0-9]$")]


class GpuSourceName(StrictModel):
    """A name a harvested source gives this GPU, exactly as it prints it: the harvester of that
    source files a row under this GPU when, and only when, the row names it so."""

    source: Slug = Field(
        description="The harvested source that prints the name, as its declaration in "
        "registry/harvest/sources.py calls it (`gpu_names`), e.g. `mlperf` (MLPerf Inference "
        "results tables' Accelerator) or `skypilot-<cloud>` (SkyPilot's catalog of that cloud)."
    )
    name: Text = Field(description="The name as the source prints it, matched exactly.")
    power_limit_w: PositiveInt | None = Field(
        None,
        description="The board power limit, watts, that the submission set below the part's "
        "own where its run was power-capped (MLPerf's power category, MaxQ: NVIDIA's harness "
        "runs `nvidia-smi -pl`); the source prints the stock part's name for such a run, and "
        "the harvester files it here only at this limit. Null: the part as sold.",
    )
    note: LongText | None = Field(
        None, description="Why the name is this GPU, where the name alone does not say."
    )


def _is_regular_expression(text: str) -> str:
    try:
        re.compile(text)
    except re.error as error:
        raise ValueError(f"not a regular expression: {error}") from None
    return text


DriverNamePattern = Annotated[Text, AfterValidator(_is_regular_expression)]


class GpuEntry(StrictModel):
    """One GPU model as sold, with its published specifications."""

    id: Slug = Field(description="Catalog id, used by results and prices (e.g. `h100-sxm`).")
    name: Name = Field(description="Marketing name.")
    vendor: Literal["nvidia", "amd"] = Field(description="Vendor.")
    architecture: Text = Field(description="Architecture name, e.g. `Hopper`.")
    form_factor: FormFactor = Field(description="Board form factor.")
    segment: Literal["consumer", "workstation", "datacenter"] = Field(
        description=f"Market segment: {SEGMENT_CLASSIFICATION} (GeForce: consumer; RTX "
        "workstation cards: workstation; data-center GPUs, Instinct among them: datacenter).",
        json_schema_extra={"classification": SEGMENT_CLASSIFICATION},
    )
    launch: PartialDate = Field(description="Launch date, as precise as known.")
    memory_gb: PositiveFloat = Field(description="Memory as marketed, GB (10^9 bytes).")
    memory_type: Text | None = Field(
        description="Memory technology, e.g. `HBM3`; null if no source read states it."
    )
    memory_reported_mib: PositiveInt | None = Field(
        description="Total memory as nvidia-smi/rocm-smi reports it, MiB; null if not known."
    )
    memory_bandwidth_gb_s: PositiveFloat = Field(description="Peak memory bandwidth, GB/s.")
    tflops_dense: Tflops = Field(description="Dense peak compute per data type.")
    tdp_w: PositiveFloat | None = Field(
        description="Board power limit (TDP/TBP), watts; null if no source read states it."
    )
    interconnect: Text = Field(
        description="GPU-to-GPU link, e.g. `NVLink 4 900 GB/s` or `PCIe 5.0`."
    )
    interconnect_links: list[GpuLink] = Field(
        default_factory=list,
        description="The GPU's links with a sourced bandwidth, for the roofline bound's "
        "traffic between GPUs; empty where no source read states one (the bound then says "
        "that it counts none).",
    )
    compute_capability: ComputeCapability | None = Field(
        description="NVIDIA's CUDA compute capability, `major.minor` (`9.0` Hopper, `10.0` "
        "B200, `10.3` B300, `12.0` RTX PRO 6000 Blackwell): vLLM picks its kernels and some "
        "defaults by it. Null for AMD GPUs and where no source read states it."
    )
    nvlink_sharp: bool = Field(
        description="Whether the GPU's NVLink domain is an NVSwitch fabric with NVLink SHARP "
        "(third-generation NVSwitch onward: Hopper SXM and later; not A100's, not NVLink "
        "bridges): NCCL then keeps NVLS buffers on every tensor-parallel rank. False where no "
        "source read states it. A domain larger than a server (`interconnect_links[].max_gpus` "
        "above 8, an NVL72 rack) is multi-node NVLink."
    )
    driver_name_pattern: DriverNamePattern | None = Field(
        None,
        description="A regular expression found in the name the driver gives this GPU "
        "(NVML's, as `nvidia-smi` prints it; amd-smi's for AMD) and in no other entry's: "
        "`bench run` recognises the GPU by it without `--gpu` "
        "(`registry.catalog.gpu_of_driver_name`). Absent where the driver names the GPU as "
        "it names another entry (a power-capped H200 is `NVIDIA H200`) or the name is not known.",
    )
    source_names: list[GpuSourceName] = Field(
        default_factory=list,
        description="The names harvested sources give this GPU (read through "
        "`registry.catalog.gpu_named`); a name no entry lists is skipped by the harvester.",
    )
    sources: Sources
    notes: EntryNotes = None


class GpuCatalog(CatalogFile):
    """registry/catalogs/gpus.yaml: the GPUs results may name."""

    gpus: list[GpuEntry] = Field(description="The GPUs, one entry per id.")


class PublishedParams(StrictModel):
    """Parameter counts as the model's authors publish them, billions."""

    total_b: PositiveFloat = Field(description="Total parameters, billions.")
    active_b: PositiveFloat | None = Field(
        description="Parameters active per token (mixture of experts), billions; null if dense."
    )
    note: LongText | None = Field(None, description="How the authors count, where it matters.")


class ModelEntry(StrictModel):
    """One model, with the architecture facts the memory calculator needs."""

    id: Slug = Field(description="Catalog id, used by results (e.g. `llama-3.1-8b-instruct`).")
    name: Name = Field(description="Name as published.")
    hf_repo: HfRepo = Field(description="Hugging Face repository of the reference weights.")
    family: Text = Field(description="Model family, e.g. `llama`.")
    published_params: PublishedParams = Field(description="Parameter counts as published.")
    context_length: PositiveInt = Field(description="Longest supported context, tokens.")
    config: dict[str, Any] = Field(
        description="Fields of the repository's config.json, as published there."
    )
    sources: Sources
    notes: EntryNotes = None


class ModelCatalog(CatalogFile):
    """registry/catalogs/models.yaml: the models results may name."""

    models: list[ModelEntry] = Field(description="The models, one entry per id.")


_FLAG_WORDS = re.compile(r"\b(ANOMAL\w*|DOUBTFUL)\b")
_DERIVED_WORD = re.compile(r"\bDERIVED\b")


class PriceEntry(StrictModel):
    """One published hourly price of a GPU at one provider."""

    id: Slug = Field(description="Catalog id of this price.")
    provider: Name = Field(description="Cloud or marketplace, e.g. `AWS`.")
    offering: Name | None = Field(description="Product line at the provider; null if just one.")
    gpu: Slug = Field(description="GPU id in the GPU catalog.")
    gpus_per_instance: PositiveInt = Field(description="GPUs in the priced instance.")
    instance: Name | None = Field(description="Instance type name; null if priced per GPU.")
    tier: PriceTierName = Field(
        description="Pricing tier: on demand, interruptible (spot) or reserved (committed)."
    )
    usd_per_gpu_hour: PositiveFloat = Field(
        le=MAX_USD_PER_GPU_HOUR, description="Price per GPU per hour, US dollars."
    )
    region: Text | None = Field(description="Region the price applies to; null if global.")
    as_of: PartialDate = Field(description="When the price was read.")
    source: PriceSource = Field(description="Where the price is published.")
    notes: LongText | None = Field(None, description="Conditions of the price (term, minimums).")
    derived: DerivedPrice | None = Field(
        None,
        description="Set when the provider does not list this tier and it is computed from "
        "another price by a stated rule; the site labels it as derived, with the rule.",
    )
    caution: Literal["anomaly", "doubtful"] | None = Field(
        None,
        description=(
            "Set when the catalog doubts this price: `anomaly` (the source's figures contradict "
            "themselves, e.g. on-demand below spot) or `doubtful` (the value looks wrong against "
            "other sources). A flagged price is listed on its GPU page and never used in a "
            "default, a ranking or a headline."
        ),
    )

    @model_validator(mode="after")
    def _notes_flag_needs_caution(self) -> "PriceEntry":
        # The curator's notes say ANOMALY/DOUBTFUL in words; the field makes the flag data, so
        # no figure can use the price by accident. A note that flags without the field is an error.
        if self.caution is None and self.notes and _FLAG_WORDS.search(self.notes):
            raise ValueError(
                "notes flag this price (ANOMALY/DOUBTFUL); set caution: anomaly or doubtful"
            )
        # A tier computed from another price is data, so every page can label it with its rule.
        if self.derived is None and self.notes and _DERIVED_WORD.search(self.notes):
            raise ValueError("notes say this price is DERIVED; set derived: {rule, from_price}")
        return self


class PriceCatalog(CatalogFile):
    """registry/catalogs/prices.yaml: GPU hour prices by provider and tier."""

    prices: list[PriceEntry] = Field(description="The prices, one entry per id.")
