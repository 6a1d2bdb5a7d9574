"""`infermeter registry validate`: check result files, collect every problem, fail once.

For each file, in order (a file that fails a step is not checked further where the next step
needs what it lacks):

1. file hygiene — exists, a regular file (no symbolic link), `.json`, at most 1 MiB, not empty,
   UTF-8, strict JSON (no NaN, no duplicate keys), nested at most 32 deep;
2. structure (`registry.checks.structure`, `strings`) — the current format (an older one is
   named, with the `registry migrate` command that upgrades it); the committed JSON Schema, the
   models, plain-text strings;
3. content (`registry.checks.content`, `counts`, `rates`, `closed_loop`) — the content id; for
   a file under `registry/results/`: its path and canonical text; the catalogs' ids; counts that
   agree; rates a cost can be worked out from; a closed loop's throughput that its own
   concurrency and latencies allow (Little's law);
4. physics (`registry.checks.physics`) — roofline bounds of the GPU and model;
5. across files (`registry.checks.history`) — duplicates among the files and the registry;
   with a git `base`, results merged there that changed or vanished without a correction.

Each problem is a Finding, `file: json.path: message`, with the name of its check.
"""

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from infermeter.registry.catalog import (
    CATALOGS_DIR,
    GPUS_FILE,
    MODELS_FILE,
    catalogs_holding,
    load_gpus,
    load_models,
)
from infermeter.registry.checks import Finding
from infermeter.registry.checks.closed_loop import closed_loop_findings
from infermeter.registry.checks.content import (
    identity_findings,
    placement_findings,
    reference_findings,
    results_relative_parts,
)
from infermeter.registry.checks.counts import count_findings
from infermeter.registry.checks.history import (
    Checked,
    duplicate_findings,
    immutability_findings,
    measurements_key,
)
from infermeter.registry.checks.physics import physics_findings
from infermeter.registry.checks.rates import rate_findings
from infermeter.registry.checks.strings import string_findings
from infermeter.registry.checks.structure import model_findings, schema_findings
from infermeter.registry.corrections import (
    CORRECTIONS_FILE,
    CorrectionEntry,
    corrections_text,
    final_replacement,
    latest_entries,
    parse_corrections,
)
from infermeter.registry.errors import InvalidFileError
from infermeter.registry.input_files import LIMITS_BYTES
from infermeter.registry.location import catalogs_folder
from infermeter.registry.migration import is_older_format
from infermeter.registry.models import RESULT_SCHEMA_VERSION, GpuEntry, ModelEntry, Result
from infermeter.registry.store import (
    RESULTS_DIR,
    TOO_DEEP,
    display_path,
    dumps_result,
    nesting_depth_exceeds,
    parse_json,
    read_result,
)
from infermeter.registry.tree import is_partial_attempt, kind_problem, walk_results

T = TypeVar("T")

MAX_FILE_BYTES = LIMITS_BYTES["result file"]
"""Largest result file accepted: a run with hundreds of load points stays far below."""


def check_failure(check: str, error: BaseException) -> str:
    """The message of a check that failed on a file instead of judging it."""
    detail = str(error).splitlines()[0][:200] if str(error) else ""
    return (
        f"the {check} check cannot judge this file ({type(error).__name__}"
        f"{': ' + detail if detail else ''}); a value is outside what it can take"
    )


@dataclass(frozen=True)
class ValidationReport:
    """What `validate_paths` found: how many files it read, and every problem."""

    files_checked: int
    problems: tuple[Finding, ...]
    skipped: tuple[str, ...] = ()  # lost fleet attempts' points in a folder's partial/

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def summary(self) -> str:
        files = f"{self.files_checked} file{'' if self.files_checked == 1 else 's'} checked"
        skipped = len(self.skipped)
        if skipped:
            attempts = f"{skipped} partial attempt{'' if skipped == 1 else 's'}"
            files += f" ({attempts} of bench fleet skipped: not results to submit)"
        if self.ok:
            return f"{files}, all valid"
        count = len(self.problems)
        return f"{files}, {count} problem{'' if count == 1 else 's'}"

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "files_checked": self.files_checked,
            "problems": [problem.as_json() for problem in self.problems],
            "skipped": list(self.skipped),
        }


@dataclass(frozen=True)
class _Catalogs:
    gpus: dict[str, GpuEntry]
    models: dict[str, ModelEntry]


def _stamp(path: Path) -> tuple[int, int]:
    try:
        status = path.stat()
    except OSError:
        return (0, 0)
    return (status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=8)
def _cached_catalogs(folder: Path, stamps: tuple[tuple[int, int], ...]) -> _Catalogs:
    # Parsing the YAML catalogs costs more than checking a result; the stamps (modification
    # time and size of each file) make an edited catalog load afresh.
    return _Catalogs(load_gpus(folder), load_models(folder))


@functools.lru_cache(maxsize=65536)
def _registry_result(
    path: Path, stamp: tuple[int, int]
) -> tuple[Result, tuple[object, ...]] | None:
    # A registry holds thousands of results and every check of a contributor's file compares
    # with all of them: each is parsed (and keyed) once per modification time and size.
    try:
        result = read_result(path)
    except (InvalidFileError, ValueError):
        return None
    return result, measurements_key(result)


class _Validator:
    def __init__(self, registry_root: Path | None) -> None:
        self.registry_root = registry_root
        self.findings: list[Finding] = []
        self.checked: list[Checked] = []
        self.files_checked = 0
        self.skipped: list[str] = []
        self._registry_results: list[Checked] | None = None
        self.excluded: set[Path] = set()  # registry files a change removes (not duplicates)
        self.catalogs = self._load_catalogs()

    def name(self, path: Path) -> str:
        if self.registry_root is None:
            return display_path(path)
        try:
            return path.absolute().relative_to(self.registry_root.absolute()).as_posix()
        except ValueError:
            return display_path(path)

    def add(self, path: Path, message: str, check: str = "file", json_path: str = "") -> None:
        self.findings.append(Finding(self.name(path), json_path, message, check))

    def _load_catalogs(self) -> _Catalogs | None:
        # A registry checkout is validated against its own catalogs when it has them; files
        # checked without a registry against the catalogs the package carries.
        folder = CATALOGS_DIR
        if self.registry_root is not None:
            folder = catalogs_holding(catalogs_folder(self.registry_root), GPUS_FILE)
        stamps = tuple(_stamp(folder / name) for name in (GPUS_FILE, MODELS_FILE))
        try:
            return _cached_catalogs(folder, stamps)
        except InvalidFileError as error:
            self.findings.extend(
                Finding(problem.file, problem.path, problem.message, "catalogs")
                for problem in error.problems
            )
            return None

    # --- finding the files ------------------------------------------------------------------

    def files(self, paths: Iterable[Path]) -> list[Path]:
        found: list[Path] = []
        for path in paths:
            try:
                linked = path.is_symlink()
                folder = path.is_dir() and not linked
                missing = not folder and not linked and not path.exists()
            except OSError as error:  # a name too long for the file system
                self.add(path, f"cannot read: {error.strerror}")
                continue
            if folder:
                found.extend(self._walk(path))
            elif missing:
                self.add(path, "no such file or folder")
            elif (problem := kind_problem(path)) is not None:
                self.add(path, problem)
            elif path.suffix != ".json":
                self.add(path, "not a .json file; results are JSON files")
            else:
                found.append(path)
        return found

    def _walk(self, folder: Path) -> Iterable[Path]:
        # The same walk as `registry index` (registry.tree): both see the same files.
        walk = walk_results(folder)
        for path, reason in walk.refused:
            in_registry = results_relative_parts((*path.absolute().parts,)) is not None
            if in_registry or "symbolic link" in reason or "regular file" in reason:
                message = reason
                if reason == "is not a .json result file":
                    message = f"only .json result files belong in {RESULTS_DIR}/"
                self.add(path, message)
        for path in walk.files:
            in_registry = results_relative_parts((*path.absolute().parts,)) is not None
            if not in_registry and is_partial_attempt(path):
                # A fleet's lost attempt (its entry's own file is the result): named, not read.
                self.skipped.append(self.name(path))
                continue
            yield path

    # --- one file ---------------------------------------------------------------------------

    def _read(self, path: Path) -> str | None:
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                self.add(path, f"{size / 1e6:.1f} MB is above the limit of 1 MiB")
                return None
            with path.open("rb") as stream:
                raw = stream.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            self.add(path, f"cannot read: {error.strerror}")
            return None
        if len(raw) > MAX_FILE_BYTES:
            self.add(path, "grew above the limit of 1 MiB while being read")
            return None
        if not raw.strip():
            self.add(path, "empty file")
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            self.add(path, f"not UTF-8 text (byte {error.start}); result files are UTF-8 JSON")
            return None

    def _parse(self, path: Path, text: str) -> Any:
        try:
            data = parse_json(text, self.name(path))
        except InvalidFileError as error:
            self.findings.extend(Finding(p.file, p.path, p.message, "json") for p in error.problems)
            return None
        if data is None:  # the text `null`
            self.add(path, "holds null; a result file holds one JSON object", "json")
            return None
        if nesting_depth_exceeds(data):
            self.add(path, TOO_DEEP, "json")
            return None
        return data

    def check_file(self, path: Path, reported: bool = True) -> None:
        self.files_checked += 1
        text = self._read(path)
        if text is None:
            return
        data = self._parse(path, text)
        if data is None:
            return
        self.check_data(self.name(path), text, data, path, reported)

    def check_data(
        self, file: str, text: str, data: Any, path: Path | None, reported: bool = True
    ) -> None:
        """The checks of one file's parsed `data` (`text` its text); `path` is where the file
        lies, None for a result in memory (no placement check, nothing read)."""
        size = len(text.encode("utf-8"))
        if size > MAX_FILE_BYTES:  # a result in memory (a harvest's row, an import)
            message = f"{size / 1e6:.1f} MB is above the limit of 1 MiB for a result file"
            self.findings.append(Finding(file, "", message, "file"))
            return
        if is_older_format(data):
            message = (
                f"{data['schema_version']} is an older result format; `infermeter registry "
                f"migrate {file}` rewrites it as version {RESULT_SCHEMA_VERSION}"
            )
            self.findings.append(Finding(file, "schema_version", message, "version"))
            return
        guard = functools.partial(self.guarded, file)
        schema_problems = guard("schema", lambda: schema_findings(file, data))
        structure = guard("model", lambda: [model_findings(file, data, schema_problems)])
        result, model_problems = structure[0] if structure else (None, [])
        self.findings.extend([*schema_problems, *model_problems])
        self.findings.extend(guard("strings", lambda: string_findings(file, data)))
        if result is None:
            return
        self.findings.extend(guard("identity", lambda: identity_findings(file, result)))
        parts = results_relative_parts(path.absolute().parts) if path is not None else None
        if parts is not None:
            self.findings.extend(
                guard("placement", lambda: placement_findings(file, text, result, parts))
            )
        self.findings.extend(guard("counts", lambda: count_findings(file, result)))
        self.findings.extend(guard("rates", lambda: rate_findings(file, result)))
        self.findings.extend(guard("closed-loop", lambda: closed_loop_findings(file, result)))
        if self.catalogs is not None:
            catalogs = self.catalogs
            self.findings.extend(
                guard(
                    "catalogs",
                    lambda: reference_findings(file, result, catalogs.gpus, catalogs.models),
                )
            )
            gpu = catalogs.gpus.get(result.identity.gpu.id)
            model = catalogs.models.get(result.identity.model.id)
            self.findings.extend(
                guard("physics", lambda: physics_findings(file, result, gpu, model))
            )
        self.checked.append(Checked(file, path or Path(file), result, reported))

    def guarded(self, file: str, check: str, run: Callable[[], list[T]]) -> list[T]:
        """What `run` (one check) returns; a check that fails on the file (a number it cannot
        take, an error of a calculator) is one finding naming the file and the check, never a
        traceback: the gate must report every file of a pull request."""
        try:
            return run()
        except Exception as error:
            self.findings.append(Finding(file, "", check_failure(check, error), check))
            return []

    # --- the registry as a whole ------------------------------------------------------------

    def registry_results(self) -> list[Checked]:
        """Results already in the registry, for duplicates; unreadable ones are skipped here."""
        if self._registry_results is not None:
            return self._registry_results
        if self.registry_root is None:
            self._registry_results = []
            return []
        folder = self.registry_root / RESULTS_DIR
        known = {checked.location.resolve() for checked in self.checked} | self.excluded
        results = []
        for path in walk_results(folder).files if folder.is_dir() else []:
            if path.resolve() in known:
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            cached = _registry_result(path, _stamp(path))
            if cached is not None:
                results.append(Checked(self.name(path), path, cached[0], False, cached[1]))
        self._registry_results = results
        return results

    def corrections(self) -> list[CorrectionEntry]:
        if self.registry_root is None:
            return []
        path = self.registry_root / CORRECTIONS_FILE
        try:
            text = corrections_text(path, self.name(path))
            return [] if text is None else parse_corrections(text, self.name(path))
        except InvalidFileError as error:
            self.findings.extend(
                Finding(p.file, p.path, p.message, "corrections") for p in error.problems
            )
            return []

    def check_corrections(self, entries: Sequence[CorrectionEntry]) -> None:
        if self.registry_root is None:
            return
        known = {checked.result.id for checked in self.checked}
        known |= {checked.result.id for checked in self.registry_results()}
        file = self.name(self.registry_root / CORRECTIONS_FILE)
        listed, corrected = list(entries), latest_entries(list(entries))
        for index, entry in enumerate(entries):
            if entry.replaced_by is None:
                continue
            # corrected again later: the chain's last result must be here (append only)
            if final_replacement(listed, entry.replaced_by) not in known:
                message = f"{entry.replaced_by} is no result in {RESULTS_DIR}/"
                if entry.replaced_by in corrected:
                    message += " (nor is the result its later corrections name)"
                self.findings.append(
                    Finding(file, f"corrections[{index}].replaced_by", message, "corrections")
                )


def _check_file(validator: _Validator, path: Path) -> list[Finding]:
    validator.check_file(path)
    return []


def validate_paths(
    paths: Sequence[Path] = (),
    *,
    base: str | None = None,
    registry_root: Path | None = None,
) -> ValidationReport:
    """Validate result files and folders (default: the registry's `registry/results/`).

    `registry_root` is the checkout whose catalogs, corrections file and results the files are
    compared with (see `registry.location`); `base` a git revision of it to check immutability
    against. Without one, `paths` are checked on their own, against the package's catalogs.
    Raises GitError (or its UnknownRevisionError) when `base` cannot be used; every problem
    with the files themselves is in the report.
    """
    if registry_root is None and (base is not None or not paths):
        raise ValueError("validating the whole registry or against a base needs registry_root")
    validator = _Validator(registry_root)
    whole_registry = not paths
    targets = list(paths) if paths or registry_root is None else [registry_root / RESULTS_DIR]
    if whole_registry and not targets[0].exists() and not targets[0].is_symlink():
        targets = []  # no results yet; a link (a loop too) is refused as one
    for path in validator.files(targets):
        validator.guarded(
            validator.name(path), "file", functools.partial(_check_file, validator, path)
        )
    results = validator.checked + validator.registry_results()
    validator.findings.extend(
        validator.guarded("", "duplicates", lambda: duplicate_findings(results))
    )
    if whole_registry or base is not None:
        entries = validator.corrections()
        validator.check_corrections(entries)
        if base is not None and registry_root is not None:
            validator.findings.extend(immutability_findings(registry_root, base, entries))
    return ValidationReport(
        validator.files_checked, tuple(validator.findings), tuple(validator.skipped)
    )


def check_result(
    result: Result,
    file: str = "result.json",
    *,
    registry_root: Path | None = None,
    extra_models: Mapping[str, ModelEntry] | None = None,
) -> ValidationReport:
    """Every check `validate_paths` runs on one file, on a result in memory: its canonical text
    is checked as the file would be, nothing is written (`registry.builder` makes results).

    `registry_root`: the checkout whose catalogs and results (duplicates) it is judged with;
    `extra_models`: model-catalog entries added for this check (a pull request that adds the
    model's entry with the result)."""
    validator = _Validator(registry_root)
    if extra_models and validator.catalogs is not None:
        models = validator.catalogs.models | dict(extra_models)
        validator.catalogs = _Catalogs(validator.catalogs.gpus, models)
    validator.files_checked = 1
    text = dumps_result(result)
    validator.check_data(file, text, json.loads(text), None)
    checked = validator.checked + validator.registry_results()
    validator.findings.extend(
        validator.guarded(file, "duplicates", lambda: duplicate_findings(checked))
    )
    return ValidationReport(validator.files_checked, tuple(validator.findings))


def check_results(
    results: Sequence[tuple[Path, Result]], registry_root: Path, removed: Iterable[Path] = ()
) -> dict[Path, list[Finding]]:
    """Every problem `registry validate` would find in each result, written at its path
    under `registry_root`, judged in memory as one change to the registry with the files
    `removed` gone (a harvest checks its rows so before it writes any: `registry.harvest`).
    Returns the findings of each path that has any."""
    validator = _Validator(registry_root)
    validator.excluded = {path.resolve() for path in removed}
    catalog_findings = list(validator.findings)
    for path, result in results:
        file = validator.name(path)
        text = dumps_result(result)
        validator.files_checked += 1
        validator.check_data(file, text, json.loads(text), path)
    checked = validator.checked + validator.registry_results()
    validator.findings.extend(
        validator.guarded("", "duplicates", lambda: duplicate_findings(checked))
    )
    by_path: dict[Path, list[Finding]] = {}
    names = {validator.name(path): path for path, _ in results}
    for finding in validator.findings[len(catalog_findings) :]:
        found = names.get(finding.file)
        if found is not None:
            by_path.setdefault(found, []).append(finding)
    return by_path
