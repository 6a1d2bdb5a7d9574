"""The calculator error report: the VRAM plan's predictions against the figures vLLM logged at
startup, built at build time from the case file (tests/data/vllm_startup_logs.yaml) by the same
code as `benchmarks/plan_accuracy.py` (`registry.plan_accuracy`): fit and held-out cases apart,
per vLLM release, per GPU and per model family, every case linked to its log."""

from collections.abc import Callable, Iterable

from catalog_pages import esc, scrolled

from infermeter.calculators.config_reader import KNOWN_MODEL_TYPES, MODEL_TYPE_FAMILIES
from infermeter.registry import vllm_architectures
from infermeter.registry.plan_accuracy import (
    EVIDENCE_HEAD,
    GIB,
    MAX_SOURCE_SHARE,
    SPLITS,
    Case,
    Summary,
    breakdown,
    evidence_rows,
    figures,
    gpu_kind,
    model_family,
    source_shares,
    summarise,
    vllm_release,
)

URI = "calculators/accuracy.md"
_SPLIT_NAMES = {"fit": "fit", "holdout": "held out"}


def percent(value: float | None) -> str:
    """A share or an error as the report and `benchmarks/plan_accuracy.py` print it."""
    return "-" if value is None else f"{value * 100:.1f} %"


def _table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    header = "".join(f"<th>{cell}</th>" for cell in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return scrolled(
        f'<table class="im-table" data-search-exclude><thead><tr>{header}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def _summary_cells(summary: Summary) -> list[str]:
    return [
        str(summary.sources),
        str(summary.figures),
        percent(summary.weights_median),
        percent(summary.kv_tokens_median),
        percent(summary.within_10_percent),
    ]


_SUMMARY_HEAD = ["sources", "figures", "weights, median error", "KV tokens, median error",
                 "figures within 10 %"]  # fmt: skip


def headline(cases: list[Case]) -> str:
    """Per split: one vote per source (the report's figures) and every case alike, with the
    largest source's share of the weight."""
    rows = []
    for split in SPLITS:
        chosen = [case for case in cases if case.split == split]
        shares = source_shares(chosen)
        largest = max(shares.values(), default=0.0)
        for per_source, counted in ((True, "one vote per source"), (False, "every case alike")):
            cells = _summary_cells(summarise(chosen, per_source=per_source))
            share = percent(largest) if per_source else "-"
            rows.append([esc(_SPLIT_NAMES[split]), counted, *cells, share])
    head = ["split", "counted", *_SUMMARY_HEAD, "largest source's share"]
    return _table(head, rows)


def _breakdown_table(cases: list[Case], key: Callable[[Case], str], label: str) -> str:
    rows = [
        [esc(_SPLIT_NAMES[split]), esc(group), *_summary_cells(summary)]
        for split, group, summary in breakdown(cases, key)
    ]
    return _table(["split", label, *_SUMMARY_HEAD], rows)


def _cell(predicted: float, observed: float | None, digits: int) -> str:
    if observed is None or observed <= 0:
        return "–"
    error = (predicted / observed - 1) * 100
    return f"{predicted:,.{digits}f} / {observed:,.{digits}f} ({error:+.1f} %)"


def _case_row(case: Case) -> list[str]:
    observed = case.observed
    reason = case.raw.get("excluded") or case.raw.get("excluded_kv") or ""
    if case.raw.get("excluded"):
        weights = tokens = "–"
    else:
        plan = case.plan()
        weights = _cell(plan.weights_bytes / GIB, observed.get("model_loading_gib"), 2)
        checked = {figure.name for figure in figures(case)}
        tokens = (
            _cell(plan.kv_cache_tokens, observed.get("kv_cache_tokens"), 0)
            if "kv_cache_tokens" in checked
            else "–"
        )
    flags = case.raw["flags"]
    parallel = f"TP {flags.get('tensor_parallel_size') or 1}"
    if (flags.get("pipeline_parallel_size") or 1) > 1:
        parallel += f" PP {flags['pipeline_parallel_size']}"
    if (flags.get("data_parallel_size") or 1) > 1:
        parallel += f" DP {flags['data_parallel_size']}"
    return [
        f'<a href="{esc(case.source)}" rel="noopener">{esc(case.id)}</a>',
        esc(_SPLIT_NAMES[case.split]),
        esc(vllm_release(case)),
        esc(gpu_kind(case)),
        esc(model_family(case)),
        esc(parallel),
        weights,
        tokens,
        esc(("excluded: " if case.raw.get("excluded") else "") + str(reason)[:120]),
    ]


def _gaps_table(cases: list[Case]) -> str:
    """Every stated gap of a held-out case: the figure the plan misses and why, as the case file
    states it (a strict xfail in the accuracy tests, so it shows when it closes)."""
    rows = [
        [
            f'<a href="{esc(case.source)}" rel="noopener">{esc(case.id)}</a>',
            esc(vllm_release(case)),
            esc(gpu_kind(case)),
            esc(figure),
            esc(reason),
        ]
        for case in cases
        for figure, reason in (case.raw.get("known_gaps") or {}).items()
    ]
    return _table(["case (its log)", "vLLM", "GPU", "figure", "what the plan misses"], rows)


_GAPS_TEXT = (
    "Held-out figures the plan misses stay in every summary above; none was fixed by changing a "
    "constant. The sampler warm-up is modelled from vLLM's code, not from these logs: the dummy "
    "sampler run samples max_num_seqs rows of the whole vocabulary with top-k and top-p on, and "
    "where the release sorts the vocabulary (0.10-0.11.0 without flashinfer installed, 0.11.1-0.16 "
    "unless VLLM_USE_FLASHINFER_SAMPLER=1) PyTorch's segmented sort holds 38 bytes per logit (the "
    "bf16 logits, their fp32 copy, sorted values and int64 indices, reverse indices and cub's "
    "alternate buffers) where FlashInfer's sampler and, from 0.17, vLLM's Triton kernel hold about "
    "15. The held-out 0.10 logs without flashinfer logged 38.5-38.9 bytes per logit. A 0.10 or "
    "0.11.0 plan takes flashinfer as installed (the Docker image has it; pip install vllm does not "
    "pull it) and names the risk; flashinfer_sampler=0 plans the sort. The study logs of 0.10 "
    "whose sources do not say whether flashinfer was installed keep their stated gaps. NCCL's NVLS "
    "buffers (1.75 GiB per GPU under tensor parallelism on NVSwitch GPUs) are counted from vLLM "
    "0.11 on only: 0.10 turns NCCL's cuMem allocator off (NCCL_CUMEM_ENABLE=0 in "
    "vllm/env_override.py), so its TP 2 logs keep 0.55 GiB outside PyTorch. The block-FP8 MoE at "
    "tensor parallelism 4 on H100s (Qwen3-235B-A22B-FP8, vLLM 0.9.2-0.10 era, LMCache on: 8.11 "
    "GiB of KV cache logged, 13.55 GiB planned) is neither FP8 nor expert layers as far as the "
    "logs show: the sort-path sampler would be 3.3 GiB of the 5.4 if that build lacked flashinfer "
    "(the thread does not say); the rest is not explained (the LMCache connector's buffers and "
    "NCCL at TP 4 were not logged), so the case stays out of every summary."
)


def coverage() -> str:
    """The model types the plan reads by name, those it reads through another's layout, and the
    rule for any other."""
    own = sorted(KNOWN_MODEL_TYPES - set(MODEL_TYPE_FAMILIES))
    through = ", ".join(
        f"`{esc(name)}` (as `{esc(family)}`)"
        for name, family in sorted(MODEL_TYPE_FAMILIES.items())
    )
    return (
        "Read by name: " + ", ".join(f"`{esc(name)}`" for name in own) + ". "
        "Read through the layout vLLM's model file gives them: " + through + ". "
        "Any other `model_type` is read generically from the common config conventions and the "
        "plan says so in its notes; it is refused only where its config declares a mechanism "
        "those conventions do not cover (a state-space mixer, compressed attention, per-layer "
        "embeddings), naming the key. Vision towers are counted per family (Qwen2.5-VL, Qwen3-VL, "
        "Qwen3.5, Pixtral, SigLIP) or as a generic ViT, which the plan's notes say.\n\n"
        + vllm_coverage()
    )


def vllm_coverage() -> str:
    """What the plan does with every text-generation architecture vLLM's newest release
    registers (tests/data/vllm_architectures.json, benchmarks/vllm_architectures.py)."""
    release, rows = vllm_architectures.load()
    judged = vllm_architectures.classify(rows)
    refused = "; ".join(
        f"`{esc(row['architecture'])}` ({esc(row['reason'].split(':', 1)[0])})"
        for row in judged
        if row["verdict"] == "refused"
    )
    return (
        esc(vllm_architectures.summary(release, judged))
        + ". The keys each architecture's config can set are taken from what its vLLM module "
        "reads; a generic reading is not a measured accuracy. Refused, with the field named: "
        + refused
        + "."
    )


_EVIDENCE_TEXT = (
    "The logs collected after every constant was set are the plan's real test (the hash split "
    "holds out older logs that may resemble the fit ones). Issue 24 sets the bar below for them; "
    "the rows say where the case file stands. A source with KV figures is one whose logs state "
    '"GPU KV cache size"; the GPU kinds are those of such logs.'
)


def accuracy_page(cases: list[Case]) -> str:
    """The error report's Markdown (its tables as HTML)."""
    head = ["case (its log)", "split", "vLLM", "GPU", "model type", "parallel",
            "weights GiB, predicted / logged", "KV tokens, predicted / logged", "note"]  # fmt: skip
    return "\n\n".join(
        [
            "---\ntitle: Memory plan accuracy\n---",
            "# How far the VRAM plan is from vLLM's own logs",
            "The [VRAM plan](vram.md) predicts what vLLM logs when it starts: the weights "
            '("Model loading took … GiB") and the KV cache ("GPU KV cache size: … tokens", '
            '"Maximum concurrency"). Each case below is a public startup log with its flags; '
            "the plan is run with the same model, GPU, vLLM release and flags, and compared. "
            "**Fit** cases are the logs the plan's few estimated constants (activation peak, "
            "memory outside PyTorch, CUDA graphs) were set from; **held-out** cases were never "
            "used to set anything (their side is fixed by a hash of the source, or by being "
            "collected after fitting). A figure's error is predicted / logged − 1; a median is of "
            "absolute errors. So that no one machine or study dominates, each source (one "
            "thread, one repository's sweep) counts as much as one case: its figures are "
            f"weighted 1 / its cases, and no source may hold more than "
            f"{MAX_SOURCE_SHARE * 100:.0f} % of a split's weight.",
            "This page is rebuilt from the case file at every build; "
            "`.venv/bin/python benchmarks/plan_accuracy.py` prints the same figures.",
            "## Summary",
            headline(cases),
            "## Evidence gathered after fitting",
            _EVIDENCE_TEXT,
            _table(EVIDENCE_HEAD, ([esc(cell) for cell in row] for row in evidence_rows(cases))),
            "## By vLLM release",
            _breakdown_table(cases, vllm_release, "vLLM"),
            "## By GPU",
            _breakdown_table(cases, gpu_kind, "GPU"),
            "## By model family",
            _breakdown_table(cases, model_family, "model type"),
            "## Model types the plan reads",
            coverage(),
            "## What the plan misses",
            _GAPS_TEXT,
            _gaps_table(cases),
            "## Every case",
            _table(head, (_case_row(case) for case in cases)),
        ]
    )
