"""A model page without any result: the calculators' estimates for one example workload, the
five cheapest deployments that fit, as a table of their own headed as estimates (a model with
results gets its answers from `answer_site.model_section`)."""

from collections.abc import Mapping

from catalog_pages import esc
from compare_table import num, usd
from gpu_labels import gpus_link

from infermeter.registry.estimate import CostEstimate, Estimates

ESTIMATE_NOTE = (
    "Estimate, not a measurement: the calculators' roofline bound (memory bandwidth and peak "
    "compute) with as many sequences as the vLLM memory plan holds, at the cheapest usable "
    "on-demand price. No run reaches the bound, so a real token costs more."
)

# The workload a model page without results estimates for: one chat request of the guide's
# middle size (an example, said so on the page).
EXAMPLE_TOKENS = (1000, 1000)


def estimate_table(
    estimates: list[CostEstimate], base: str, gpu_names: Mapping[str, str] | None = None
) -> str:
    """The calculators' estimates as a table of their own, headed as estimates (GPUs by their
    names in `gpu_names`)."""
    body = "".join(
        f"<tr><td>{gpus_link(e.gpu_count, e.gpu, gpu_names, base)}</td>"
        f"<td>{usd(e.usd_per_hour, 2)}</td><td>{e.batch:,}</td>"
        f"<td>{num(e.bound_tokens_per_s, 0)} ({esc(e.limited_by)}; {esc(e.interconnect)})</td>"
        f"<td>{usd(e.usd_per_million_output_tokens)}</td></tr>"
        for e in estimates
    )
    return (
        '<div class="im-scroll"><table class="im-table im-estimates" data-search-exclude>'
        "<thead><tr><th>GPUs</th><th>$/hour</th><th>Sequences the plan holds</th>"
        "<th>Bound, output tok/s (limited by)</th><th>Estimate: at best $/1M output</th>"
        f"</tr></thead><tbody>{body}</tbody></table></div>"
    )


def model_estimates(
    model_id: str, estimates: Estimates | None, gpu_names: Mapping[str, str] | None = None
) -> str:
    """Markdown of the answer section of a model page without results (relative to
    `models/<id>/`): "no result meets this yet" and, apart, the calculators' estimates."""
    heading = "\n### The cheapest GPU per 1M accepted output tokens\n\n"
    ranked_estimates = estimates.ranked(model_id, *EXAMPLE_TOKENS)[:5] if estimates else []
    if not ranked_estimates:
        return heading + "No result meets this yet.\n"
    return (
        heading
        + "**No result meets this yet.** Beside it, the calculators' estimate for one example "
        f"workload ({EXAMPLE_TOKENS[0]:,} → {EXAMPLE_TOKENS[1]:,} tokens), the five cheapest "
        f"deployments that fit. {ESTIMATE_NOTE}\n\n"
        + estimate_table(ranked_estimates, "../../", gpu_names)
        + "\n"
    )
