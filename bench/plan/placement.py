"""Where a plan's run goes: the GPU kinds (catalog id and count) it needs.

A plan's run (or its `defaults:`) may say `gpus:`, a list whose items are a GPU catalog id
(`h100-sxm`), an id and a count (`h100-sxm:2`), or a mapping (`{gpu: mi300x, count: 2}`).
`bench run --plan` runs each run once on the host it runs on and ignores `gpus`; the fleet
commands (`bench plan matrix`, `bench plan render`, `bench fleet`) expand each run into one
entry per GPU kind (see `bench.fleet.matrix`).

This module only checks the shape; whether the id is in the GPU catalog, and whether the
count fits the run's parallelism, is checked where the matrix is expanded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


@dataclass(frozen=True)
class GpuRequest:
    """One GPU kind a run needs: its catalog id and how many (None: as the run's parallelism)."""

    gpu_id: str
    count: int | None = None

    def describe(self) -> str:
        """`h100-sxm`, or `h100-sxm:2` with a count."""
        return self.gpu_id if self.count is None else f"{self.gpu_id}:{self.count}"


_COUNT = re.compile(r"[0-9]{1,9}")
MAX_KINDS = 64  # GPU kinds one run lists (the catalog has fewer)


def _count(value: object, where: str, problems: list[str]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.append(f"{where}: expected a whole number of GPUs, at least 1, got {value!r}")
        return None
    return value


def _one(item: object, where: str, problems: list[str]) -> GpuRequest | None:
    if isinstance(item, str):
        gpu_id, colon, count_text = item.partition(":")
        count: int | None = None
        if colon:
            # ASCII digits only (str.isdigit() takes '²'), and a count int() can take at once.
            if not _COUNT.fullmatch(count_text):
                shown = item if len(item) <= 60 else item[:60] + "…"
                problems.append(
                    f"{where}: a GPU count is at most 9 digits, got {shown!r}"
                    if count_text.isascii() and count_text.isdigit()
                    else f"{where}: expected ID or ID:COUNT such as l40s:2, got {shown!r}"
                )
                return None
            count = _count(int(count_text), where, problems)
            if count is None:
                return None
    elif isinstance(item, dict):
        unknown = sorted(str(key) for key in item if key not in ("gpu", "count"))
        if unknown:
            problems.append(f"{where}.{unknown[0]}: unknown key; a GPU kind has gpu: and count:")
            return None
        gpu_id = item.get("gpu")  # type: ignore[assignment]
        if not isinstance(gpu_id, str):
            problems.append(f"{where}.gpu: expected a GPU catalog id such as h100-sxm")
            return None
        count = None
        if "count" in item:
            count = _count(item["count"], f"{where}.count", problems)
            if count is None:
                return None
    else:
        problems.append(f"{where}: expected a GPU catalog id, ID:COUNT, or {{gpu: ID, count: N}}")
        return None
    if not _ID.match(gpu_id):
        problems.append(f"{where}: {gpu_id!r} is not a GPU catalog id (such as h100-sxm)")
        return None
    return GpuRequest(gpu_id, count)


def parse_gpus(value: object, where: str, problems: list[str]) -> tuple[GpuRequest, ...] | None:
    """The GPU kinds of a `gpus:` value (None when it has a problem, each added to `problems`)."""
    items = value if isinstance(value, list) else [value]
    if not items:
        problems.append(f"{where}: expected at least one GPU kind")
        return None
    if len(items) > MAX_KINDS:
        problems.append(f"{where}: {len(items):,} GPU kinds; a run lists at most {MAX_KINDS}")
        return None
    found: list[GpuRequest] = []
    seen: dict[str, int] = {}
    ok = True
    for index, item in enumerate(items):
        at = f"{where}[{index}]" if isinstance(value, list) else where
        request = _one(item, at, problems)
        if request is None:
            ok = False
            continue
        kind = request.describe()
        if kind in seen:
            problems.append(f"{at}: {kind} is also {where}[{seen[kind]}]")
            ok = False
            continue
        seen[kind] = index
        found.append(request)
    return tuple(found) if ok else None
