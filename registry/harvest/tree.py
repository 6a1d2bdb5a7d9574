"""Reading a source: a folder, or a git repository (a checkout or a bare mirror) at a commit.

A git repository is read at a commit (HEAD unless named), never from its working files, so the
commit a result cites is exactly what was read. A plain folder has no commit of its own: the
caller names the commit it was copied from.
"""

from dataclasses import dataclass
from pathlib import Path

from infermeter.registry.git_command import GitCommandError, run_git
from infermeter.registry.harvest.errors import HarvestError
from infermeter.registry.input_files import LIMITS_BYTES, MIB, read_input_text, source_text

_GIT_TIMEOUT_S = 300


def _git(repository: Path, *arguments: str, stdin: bytes | None = None) -> bytes:
    try:
        return run_git(
            repository,
            arguments,
            needed_for="to read a repository",
            timeout_s=_GIT_TIMEOUT_S,
            stdin=stdin,
        )
    except GitCommandError as error:
        raise HarvestError(str(error)) from None


@dataclass(frozen=True)
class SourceTree:
    """The files of one source as of one commit (`commit` None: an uncommitted folder)."""

    root: Path
    commit: str | None
    is_git: bool

    @classmethod
    def open(cls, path: Path, commit: str | None = None) -> "SourceTree":
        """The source at `path`; a git repository at `commit` (default HEAD).

        Raises HarvestError when `path` is missing or `commit` names no commit.
        """
        if not path.exists():
            raise missing_source(path)
        folder = path if path.is_dir() else path.parent
        # Only the top of a checkout (or a bare mirror) is read through git: a folder inside
        # some other repository is just a folder.
        if (folder / ".git").exists() or _is_bare(folder):
            revision = commit or "HEAD"
            try:
                resolved = _git(folder, "rev-parse", "--verify", f"{revision}^{{commit}}")
            except HarvestError:
                if commit is None:  # not a --commit given: a repository of no commits yet
                    raise HarvestError(
                        f"--from: {path} is a git repository with no commit at HEAD; a source "
                        "is read at a commit"
                    ) from None
                raise HarvestError(f"--commit: {revision!r} names no commit in {path}") from None
            return cls(folder, resolved.decode().strip(), True)
        return cls(folder, commit, False)

    def read_many(self, paths: list[str], kind: str = "source table") -> dict[str, str | None]:
        """The text of each path (None where there is no such file), read in one go; a file
        that is no regular file, larger than a `kind`'s limit (`registry.input_files`) or not
        UTF-8 is refused (InputFileError, HarvestError)."""
        if not paths:
            return {}
        if not self.is_git:
            found: dict[str, str | None] = {}
            for relative in paths:
                file = self.root / relative
                exists = file.exists() or file.is_symlink()
                found[relative] = read_input_text(file, kind) if exists else None
            return found
        request = "".join(f"{self.commit}:{relative}\n" for relative in paths).encode("utf-8")
        output = _git(self.root, "cat-file", "--batch", stdin=request)
        texts: dict[str, str | None] = {}
        position = 0
        for relative in paths:
            end = output.index(b"\n", position)
            header = output[position:end].decode("utf-8", "replace").split()
            position = end + 1
            if len(header) != 3 or header[1] != "blob":
                texts[relative] = None
                continue
            size = int(header[2])
            if size > LIMITS_BYTES[kind]:
                raise HarvestError(
                    f"{relative} at {str(self.commit)[:12]}: {size / MIB:.1f} MiB is above the "
                    f"limit of {LIMITS_BYTES[kind] / MIB:g} MiB for a {kind}"
                )
            blob = output[position : position + size]
            try:
                texts[relative] = source_text(blob.decode("utf-8"), kind)
            except UnicodeDecodeError as error:
                raise HarvestError(
                    f"{relative} at {str(self.commit)[:12]}: not UTF-8 text (byte {error.start})"
                ) from None
            position += size + 1
        return texts

    def files_under(self, folders: list[str]) -> list[str]:
        """Every file path under the given folders (relative to the root), sorted."""
        if not self.is_git:
            found = []
            for folder in folders:
                base = self.root / folder
                if base.is_dir():
                    found += [p.relative_to(self.root).as_posix() for p in base.rglob("*")]
            return sorted(path for path in found if (self.root / path).is_file())
        commit = str(self.commit)
        output = _git(self.root, "ls-tree", "-r", "-z", "--name-only", commit, "--", *folders)
        return sorted(name for name in output.decode("utf-8", "replace").split("\0") if name)

    def read_text(self, relative: str, kind: str = "source table") -> str:
        """The text of one file; HarvestError names it when it is missing."""
        text = self.read_many([relative], kind)[relative]
        if text is None:
            where = f" at {self.commit[:12]}" if self.commit else ""
            raise HarvestError(f"{self.root / relative}: no such file{where}")
        return text

    def history(self, relative: str) -> list[str]:
        """Commits that changed `relative`, oldest first (a git source only)."""
        if not self.is_git:
            return []
        output = _git(
            self.root, "log", "--format=%H", "--reverse", str(self.commit), "--", relative
        )
        return output.decode().split()

    def at(self, commit: str) -> "SourceTree":
        """The same repository at another commit."""
        return SourceTree(self.root, commit, self.is_git)


def missing_source(path: Path) -> HarvestError:
    """The refusal of a `--from` that names nothing: no such file, or a link to nothing."""
    if path.is_symlink():  # a loop, or a missing target
        return HarvestError(f"--from: {path}: a symbolic link that leads to no file or folder")
    return HarvestError(f"--from: {path}: no such file or folder")


def _is_bare(folder: Path) -> bool:
    try:
        return _git(folder, "rev-parse", "--is-bare-repository").decode().strip() == "true"
    except HarvestError:
        return False
