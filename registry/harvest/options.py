"""What every harvest takes besides its source (`HarvestOptions`): the registry it writes into,
whether it only reports, the submitter and retrieval date of its rows; and what every results
source's `harvest_<source>` shares: dating its rows, the catalogs, applying the rows."""

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.catalog import load_gpus, load_models
from infermeter.registry.checks.counts import in_the_future
from infermeter.registry.harvest.errors import HarvestError, HarvestOptionError
from infermeter.registry.harvest.outcome import (
    Harvested,
    HarvestReport,
    apply_harvest,
    retrieval_dates,
)
from infermeter.registry.harvest.reported import Catalogs
from infermeter.registry.location import catalogs_folder
from infermeter.registry.models import Result

DEFAULT_SUBMITTER = "infermeter-maintainers"


@dataclass(frozen=True)
class HarvestOptions:
    """What every harvest takes besides its source."""

    registry_root: Path
    dry_run: bool = False
    submitter: str = DEFAULT_SUBMITTER
    today: str | None = None  # as `--retrieved` gives it (bench/cli/harvest.py says what it is)

    def __post_init__(self) -> None:
        # Checked before any source is read: a bad date found after writing would leave a
        # half-harvested registry.
        if self.today is not None:
            try:
                parsed = dt.date.fromisoformat(self.today)
            except ValueError:
                parsed = None
            if parsed is None or parsed.isoformat() != self.today:
                raise HarvestOptionError(
                    f"--retrieved: {self.today!r} is not a calendar date such as 2026-11-30"
                )
        if not self.submitter.strip():
            raise HarvestError("the submitter is empty")

    @classmethod
    def given(
        cls, registry_root: Path, *, dry_run: bool, retrieved: str | None
    ) -> "HarvestOptions":
        """The options as `registry harvest` is given them: a `--retrieved` date must not be in
        the future, as the gate refuses it of every row (a later day, as the tests simulate
        one, is for code that passes `today` itself)."""
        options = cls(registry_root, dry_run=dry_run, today=retrieved)
        today = dt.datetime.now(dt.UTC).date()
        if retrieved is not None and in_the_future(dt.date.fromisoformat(retrieved), today):
            raise HarvestOptionError(f"--retrieved: {retrieved} is in the future")
        return options

    def retrieval_date(self) -> str:
        return self.today or dt.datetime.now(dt.UTC).date().isoformat()

    def retrieved_for(self, key_of: Callable[[Result], str | None]) -> Callable[[str], str]:
        """A row's retrieval date by its source key: the date it was first harvested, so an
        unchanged source gives unchanged files; else the retrieval date of this run."""
        known = retrieval_dates(self.registry_root, key_of)
        today = self.retrieval_date()
        return lambda key: known.get(key, today)

    def apply(
        self, rows: Sequence[Harvested], key_of: Callable[[Result], str | None], source: str
    ) -> HarvestReport:
        """Apply a source's rows to the registry (`source`: the source in a reader's words)."""
        return apply_harvest(
            rows,
            self.registry_root,
            key_of,
            source=source,
            dry_run=self.dry_run,
            today=self.retrieval_date(),
        )

    def catalogs(self) -> Catalogs:
        """The registry's GPU and model catalogs, which map a source's names to catalog ids."""
        folder = catalogs_folder(self.registry_root)
        return Catalogs(load_gpus(folder), load_models(folder))
