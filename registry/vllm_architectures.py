"""The text-generation architectures vLLM's newest release registers and what the calculators do
with each (by name, read generically, refused naming a field), from the snapshot
benchmarks/vllm_architectures.py writes from a vLLM source package."""

import json
from collections import Counter
from pathlib import Path
from typing import Any

from infermeter.calculators.config_reader import key_verdict

SNAPSHOT = Path(__file__).resolve().parent.parent / "tests" / "data" / "vllm_architectures.json"
VERDICTS = ("by name", "generic", "refused")


def load() -> tuple[str, list[dict[str, Any]]]:
    """(the release, its architectures: architecture, module, model_type, config_keys)."""
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return str(snapshot["release"]), list(snapshot["architectures"])


def classify(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with the calculators' verdict and, for a refusal, its reason."""
    judged = []
    for row in rows:
        verdict, reason = key_verdict(row["model_type"], row["config_keys"])
        judged.append({**row, "verdict": verdict, "reason": reason})
    return judged


def summary(release: str, judged: list[dict[str, Any]]) -> str:
    """One line: how many are registered, planned by name, read generically, refused."""
    counts = Counter(row["verdict"] for row in judged)
    return (
        f"{release}: {len(judged)} registered text-generation architectures; "
        f"{counts['by name']} planned by name, {counts['generic']} read generically, "
        f"{counts['refused']} refused"
    )
