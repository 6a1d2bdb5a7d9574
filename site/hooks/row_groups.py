"""How the index's rows group into the site's pages and tables: the rows rankings show
(`ranked`), rows by any key (`rows_by`), a compare page's key (`compare_slug`, model ×
profile; `profile_text` and `names_profile` say how its links name the profile) and replicate
groups (`replicate_groups`: one compare-table row each, the median of every figure)."""

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable
from statistics import median
from typing import Any

from infermeter.registry.index_row import COLUMNS as INDEX_COLUMNS
from infermeter.registry.index_row import IndexRow


def compare_slug(model: str, profile: str) -> str:
    """The name of the compare page (and its CSV) of a model × traffic profile."""
    return f"{model}--{profile}"


def profile_text(profile: str) -> str:
    """A result's traffic profile in a reader's words (`custom`: any workload of none)."""
    return "traffic of no infermeter profile" if profile == "custom" else f"{profile} traffic"


def names_profile(profile: str, profiles: int) -> bool:
    """Whether a model's page (of its `profiles` pages) names its profile: `custom` says
    nothing where it is the model's only one (every harvested result's)."""
    return profile != "custom" or profiles > 1


# The figures that differ between replicates (measured and derived numbers): a replicate
# group's row shows the median of each.
SUMMARY_COLUMNS = tuple(
    name
    for name in INDEX_COLUMNS[INDEX_COLUMNS.index("duration_s") :]
    if not name.endswith(("_price_id", "_basis", "_provider", "_as_of", "_confidence"))
    and name != "on_pareto_front"
)


@dataclasses.dataclass(frozen=True)
class Group:
    """One row of a compare table: a load point, or a replicate group (the same setup and load
    from several results) summarised by the median of each figure."""

    row: IndexRow
    members: tuple[IndexRow, ...]


def replicate_groups(rows: Iterable[IndexRow]) -> list[Group]:
    """The rows by replicate key, in the order of each group's first row."""
    groups = []
    for _key, members in rows_by(rows, lambda row: row.replicate_key):
        if len(members) == 1:
            groups.append(Group(members[0], (members[0],)))
            continue
        medians: dict[str, Any] = {}
        for name in SUMMARY_COLUMNS:
            values = [m.column(name) for m in members if m.column(name) is not None]
            medians[name] = median(values) if values else None
        groups.append(Group(members[0].with_columns(**medians), tuple(members)))
    return groups


def ranked(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """The rows that rankings and comparisons show: not corrected, not withdrawn, not a point
    cut short by an interrupt (those keep their result page, marked, and stay in the downloads
    with their `correction` or `interrupted`)."""
    return [row for row in rows if row.correction is None and not row.interrupted]


def rows_by(
    rows: Iterable[IndexRow], key: Callable[[IndexRow], Any]
) -> list[tuple[Any, list[IndexRow]]]:
    """The rows grouped by `key`, each group in the index's order."""
    groups: dict[Any, list[IndexRow]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    return list(groups.items())
