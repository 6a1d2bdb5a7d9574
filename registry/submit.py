"""Contribute a result: place it in a registry checkout, commit it on a branch, push, open a PR.

Several results (a fleet's: one plan over many GPU hosts) go the same way as one set: each is
validated, the set is validated together against the checkout (duplicates among them too),
and all of them land in one commit on one branch and one pull request.

Every git step runs `git` in the checkout through subprocess; a failing step raises `GitError`
naming the command and git's own message. The pull request is opened with `gh` when it is on
PATH; otherwise the outcome carries the exact commands that are left to run.

Hierarchy (beside registry.errors)::

    RegistryError
    └── SubmitError            the checkout or the file cannot be submitted (dirty, exists, …)
        └── GitError           a git or gh command failed
"""

import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from infermeter.registry.errors import InvalidFileError, RegistryError
from infermeter.registry.location import is_registry_checkout
from infermeter.registry.models import LoadPoint, MeasuredSource, Result
from infermeter.registry.result_reader import read_valid_result
from infermeter.registry.store import (
    content_id,
    display_path,
    dumps_result,
    missing_folders,
    remove_empty,
    result_path,
    write_text_atomic,
)


class SubmitError(RegistryError):
    """The result cannot be submitted from this checkout as it stands."""


class GitError(SubmitError):
    """A git (or gh) command failed."""


@dataclass(frozen=True)
class SubmitConfig:
    """What `infermeter registry submit` was asked to do."""

    result_file: Path
    checkout: Path
    remote: str = "origin"
    branch: str | None = None
    base: str = "main"
    dry_run: bool = False
    more_files: tuple[Path, ...] = ()  # submitted with result_file, as one set


@dataclass(frozen=True)
class SubmitOutcome:
    """What was done, and what is left for the contributor to run (`remaining_commands`)."""

    branch: str
    path: PurePosixPath
    commit_message: str
    commit: str | None
    pushed: bool
    pull_request_url: str | None
    done_commands: tuple[str, ...]
    remaining_commands: tuple[str, ...]
    paths: tuple[PurePosixPath, ...] = ()  # every file placed (path is the first)


def branch_name(result: Result) -> str:
    """`result/<gpu>/<model>/<id>`: one branch per result, readable in a PR list."""
    return f"result/{result.identity.gpu.id}/{result.identity.model.id}/{result.id}"


def _load_description(point: LoadPoint) -> str:
    return point.load.label()


def _one_line(text: str) -> str:
    """`text` with every run of white space, line breaks included, as one space. The models
    refuse a line break in a result's free text of one line (an engine version, a submitter, a
    publisher: `Text`); were one there, in a commit message it would start a line of its own,
    where `Signed-off-by: …` or `Co-authored-by: …` reads as a trailer of the commit and a
    subject would run into the body."""
    return " ".join(text.split())


def commit_message(result: Result) -> str:
    """Subject: model, GPU × count, engine, profile; body: the facts a reviewer checks first."""
    identity = result.identity
    model, gpu, engine = identity.model, identity.gpu, identity.engine
    subject = (
        f"Add result: {model.id} on {gpu.count}× {gpu.id}, "
        f"{engine.name} {engine.version}, {identity.workload.profile} profile"
    )
    source = result.source
    if isinstance(source, MeasuredSource):
        provenance = f"measured with {source.tool.name} {source.tool.version} by {source.submitter}"
    else:
        provenance = f"reported by {source.publisher} ({source.url}), transcribed by "
        provenance += source.submitter
    body = [
        f"Model: {model.id} ({model.hf_repo}), quantization {model.quantization or 'none'}",
        f"GPU: {gpu.count}× {gpu.id} ({gpu.form_factor})",
        f"Engine: {engine.name} {engine.version}",
        f"Profile: {identity.workload.profile}",
        f"Points: {', '.join(_load_description(point) for point in result.points)}",
        f"Source: {provenance}",
        f"File: {result_path(result).as_posix()}",
        f"Id: {result.id}",
    ]
    return _one_line(subject) + "\n\n" + "\n".join(map(_one_line, body)) + "\n"


def set_branch_name(results: Sequence[Result]) -> str:
    """`results/<model>/<first id>-<count>`: one branch per set of results."""
    models = sorted({result.identity.model.id for result in results})
    model = models[0] if len(models) == 1 else "mixed"
    return f"results/{model}/{results[0].id}-{len(results)}"


def set_commit_message(results: Sequence[Result]) -> str:
    """Subject: how many results of which models on which GPUs; body: one line per result."""
    models = sorted({result.identity.model.id for result in results})
    gpus = sorted({f"{r.identity.gpu.count}× {r.identity.gpu.id}" for r in results})
    subject = f"Add {len(results)} results: {', '.join(models)} on {', '.join(gpus)}"
    lines = []
    for result in results:
        gpu, engine = result.identity.gpu, result.identity.engine
        source = result.source
        host = source.host.gpu_sku if isinstance(source, MeasuredSource) else "reported"
        lines.append(
            f"- {result_path(result).as_posix()}: {gpu.count}× {gpu.id}, {engine.name} "
            f"{engine.version}, {result.identity.workload.profile} profile (host: {host})"
        )
    return _one_line(subject) + "\n\n" + "\n".join(map(_one_line, lines)) + "\n"


def _check_submission(files: Sequence[Path], checkout: Path) -> None:
    """Every check `registry validate` runs (physics, the checkout's catalogs, duplicates among
    the files and with the checkout's results …); SubmitError in one line naming the first."""
    from infermeter.registry.validate import validate_paths

    report = validate_paths(list(files), registry_root=checkout)
    if report.ok:
        return
    first = report.problems[0]
    more = len(report.problems) - 1
    named = " ".join(shlex.quote(display_path(file)) for file in files)
    hint = f" (and {more} more; run `infermeter registry validate {named}`)" if more else ""
    if len(files) > 1:
        raise SubmitError(f"the results do not validate together: {first}{hint}")
    where = f"{first.path}: " if first.path else ""
    raise SubmitError(f"{first.file} is not a valid result: {where}{first.message}{hint}")


def _command_line(arguments: Sequence[str]) -> str:
    return shlex.join(arguments)


def _run(arguments: Sequence[str], checkout: Path, named: int | None = None) -> str:
    """The command's output; GitError naming it (its first `named` words: not a commit's
    whole message) with its own message when it fails."""
    try:
        completed = subprocess.run(
            list(arguments), cwd=checkout, capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        needed = f"needed for `{_command_line(arguments)}`"
        raise GitError(f"{arguments[0]} is not installed ({needed})") from None
    if completed.returncode != 0:
        detail = " ".join((completed.stderr or completed.stdout).split()) or "no message"
        raise GitError(f"`{_command_line(arguments[:named])}` failed: {detail}")
    return completed.stdout.rstrip("\n")


def load_submission(path: Path) -> Result:
    """The result to submit, validated; SubmitError in one line when it is not valid."""
    file = display_path(path)
    try:
        result = read_valid_result(path, file)
    except InvalidFileError as error:
        raise SubmitError(error.one_line(file)) from None
    expected = content_id(result)
    if result.id != expected:
        raise SubmitError(
            f"{file} is not a valid result: id: {result.id} is not its content id {expected}"
        )
    return result


def _check_checkout(checkout: Path, remote: str, submitted: Sequence[Path] = ()) -> str:
    """The current branch (or commit, when detached); SubmitError when the checkout won't do.
    An untracked file that is one of the `submitted` files does not make it dirty (a result
    written inside the checkout, then submitted)."""
    if not checkout.is_dir():
        raise SubmitError(f"{checkout}: no such folder (the registry checkout)")
    try:
        top = _run(["git", "rev-parse", "--show-toplevel"], checkout)
    except GitError:
        raise SubmitError(f"{checkout} is not a git checkout of the registry") from None
    if Path(top).resolve() != checkout.resolve():
        raise SubmitError(f"{checkout} is inside the checkout {top}; pass its top folder")
    try:
        _run(["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"], checkout)
    except GitError:
        raise SubmitError(
            f"{checkout} has no commits; a registry checkout is a clone of your fork of it"
        ) from None
    if not is_registry_checkout(checkout):
        raise SubmitError(
            f"{checkout} is a git checkout, but not of the registry (it has no "
            "registry/results/ or registry/catalogs/): run submit in your clone of your fork "
            "of infermeter, or name it with --registry-checkout"
        )
    status = _run(["git", "status", "--porcelain", "-z", "--untracked-files=all"], checkout)
    ours = {path.resolve() for path in submitted}
    changed = [
        entry
        for entry in status.split("\0")
        if entry and not (entry.startswith("?? ") and (checkout / entry[3:]).resolve() in ours)
    ]
    if changed:
        more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
        raise SubmitError(
            f"{checkout} has uncommitted changes ({changed[0][3:]}{more}); "
            "commit or stash them first"
        )
    remotes = _run(["git", "remote"], checkout).split()
    if remote not in remotes:
        known = ", ".join(remotes) or "none"
        raise SubmitError(f"{checkout} has no remote {remote!r} (remotes: {known}); see --remote")
    branch = _run(["git", "rev-parse", "--abbrev-ref", "HEAD"], checkout)
    return _run(["git", "rev-parse", "HEAD"], checkout) if branch == "HEAD" else branch


def _check_identity(checkout: Path) -> None:
    """SubmitError when git in `checkout` has no name and email to commit under: found before
    any branch is made, not by the commit."""
    try:
        for ident in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
            _run(["git", "var", ident], checkout)
    except GitError:
        raise SubmitError(
            f"git has no identity to commit under in {checkout}: set user.email and user.name "
            "(`git config --global user.email you@example.com`, "
            "`git config --global user.name 'Your Name'`)"
        ) from None


def _github_repository(remote_url: str) -> str | None:
    match = re.match(
        r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
        r"([^/]+/[^/]+?)(?:\.git)?/?$",
        remote_url,
    )
    return match.group(1) if match else None


def _pull_request_command(
    message: str, branch: str, base: str, fork: str | None, upstream: str | None
) -> list[str]:
    """`gh pr create`. From a fork, gh needs the head as `owner:branch` (a bare branch name is
    looked up in the base repository); `upstream` (the `upstream` remote's repository, when
    the checkout has one) is the repository the pull request is opened in."""
    subject, _, body = message.partition("\n\n")
    head = f"{fork.split('/')[0]}:{branch}" if fork else branch
    repository = ["--repo", upstream] if upstream and upstream != fork else []
    return [
        "gh",
        "pr",
        "create",
        *repository,
        "--head",
        head,
        "--base",
        base,
        "--title",
        subject,
        "--body",
        body.rstrip("\n"),
    ]


def _remote_repository(checkout: Path, remote: str) -> str | None:
    """`owner/name` of a remote on GitHub; None when it is not one or not there.

    The URL as configured comes first: `git remote get-url` applies `url.<base>.insteadOf`, so
    a clone of `https://github.com/you/infermeter` fetched through a mirror or a local path
    would lose its GitHub name; the rewritten URL is the fallback (a shorthand such as
    `gh:you/infermeter` that insteadOf turns into a GitHub address)."""
    for command in (["git", "config", "--get", f"remote.{remote}.url"],
                    ["git", "remote", "get-url", remote]):  # fmt: skip
        try:
            repository = _github_repository(_run(command, checkout))
        except GitError:
            continue
        if repository is not None:
            return repository
    return None


@dataclass(frozen=True)
class _Submission:
    """A checked submission and every command that carries it out, in order."""

    files: tuple[Path, ...]
    placed: tuple[PurePosixPath, ...]  # where each file goes in the checkout
    texts: tuple[str, ...]  # each file's canonical text
    branch: str
    message: str
    create: list[str]  # `git switch --create`
    add: list[str]
    commit: list[str]
    push: list[str]
    back: list[str]  # back to the branch (or commit) the checkout was on
    fork: str | None  # the remote's repository on GitHub
    upstream: str | None  # the `upstream` remote's repository on GitHub
    pull_request: list[str]

    def placements(self) -> list[str]:
        """How each file gets to its place, as a shell command."""
        return [
            _placement_command(file, path, text)
            for file, path, text in zip(self.files, self.placed, self.texts, strict=True)
        ]

    def commands(self, checkout: Path) -> tuple[str, ...]:
        """Every command, as a contributor would run them by hand."""
        steps = (self.add, self.commit, self.push, self.back)
        return (
            _command_line(["cd", str(checkout)]),
            _command_line(self.create),
            *self.placements(),
            *(_command_line(step) for step in steps),
            _command_line(self.pull_request),
        )

    def outcome(
        self,
        commit: str | None,
        url: str | None,
        done: Sequence[str],
        remaining: Sequence[str],
    ) -> SubmitOutcome:
        return SubmitOutcome(
            self.branch,
            self.placed[0],
            self.message,
            commit,
            commit is not None,
            url,
            tuple(done),
            tuple(remaining),
            self.placed,
        )


def _check_new(
    checkout: Path, placed: Sequence[PurePosixPath], branch: str, files: Sequence[Path]
) -> None:
    """SubmitError when a file or the branch is in the checkout already (a submitted file at
    its own place, not committed, is said to be so: it was not submitted)."""
    submitted = {file.resolve() for file in files}
    for path in placed:
        target = checkout / path.as_posix()
        if target.exists() and target.resolve() in submitted:
            raise SubmitError(
                f"{path} is at its place in the checkout, not committed: submit it from a "
                "folder outside the checkout (move it there), or commit it yourself"
            )
        if target.exists():
            raise SubmitError(f"{path} is already in the checkout: this result was submitted")
    if len(set(placed)) < len(placed):
        raise SubmitError("two of the files are the same result")
    try:  # before the name reaches a git command, where `-D` or `--all` would be an option
        _run(["git", "check-ref-format", "--branch", branch], checkout)
    except GitError:
        raise SubmitError(f"{branch!r} is not a valid git branch name; see --branch") from None
    if _run(["git", "branch", "--list", branch], checkout):
        raise SubmitError(f"branch {branch!r} exists already in {checkout}; see --branch")


def _prepare(config: SubmitConfig) -> _Submission:
    """Every check, then the commands; nothing in the checkout changes."""
    files = (config.result_file, *config.more_files)
    checkout = config.checkout
    _check_submission(files, checkout)  # first: it reads hostile files safely
    results = [load_submission(file) for file in files]
    original = _check_checkout(checkout, config.remote, files)
    _check_identity(checkout)
    one = len(results) == 1
    branch = config.branch or (branch_name(results[0]) if one else set_branch_name(results))
    placed = tuple(result_path(result) for result in results)
    _check_new(checkout, placed, branch, files)
    message = commit_message(results[0]) if one else set_commit_message(results)
    fork = _remote_repository(checkout, config.remote)
    upstream = _remote_repository(checkout, "upstream") if config.remote != "upstream" else None
    return _Submission(
        files=files,
        placed=placed,
        texts=tuple(dumps_result(result) for result in results),
        branch=branch,
        message=message,
        create=["git", "switch", "--create", branch],
        add=["git", "add", "--", *(path.as_posix() for path in placed)],
        commit=["git", "commit", "--quiet", "--message", message],
        push=["git", "push", "--set-upstream", config.remote, branch],
        back=["git", "switch", *(["--detach"] if _is_commit(original) else []), original],
        fork=fork,
        upstream=upstream,
        pull_request=_pull_request_command(message, branch, config.base, fork, upstream),
    )


def _commit(submission: _Submission, checkout: Path) -> list[str]:
    """Write the files and commit them on the new branch; the commands done. On failure the
    checkout is left exactly as it was, branch included, and SubmitError says why."""
    placements = submission.placements()
    placed = submission.placed
    made = missing_folders(checkout / path.as_posix() for path in placed)
    _run(submission.create, checkout)
    done = [_command_line(submission.create), *placements]
    try:
        for path, text in zip(placed, submission.texts, strict=True):
            write_text_atomic(checkout / path.as_posix(), text)
        for step in (submission.add, submission.commit):
            _run(step, checkout, named=2)
            done.append(_command_line(step))
    except (GitError, OSError) as error:
        _run(
            ["git", "rm", "--cached", "--quiet", "--ignore-unmatch", "--", *map(str, placed)],
            checkout,
        )
        for path in placed:
            (checkout / path.as_posix()).unlink(missing_ok=True)
        remove_empty(made)
        _run(submission.back, checkout)
        _run(["git", "branch", "--delete", "--quiet", submission.branch], checkout)
        raise SubmitError(f"could not commit the result: {error}") from None
    return done


def _push(submission: _Submission, checkout: Path) -> list[str]:
    """Push the branch and switch back; a failed push keeps the commit and names the command."""
    try:
        _run(submission.push, checkout)
    except GitError as error:
        _run(submission.back, checkout)
        raise GitError(
            f"{error}; the commit is on branch {submission.branch!r} of {checkout}: push it "
            f"with `{_command_line(submission.push)}`"
        ) from None
    _run(submission.back, checkout)
    return [_command_line(submission.push), _command_line(submission.back)]


def _pull_request_by_hand(submission: _Submission, config: SubmitConfig) -> list[str]:
    """What is left to run without gh: its command, and the page that opens the same request."""
    fork, upstream, branch = submission.fork, submission.upstream, submission.branch
    remaining = [
        _command_line(["cd", str(config.checkout)]),
        _command_line(submission.pull_request),
    ]
    if upstream is not None and fork is not None and upstream != fork:
        owner = fork.split("/")[0]
        compare = f"{upstream}/compare/{config.base}...{owner}:{branch}"
        remaining.append(f"# or open https://github.com/{compare}")
    elif fork is not None:
        remaining.append(f"# or open https://github.com/{fork}/pull/new/{branch}")
    return remaining


def submit(config: SubmitConfig) -> SubmitOutcome:
    """Validate the result, commit it on a new branch of the checkout, push it, open a PR.

    Nothing is changed when the file is invalid, the checkout is dirty, the remote is
    unknown, or the file or branch exists already. With `dry_run`, nothing is changed at all
    and every command is returned in `remaining_commands`.
    """
    checkout = config.checkout
    submission = _prepare(config)
    if config.dry_run:
        return submission.outcome(None, None, (), submission.commands(checkout))
    done = _commit(submission, checkout)
    commit = _run(["git", "rev-parse", "HEAD"], checkout)
    done += _push(submission, checkout)
    if shutil.which("gh") is None:
        return submission.outcome(commit, None, done, _pull_request_by_hand(submission, config))
    output = _run(submission.pull_request, checkout)
    done.append(_command_line(submission.pull_request))
    url = output.splitlines()[-1] if output else None
    return submission.outcome(commit, url, done, ())


def _is_commit(reference: str) -> bool:
    # _check_checkout names a detached HEAD by its full commit hash, a branch by its name.
    return re.fullmatch(r"[0-9a-f]{40}", reference) is not None


def _placement_command(source: Path, relative: PurePosixPath, text: str) -> str:
    """`cp` when the file is already canonical text; otherwise what submit writes instead."""
    if source.read_text(encoding="utf-8") != text:
        # A comment ends at a line break: the name, escaped, stays on its line (a file named
        # 'x\nrm -rf ~\n.json' would otherwise print that command among the commands to run).
        return f"# write {relative} (the canonical JSON of {str(source)!r})"
    folder = relative.parent.as_posix()
    return f"mkdir -p {shlex.quote(folder)} && cp {shlex.quote(str(source))} {relative}"
