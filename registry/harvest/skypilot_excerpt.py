"""Reading one pinned excerpt of a SkyPilot catalog file (`catalogs/v8/<cloud>/vms.csv` in
skypilot-org/skypilot-catalog): its provenance lines, then the file's own lines, verbatim.

An excerpt starts with `# ` lines, each a fact about where the rows below come from:

    # Excerpt of catalogs/v8/oci/vms.csv in skypilot-org/skypilot-catalog at commit <40 hex>
    # date: 2026-09-18 (stated): why that date is the prices' date
    # date: unknown: why no date can be read (the price then counts as undated)
    # official: yes (whose price list) | official: no (why not)
    # read: 2026-12-01 from …; which lines were copied

then the CSV header and rows exactly as the file has them. The columns are read by name: the
files order them differently per cloud.
"""

import csv
import datetime as dt
import io
import re
from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.input_files import read_input_text

_ORIGIN = re.compile(
    r"^Excerpt of (?P<path>catalogs/v\d+/(?P<cloud>[a-z0-9_-]+)/vms\.csv) in "
    r"(?P<repo>[\w.-]+/[\w.-]+) at commit (?P<commit>[0-9a-f]{40})$"
)
_STATED = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2}) \(stated\): (?P<why>.+)$")
_UNKNOWN = re.compile(r"^unknown: (?P<why>.+)$")
_OFFICIAL = re.compile(r"^(?P<answer>yes|no) \((?P<why>[^)]+)\)(?P<rest>.*)$")
_READ = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2}) (?P<how>.+)$")
REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")


@dataclass(frozen=True)
class Provenance:
    """An excerpt's `# ` lines, read: its origin line, date, whether official, when read."""

    origin: str
    date: str
    date_basis: str
    date_reason: str
    official: bool
    official_reason: str
    read: str


@dataclass(frozen=True)
class PinnedExcerpt:
    """A pinned excerpt of one file of a public repository (SkyPilot's catalog, Google Cloud's
    and Azure's price snapshots): the excerpt's own `file`, the excerpted file's `path` in
    `repository` at `commit`, and the provenance lines the excerpt opens with."""

    file: Path
    path: str
    repository: str
    commit: str
    provenance: Provenance

    @property
    def url(self) -> str:
        """The excerpted file on GitHub, at its commit."""
        return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"


@dataclass(frozen=True)
class Excerpt(PinnedExcerpt):
    """One pinned excerpt of a cloud's `vms.csv`: the rows as dicts by column name."""

    cloud: str
    rows: tuple[dict[str, str], ...]


def _facts(file: Path, lines: list[str]) -> dict[str, str]:
    facts: dict[str, str] = {}
    for line in lines:
        text = line[2:]
        if text.startswith("Excerpt of "):
            facts["origin"] = text
            continue
        key, separator, value = text.partition(": ")
        if not separator:
            raise HarvestError(f"{file}: provenance line {line!r} is not '# key: value'")
        facts[key] = value
    for key in ("origin", "date", "official", "read"):
        if key not in facts:
            name = "Excerpt of …" if key == "origin" else f"{key}: …"
            raise HarvestError(f"{file}: the provenance lines lack '# {name}'")
    return facts


def match_line(file: Path, pattern: re.Pattern[str], text: str, what: str) -> re.Match[str]:
    match = pattern.match(text)
    if match is None:
        raise HarvestError(f"{file}: '{what}' line {text!r} is not in the expected form")
    return match


def _calendar_date(file: Path, text: str, what: str) -> str:
    """`text` (YYYY-MM-DD from the '# `what`:' line) when it is a day of the calendar."""
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        raise HarvestError(f"{file}: '# {what}:' {text} is not a calendar date") from None
    return text


def _dating(file: Path, facts: dict[str, str], read: str) -> tuple[str, str, str]:
    """(date, basis, reason): a stated date, or the date read when no date can be known."""
    stated = _STATED.match(facts["date"])
    if stated is not None:
        return _calendar_date(file, stated["date"], "date"), "stated", stated["why"]
    unknown = match_line(file, _UNKNOWN, facts["date"], "date")
    return read, "read", unknown["why"]


def read_provenance(file: Path, what: str) -> tuple[Provenance, list[str]]:
    """The provenance of the excerpt in `file` and the lines below it (`what` they are, for the
    error); HarvestError naming the file for anything not in its shape (InputFileError for a
    file that is no regular file, too large or not UTF-8)."""
    lines = read_input_text(file, "source page").splitlines()
    head = [line for line in lines if line.startswith("# ")]
    body = lines[len(head) :]
    if lines[: len(head)] != head or not body:
        raise HarvestError(f"{file}: expected '# ' provenance lines, then {what}")
    facts = _facts(file, head)
    read = _calendar_date(file, match_line(file, _READ, facts["read"], "read")["date"], "read")
    date, basis, reason = _dating(file, facts, read)
    official = match_line(file, _OFFICIAL, facts["official"], "official")
    provenance = Provenance(
        facts["origin"],
        date,
        basis,
        reason,
        official["answer"] == "yes",
        official["why"] + official["rest"],
        read,
    )
    return provenance, body


def read_excerpt(file: Path) -> Excerpt:
    """The excerpt in `file`; HarvestError naming the file for anything not in its shape."""
    facts, body = read_provenance(file, "the CSV header and rows")
    origin = match_line(file, _ORIGIN, facts.origin, "Excerpt of")
    reader = csv.DictReader(io.StringIO("\n".join(body) + "\n"))
    missing = [name for name in REQUIRED_COLUMNS if name not in (reader.fieldnames or [])]
    if missing:
        raise HarvestError(f"{file}: the CSV header lacks column(s) {', '.join(missing)}")
    return Excerpt(
        file=file,
        path=origin["path"],
        cloud=origin["cloud"],
        repository=origin["repo"],
        commit=origin["commit"],
        provenance=facts,
        rows=_rows(file, reader),
    )


def _rows(file: Path, reader: "csv.DictReader[str]") -> tuple[dict[str, str], ...]:
    """The rows below the header; HarvestError for none, or for a row whose fields are not
    the header's (a truncated or hand-edited line)."""
    rows: list[dict[str, str]] = []
    for row in reader:
        if None in row or None in row.values():
            raise HarvestError(
                f"{file}: CSV row {len(rows) + 1} (line {reader.line_num} below the provenance) "
                f"does not have the header's {len(reader.fieldnames or [])} fields"
            )
        rows.append(row)
    if not rows:
        raise HarvestError(f"{file}: no rows below the CSV header")
    return tuple(rows)


def excerpt_files(source: Path, pattern: str = "*.csv") -> list[Path]:
    """The excerpt files of `source`: the file itself, or every file of the folder matching
    `pattern`, by name."""
    if source.is_dir():
        files = sorted(source.glob(pattern))
    elif source.exists() or source.is_symlink():
        return [source]  # read as a file: one that is not (a FIFO, a device) is named so then
    else:
        raise HarvestError(f"--from: {source}: no such file or folder")
    if not files:
        raise HarvestError(f"--from: {source}: no excerpt files ({pattern}) in the folder")
    return files
