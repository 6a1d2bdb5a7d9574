"""A pinned excerpt of a file in a public repository, the form every price source's input
takes (SkyPilot's catalog files, Google Cloud's `pricing.yml`, Azure's retail-price snapshots):
provenance lines, then lines of the file, verbatim.

An excerpt starts with `# ` lines, each a fact about where the lines below come from:

    # Excerpt of <path> in <owner>/<repository> at commit <40 hex>
    # date: 2026-09-18 (stated): why that date is the prices' date
    # date: unknown: why no date can be read (the price then counts as undated)
    # official: yes (whose price list) | official: no (why not)
    # read: 2026-12-01 from …; which lines were copied

Each source reads its own `Excerpt of` line (`match_line` with its pattern) and the lines below
(`read_provenance` gives them); a hostile excerpt is one HarvestError naming the file.
"""

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.input_files import read_input_text

_STATED = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2}) \(stated\): (?P<why>.+)$")
_UNKNOWN = re.compile(r"^unknown: (?P<why>.+)$")
_OFFICIAL = re.compile(r"^(?P<answer>yes|no) \((?P<why>[^)]+)\)(?P<rest>.*)$")
_READ = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2}) (?P<how>.+)$")


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

    def said(self) -> str:
        """How the date and the officialness are known, as a price's notes say it."""
        dated = (
            f"date stated: {self.date_reason}"
            if self.date_basis == "stated"
            else f"undated ({self.date_reason}); as_of is the date the file was read"
        )
        return f"{dated}; official: {'yes' if self.official else 'no'} ({self.official_reason})"


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

    def price_source(self, title: str) -> dict[str, object]:
        """The `source` of a price read from this excerpt (a PriceSource's fields)."""
        return {
            "url": self.url,
            "title": title,
            "date": self.provenance.date,
            "date_basis": self.provenance.date_basis,
            "official": self.provenance.official,
            "commit": self.commit,
        }


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
    """`pattern` matched to the provenance line `text` (its '# `what`' line); HarvestError
    naming the file and the line when it does not match."""
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


def excerpt_files(source: Path, pattern: str) -> list[Path]:
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
