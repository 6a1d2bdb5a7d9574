"""How a harvested MLPerf result is cited: its title, its conditions text and the footnote that
MLPerf's results messaging guidelines require (with the trademark notice)."""

import re
from typing import Any

from infermeter.registry.harvest.mlperf_location import location
from infermeter.registry.harvest.mlperf_log import inferred_tokens_per_s

_TRADEMARK = (
    "The MLPerf name and logo are registered and unregistered trademarks of MLCommons "
    "Association in the United States and other countries. All rights reserved. Unauthorized "
    "use strictly prohibited. See www.mlcommons.org for more information."
)


def submitter_and_system(submitter: str, system: str) -> str:
    """Who ran what, as a title names it: the system alone when its name already starts with
    the submitter as a word (`NVIDIA NVIDIA GB300 NVL72` reads `NVIDIA GB300 NVL72`)."""
    if re.match(rf"{re.escape(submitter)}(?!\w)", system, re.IGNORECASE):
        return system
    return f"{submitter} {system}"


def row_entry(row: dict[str, Any]) -> str:
    """A row's result ID, or its run's path where the round gives no ID (v6.1)."""
    return str(row["ID"]) if row.get("ID") is not None else location(row)


def cited_entry(row: dict[str, Any]) -> str:
    """How a title cites a row: `result <ID>`, or `run <path>` where the round gives no ID."""
    return f"result {row['ID']}" if row.get("ID") is not None else f"run {location(row)}"


def _entry(row: dict[str, Any]) -> str:
    """The row as the conditions cite it: `cited_entry`, saying why a run has no result ID."""
    if row.get("ID") is not None:
        return cited_entry(row)
    if row.get("from_table") is False:
        return (
            f"{cited_entry(row)} (its result ID is in the round's results table, which was "
            "not read)"
        )
    return f"{cited_entry(row)} (the round's results table gives no result ID)"


def _declared_weights(row: dict[str, Any]) -> str:
    if row.get("weight_data_types") is None:
        return "not declared in what was read (no results table)"
    return str(row["weight_data_types"])


def _scenario_rules(scenario: str, log: dict[str, str]) -> str:
    """The scenario's load and validity rules, as LoadGen ran them."""
    if scenario == "Offline":
        return (
            "Offline: LoadGen issues every sample in one query and the system processes them in "
            f"any order; {log.get('samples_per_query')} samples per query."
        )
    if "ttft_latency (ns)" not in log:
        return (
            f"{scenario}: LoadGen sends queries of one sample each with Poisson arrivals at the "
            f"submitter's target_qps {log.get('target_qps')}; the run is VALID only if the "
            f"end-to-end latency stays within {log.get('target_latency (ns)')} ns at the "
            "percentile the run's mlperf.conf sets for it (target_latency_percentile). Latency "
            "statistics are LoadGen's over all queries of the run. Scheduled samples per second "
            f"{log.get('Scheduled samples per second')}."
        )
    return (
        f"{scenario}: LoadGen sends queries of one sample each with Poisson arrivals at the "
        f"submitter's target_qps {log.get('target_qps')}; the run is VALID only if the 99th "
        f"percentile TTFT stays within {log.get('ttft_latency (ns)')} ns and TPOT within "
        f"{log.get('tpot_latency (ns)')} ns (early stopping estimates). Latency statistics "
        "are LoadGen's over all queries of the run; 'time to output token' is MLPerf's TPOT. "
        f"Scheduled samples per second {log.get('Scheduled samples per second')}."
    )


def _units_note(row: dict[str, Any], log: dict[str, str]) -> list[str]:
    """What the stored throughput counts, where the table's unit is not plain tokens/s."""
    inferred = inferred_tokens_per_s(log)
    if inferred is not None:
        return [
            f"LoadGen does not count this benchmark's tokens: its {inferred} tokens per second "
            "(inferred), which the results table lists as "
            f"{row.get('Performance_Result')} {row.get('Performance_Units')}, are samples per "
            "second × a fixed factor (mlperf.conf's token_latency_scaling_factor), so samples "
            "per second are stored and no tokens per second."
        ]
    if row.get("Performance_Units") in ("Samples/s", "Queries/s") and not any(
        "tokens per second" in key.lower() for key in log
    ):
        return [
            f"The benchmark is measured in samples: the results table lists "
            f"{row.get('Performance_Result')} {row.get('Performance_Units')} and the log "
            "counts no tokens, so samples per second are stored and no tokens per second."
        ]
    if row.get("Performance_Units") not in ("Tokens/s", None):
        return [
            f"The results table lists {row.get('Performance_Result')} "
            f"{row.get('Performance_Units')}; the run's log states this value as tokens per "
            "second, which is what is stored."
        ]
    return []


def conditions(
    row: dict[str, Any], log: dict[str, str], engine_component: str, rules: str | None = None
) -> str:
    """What the row measured and under which rules, as the result's `source.conditions`
    (`rules`: the scenario's rules where the run was not measured by LoadGen, see
    `mlperf_endpoints.endpoints_rules`)."""
    scenario = row["Scenario"]
    parts = [
        f"MLPerf Inference {row.get('version')} {row['Category']} division, "
        f"{row.get('Suite')} suite, benchmark {row['Model']}, scenario {scenario}; "
        f"{_entry(row)} by "
        f"{row['Submitter']} on {row['System']} ({row.get('Platform')}): {row.get('Nodes')} "
        f"node(s) × {row.get('a#')} {row['Accelerator']}, host {row.get('Processor')}.",
        f"Software as submitted: {row.get('Software')} (engine read from "
        f"'{engine_component}'); operating system {row.get('operating_system')}; weights "
        f"{_declared_weights(row)}; availability {row.get('Availability')}.",
        f"Accuracy in the accuracy run: {row.get('Accuracy')}.",
    ]
    parts.append(rules or _scenario_rules(scenario, log))
    if rules is None:
        parts.extend(_units_note(row, log))
    if str(row.get("Accelerator", "")).startswith("Virtualized"):
        parts.append("The accelerators ran virtualized.")
    parts.append(
        "Throughput is the whole system's; per-GPU and $ figures derived from it are not "
        "verified by MLCommons. The data set is the benchmark's own (see the MLPerf Inference "
        "rules for its composition)."
    )
    return " ".join(parts)


def footnote(round_name: str, row: dict[str, Any], url: str, retrieved: str) -> str:
    """MLPerf's required footnote of one result, ending with the trademark notice."""
    return (
        f"MLPerf® {round_name} Inference {str(row['Category']).capitalize()} {row['Model']} "
        f"{row['Scenario']}. Retrieved from {url} on {retrieved}, entry {row_entry(row)}. "
        f"Result verified by MLCommons Association. {_TRADEMARK}"
    )
