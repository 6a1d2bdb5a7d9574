"""registry.submit with real git: a bare repository is the contributor's fork, a clone the checkout.

`gh` cannot run here (it needs GitHub); where a test needs it, a stand-in script on PATH records
the arguments it was called with and prints a pull request URL, as `gh pr create` does.
"""

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from infermeter.bench.cli.main import main
from infermeter.registry.models import Result
from infermeter.registry.store import content_id, dumps_result, read_result, result_path
from infermeter.registry.submit import (
    SubmitConfig,
    SubmitError,
    SubmitOutcome,
    branch_name,
    commit_message,
    set_commit_message,
    submit,
)

EXAMPLES = Path(__file__).parent.parent / "examples/valid/results"
MEASURED = EXAMPLES / "measured-two-points.json"
REPORTED = EXAMPLES / "reported-throughput-only.json"
# The example's content id, read from it: a figure added to the example (a table's new column)
# re-mints it, and the branch and path below follow.
MEASURED_ID = read_result(MEASURED).id
GIT = shutil.which("git")

pytestmark = pytest.mark.skipif(GIT is None, reason="needs git")


def _git(cwd: Path, *arguments: str) -> str:
    completed = subprocess.run(
        ["git", *arguments], cwd=cwd, capture_output=True, text=True, check=True
    )
    return completed.stdout.strip()


@pytest.fixture
def no_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH with git only, so `gh` is absent whatever the machine has."""
    bin_dir = tmp_path / "bin-git-only"
    bin_dir.mkdir()
    assert GIT is not None
    (bin_dir / "git").symlink_to(GIT)
    monkeypatch.setenv("PATH", str(bin_dir))


@pytest.fixture
def fork(tmp_path: Path) -> Path:
    """A bare repository with one commit on `main`: the contributor's fork on the server."""
    seed = tmp_path / "seed"
    seed.mkdir()
    _git(seed, "init", "--quiet", "--initial-branch", "main")
    _git(seed, "config", "user.name", "Seed")
    _git(seed, "config", "user.email", "seed@example.com")
    (seed / "registry" / "results").mkdir(parents=True)  # what makes it the registry
    (seed / "registry" / "results" / ".gitkeep").write_text("", encoding="utf-8")
    _git(seed, "add", "registry")
    _git(seed, "commit", "--quiet", "--message", "seed")
    bare = tmp_path / "fork.git"
    _git(tmp_path, "clone", "--quiet", "--bare", str(seed), str(bare))
    return bare


@pytest.fixture
def checkout(tmp_path: Path, fork: Path) -> Path:
    """The contributor's clone of their fork, with a committer identity."""
    clone = tmp_path / "checkout"
    _git(tmp_path, "clone", "--quiet", str(fork), str(clone))
    _git(clone, "config", "user.name", "Contributor")
    _git(clone, "config", "user.email", "contributor@example.com")
    return clone


def test_submit_pushes_a_branch_with_the_file_at_its_path(
    checkout: Path, fork: Path, no_gh: None
) -> None:
    result = read_result(MEASURED)
    outcome = submit(SubmitConfig(result_file=MEASURED, checkout=checkout))
    branch = f"result/h100-sxm/llama-3.1-8b-instruct/{MEASURED_ID}"
    assert outcome.branch == branch == branch_name(result)
    assert outcome.pushed
    path = result_path(result).as_posix()
    assert path == f"registry/results/h100-sxm/llama-3.1-8b-instruct/2025-05-12-{MEASURED_ID}.json"
    on_remote = _git(fork, "show", f"{branch}:{path}")
    assert on_remote + "\n" == MEASURED.read_text(encoding="utf-8")
    assert _git(fork, "rev-parse", branch) == outcome.commit
    message = _git(fork, "log", "-1", "--format=%B", branch)
    assert message == commit_message(result).strip()
    subject = message.splitlines()[0]
    assert subject == ("Add result: llama-3.1-8b-instruct on 1× h100-sxm, vllm 0.8.5, chat profile")
    assert "Points: concurrency 8, concurrency 64" in message
    assert f"File: {path}" in message
    # Only the result file changed, and the contributor is back on their branch, clean.
    assert _git(fork, "diff", "--name-only", f"main..{branch}") == path
    assert _git(checkout, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert _git(checkout, "status", "--porcelain") == ""


def test_submit_without_gh_returns_the_exact_commands(checkout: Path, no_gh: None) -> None:
    outcome = submit(SubmitConfig(result_file=REPORTED, checkout=checkout, base="main"))
    subject, _, body = outcome.commit_message.partition("\n\n")
    assert outcome.pull_request_url is None
    assert outcome.remaining_commands == (
        f"cd {shlex.quote(str(checkout))}",
        shlex.join(
            [
                "gh", "pr", "create", "--head", outcome.branch, "--base", "main",
                "--title", subject, "--body", body.rstrip("\n"),
            ]
        ),
    )  # fmt: skip


def test_cli_submit_without_gh_prints_the_commands(checkout: Path, fork: Path, no_gh: None) -> None:
    outcome = CliRunner().invoke(
        main, ["registry", "submit", str(MEASURED), "--registry-checkout", str(checkout)]
    )
    assert outcome.exit_code == 0, outcome.output
    lines = outcome.output.splitlines()
    assert lines[0].startswith(
        f"committed registry/results/h100-sxm/llama-3.1-8b-instruct/2025-05-12-{MEASURED_ID}.json"
        f" on branch result/h100-sxm/llama-3.1-8b-instruct/{MEASURED_ID}"
    )
    assert lines[1] == "gh is not installed; to open the pull request, run:"
    assert lines[2] == f"cd {shlex.quote(str(checkout))}"
    command = shlex.split("\n".join(lines[3:]))
    assert command[:7] == [
        "gh", "pr", "create", "--head",
        f"result/h100-sxm/llama-3.1-8b-instruct/{MEASURED_ID}", "--base", "main",
    ]  # fmt: skip
    assert command[7:9] == [
        "--title",
        "Add result: llama-3.1-8b-instruct on 1× h100-sxm, vllm 0.8.5, chat profile",
    ]
    assert command[9] == "--body"
    assert command[10].startswith("Model: llama-3.1-8b-instruct")


def _submit_through_gh(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    config: SubmitConfig,
    pull_url: str = "https://github.com/infermeter/infermeter/pull/8",
) -> tuple[SubmitOutcome, list[str]]:
    """Submit with a stand-in for gh first on PATH, which answers like `gh pr create` with
    pull_url: the outcome and the arguments gh was called with."""
    bin_dir = tmp_path / "bin-gh"
    bin_dir.mkdir()
    record = tmp_path / "gh-args.json"
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        f"print({pull_url!r})\n",
        encoding="utf-8",
    )
    gh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    outcome = submit(config)
    arguments: list[str] = json.loads(record.read_text(encoding="utf-8"))
    return outcome, arguments


def test_submit_with_gh_opens_the_pull_request(
    tmp_path: Path, checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = SubmitConfig(result_file=MEASURED, checkout=checkout, base="trunk")
    pull_url = "https://github.com/example/infermeter/pull/7"
    outcome, arguments = _submit_through_gh(tmp_path, monkeypatch, config, pull_url)
    assert outcome.pull_request_url == "https://github.com/example/infermeter/pull/7"
    assert outcome.remaining_commands == ()
    assert arguments[:6] == ["pr", "create", "--head", outcome.branch, "--base", "trunk"]
    assert arguments[7] == outcome.commit_message.splitlines()[0]


def test_submit_refuses_a_dirty_checkout(checkout: Path, fork: Path, no_gh: None) -> None:
    (checkout / "notes.txt").write_text("work in progress\n", encoding="utf-8")
    head = _git(checkout, "rev-parse", "HEAD")
    with pytest.raises(SubmitError, match=r"has uncommitted changes \(notes.txt\)"):
        submit(SubmitConfig(result_file=MEASURED, checkout=checkout))
    assert _git(checkout, "rev-parse", "HEAD") == head
    assert _git(checkout, "branch", "--list", "result/*") == ""
    assert _git(fork, "branch", "--list", "result/*") == ""


def test_submit_refuses_an_invalid_file_and_commits_nothing(
    tmp_path: Path, checkout: Path, fork: Path, no_gh: None
) -> None:
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["points"][0]["ttft_ms"]["p95"] = 1.0  # below p50
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    head = _git(checkout, "rev-parse", "HEAD")
    with pytest.raises(SubmitError) as caught:
        submit(SubmitConfig(result_file=bad, checkout=checkout))
    message = str(caught.value)
    assert "\n" not in message
    assert "is not a valid result: points[0].ttft_ms" in message
    assert _git(checkout, "rev-parse", "HEAD") == head
    assert _git(checkout, "status", "--porcelain") == ""
    assert _git(checkout, "branch", "--list", "result/*") == ""
    assert _git(fork, "branch", "--list", "result/*") == ""


def test_submit_refuses_a_wrong_content_id(tmp_path: Path, checkout: Path, no_gh: None) -> None:
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    data["points"][0]["duration_s"] = 121.0  # content changed, id not re-minted
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SubmitError, match=f"id: {MEASURED_ID} is not the content id of this file"):
        submit(SubmitConfig(result_file=edited, checkout=checkout))


def test_submit_refuses_an_unknown_remote(checkout: Path, no_gh: None) -> None:
    with pytest.raises(SubmitError, match=r"no remote 'fork' \(remotes: origin\)"):
        submit(SubmitConfig(result_file=MEASURED, checkout=checkout, remote="fork"))


def test_submit_refuses_a_folder_that_is_not_a_checkout(tmp_path: Path, no_gh: None) -> None:
    with pytest.raises(SubmitError, match="is not a git checkout"):
        submit(SubmitConfig(result_file=MEASURED, checkout=tmp_path))


def test_submit_refuses_a_git_checkout_that_is_not_the_registry(
    tmp_path: Path, no_gh: None
) -> None:
    # It committed registry/results/… on a new branch of whatever repository it was run in
    # and pushed that branch to the repository's origin.
    other = tmp_path / "other-project"
    other.mkdir()
    _git(other, "init", "--quiet", "--initial-branch", "main")
    (other / "README.md").write_text("another project\n", encoding="utf-8")
    _git(other, "add", "README.md")
    _git(other, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-qm", "start")
    _git(other, "remote", "add", "origin", "https://github.com/someone/other-project.git")
    head = _git(other, "rev-parse", "HEAD")
    with pytest.raises(SubmitError) as caught:
        submit(SubmitConfig(result_file=MEASURED, checkout=other))
    assert str(caught.value) == (
        f"{other} is a git checkout, but not of the registry (it has no registry/results/ or "
        "registry/catalogs/): run submit in your clone of your fork of infermeter, or name "
        "it with --registry-checkout"
    )
    assert _git(other, "rev-parse", "HEAD") == head
    assert _git(other, "branch", "--list") == "* main"
    assert _git(other, "status", "--porcelain") == ""


def test_submit_refuses_a_repository_with_no_commits(tmp_path: Path, no_gh: None) -> None:
    # It said "`git rev-parse --abbrev-ref HEAD` failed: fatal: ambiguous argument 'HEAD': …"
    empty = tmp_path / "empty"
    empty.mkdir()
    _git(empty, "init", "--quiet", "--initial-branch", "main")
    _git(empty, "remote", "add", "origin", "https://github.com/someone/infermeter.git")
    for dry_run in (True, False):
        with pytest.raises(SubmitError) as caught:
            submit(SubmitConfig(result_file=MEASURED, checkout=empty, dry_run=dry_run))
        assert str(caught.value) == (
            f"{empty} has no commits; a registry checkout is a clone of your fork of it"
        )
    assert [path.name for path in empty.iterdir()] == [".git"]


def test_submit_of_a_file_at_its_own_place_says_it_is_not_committed(
    checkout: Path, no_gh: None
) -> None:
    # It said "… is already in the checkout: this result was submitted" of an untracked file.
    placed = checkout / result_path(read_result(MEASURED)).as_posix()
    placed.parent.mkdir(parents=True)
    shutil.copy(MEASURED, placed)
    with pytest.raises(SubmitError) as caught:
        submit(SubmitConfig(result_file=placed, checkout=checkout, dry_run=True))
    assert str(caught.value) == (
        f"{result_path(read_result(MEASURED))} is at its place in the checkout, not committed: "
        "submit it from a folder outside the checkout (move it there), or commit it yourself"
    )
    assert placed.read_bytes() == MEASURED.read_bytes()


def test_submit_twice_is_refused(checkout: Path, no_gh: None) -> None:
    submit(SubmitConfig(result_file=MEASURED, checkout=checkout))
    with pytest.raises(SubmitError, match="exists already"):
        submit(SubmitConfig(result_file=MEASURED, checkout=checkout))


@pytest.mark.parametrize("branch", ["--all", "-D", "--force", "a..b", "a~1", "a b", "x.lock"])
def test_cli_submit_refuses_a_branch_git_cannot_name_before_changing_anything(
    checkout: Path, no_gh: None, branch: str
) -> None:
    for dry_run in (["--dry-run"], []):
        outcome = CliRunner().invoke(main, ["registry", "submit", str(MEASURED),
                                            "--registry-checkout", str(checkout),
                                            f"--branch={branch}", *dry_run])  # fmt: skip
        assert outcome.exit_code == 1
        assert outcome.stderr.splitlines() == [
            f"Error: {branch!r} is not a valid git branch name; see --branch"
        ]
    assert _git(checkout, "branch", "--format=%(refname:short)") == "main"
    assert _git(checkout, "status", "--porcelain") == ""


def test_submit_refused_by_a_hook_leaves_the_checkout_as_it_was(
    checkout: Path, fork: Path, no_gh: None
) -> None:
    # A pre-commit hook that refuses: the branch, the file and the folders made for it go
    # (registry/results/h100-sxm/llama-3.1-8b-instruct/ stayed behind, empty, before), and the
    # refusal is named without the commit's whole message (600 characters, several lines).
    hook = checkout / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by the hook' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)

    def tree() -> list[Path]:  # the working tree (git's objects may keep the blob added)
        return sorted(p.relative_to(checkout) for p in checkout.rglob("*") if ".git" not in p.parts)

    before = tree()
    with pytest.raises(SubmitError) as caught:
        submit(SubmitConfig(result_file=MEASURED, checkout=checkout))
    refusal = "could not commit the result: `git commit` failed: refused by the hook"
    assert str(caught.value) == refusal
    assert tree() == before
    assert _git(checkout, "branch", "--format=%(refname:short)") == "main"
    assert _git(fork, "branch", "--list", "result/*") == ""


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]], ids=["submit", "dry-run"])
def test_cli_submit_without_a_git_identity_says_so_before_changing_anything(
    checkout: Path, tmp_path: Path, no_gh: None, monkeypatch: pytest.MonkeyPatch, dry_run: list[str]
) -> None:
    # No user.email anywhere: the commit failed after the branch was made (and the dry run
    # printed commands that could not commit); git's nine-line plea came as the error.
    for key in ("user.name", "user.email"):
        _git(checkout, "config", "--unset", key)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("EMAIL", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)
    outcome = CliRunner().invoke(
        main, ["registry", "submit", str(MEASURED), "--registry-checkout", str(checkout), *dry_run]
    )
    assert outcome.exit_code == 1, outcome.output
    assert outcome.stderr.splitlines() == [
        f"Error: git has no identity to commit under in {checkout}: set user.email and user.name "
        "(`git config --global user.email you@example.com`, `git config --global user.name "
        "'Your Name'`)"
    ]
    assert _git(checkout, "branch", "--format=%(refname:short)") == "main"
    assert sorted(path.name for path in checkout.iterdir()) == [".git", "registry"]


def test_submit_push_failure_keeps_the_commit_and_names_the_command(
    checkout: Path, tmp_path: Path, no_gh: None
) -> None:
    _git(checkout, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    with pytest.raises(SubmitError, match=r"git push --set-upstream origin result/") as caught:
        submit(SubmitConfig(result_file=MEASURED, checkout=checkout))
    assert "the commit is on branch" in str(caught.value)
    assert _git(checkout, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert _git(checkout, "branch", "--list", "result/*") != ""


def test_submit_dry_run_changes_nothing(checkout: Path, fork: Path, no_gh: None) -> None:
    head = _git(checkout, "rev-parse", "HEAD")
    outcome = submit(SubmitConfig(result_file=MEASURED, checkout=checkout, dry_run=True))
    assert outcome.commit is None
    assert not outcome.pushed
    assert outcome.remaining_commands[1] == f"git switch --create {outcome.branch}"
    assert outcome.remaining_commands[2].endswith(f"cp {MEASURED} {outcome.path}")
    assert outcome.remaining_commands[5] == f"git push --set-upstream origin {outcome.branch}"
    assert outcome.remaining_commands[6] == "git switch main"
    assert _git(checkout, "rev-parse", "HEAD") == head
    assert _git(checkout, "branch", "--list", "result/*") == ""
    assert _git(checkout, "status", "--porcelain") == ""


def test_submit_dry_run_commands_keep_a_file_name_one_word(
    tmp_path: Path, checkout: Path, no_gh: None
) -> None:
    text = REPORTED.read_text(encoding="utf-8")
    for name, content in (("x\nrm -rf ~\n.json", json.dumps(json.loads(text))),
                          ("y'; rm -rf ~; '\n.json", text)):  # fmt: skip
        source = tmp_path / name
        source.write_text(content, encoding="utf-8")
        config = SubmitConfig(result_file=source, checkout=checkout, dry_run=True)
        placement = submit(config).remaining_commands[2]
        if content == text:  # already canonical: copied
            words = shlex.split(placement)
            assert words[3:6] == ["&&", "cp", str(source)]
        else:  # what submit writes instead, said in a comment
            assert placement.startswith("# write ")
            assert placement.endswith(f"(the canonical JSON of {str(source)!r})")
            assert len(placement.splitlines()) == 1


def test_cli_submit_invalid_file_exits_1_with_one_line(
    tmp_path: Path, checkout: Path, no_gh: None
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    outcome = CliRunner().invoke(
        main, ["registry", "submit", str(bad), "--registry-checkout", str(checkout)]
    )
    assert outcome.exit_code == 1
    assert outcome.output.count("\n") == 1
    assert "is not a valid result" in outcome.output
    assert "Traceback" not in outcome.output


def test_cli_submit_dirty_checkout_exits_1(checkout: Path, no_gh: None) -> None:
    (checkout / "README.md").write_text("changed\n", encoding="utf-8")
    outcome = CliRunner().invoke(
        main, ["registry", "submit", str(MEASURED), "--registry-checkout", str(checkout)]
    )
    assert outcome.exit_code == 1
    assert "has uncommitted changes (README.md)" in outcome.output


def test_submit_a_set_puts_every_file_in_one_commit_on_one_branch(
    checkout: Path, fork: Path, no_gh: None
) -> None:
    config = SubmitConfig(result_file=MEASURED, checkout=checkout, more_files=(REPORTED,))
    outcome = submit(config)
    first, second = read_result(MEASURED), read_result(REPORTED)
    assert outcome.paths == (result_path(first), result_path(second))
    assert outcome.branch == f"results/{first.identity.model.id}/{first.id}-2"
    assert _git(fork, "rev-parse", outcome.branch) == outcome.commit
    committed = _git(fork, "show", "--name-only", "--format=", outcome.branch).splitlines()
    assert sorted(committed) == sorted(p.as_posix() for p in outcome.paths)
    subject = _git(fork, "log", "-1", "--format=%s", outcome.branch)
    assert subject.startswith("Add 2 results: ")
    body = _git(fork, "log", "-1", "--format=%b", outcome.branch)
    assert f"- {result_path(first).as_posix()}: " in body
    assert f"- {result_path(second).as_posix()}: " in body
    assert _git(checkout, "status", "--porcelain") == ""


def test_submit_a_set_with_one_result_twice_changes_nothing(
    tmp_path: Path, checkout: Path, no_gh: None
) -> None:
    copy = tmp_path / "again.json"
    copy.write_text(MEASURED.read_text(encoding="utf-8"), encoding="utf-8")
    head = _git(checkout, "rev-parse", "HEAD")
    outcome = CliRunner().invoke(
        main,
        ["registry", "submit", str(MEASURED), str(copy), "--registry-checkout", str(checkout)],
    )
    assert outcome.exit_code == 1
    assert outcome.output.count("\n") == 1
    assert "the results do not validate together" in outcome.output
    assert _git(checkout, "rev-parse", "HEAD") == head
    assert _git(checkout, "branch", "--list", "results/*") == ""
    assert _git(checkout, "status", "--porcelain") == ""


INVALID = sorted((Path(__file__).parent.parent / "examples/invalid/results").glob("*.json"))


@pytest.mark.parametrize("path", INVALID, ids=lambda path: path.name)
def test_submit_refuses_every_file_registry_validate_refuses(
    path: Path, checkout: Path, fork: Path, no_gh: None
) -> None:
    # Submit runs every check validate runs: physics, catalog ids, counts, not only the model.
    from infermeter.registry.validate import validate_paths

    assert not validate_paths([path], registry_root=checkout).ok
    head = _git(checkout, "rev-parse", "HEAD")
    with pytest.raises(SubmitError) as caught:
        submit(SubmitConfig(result_file=path, checkout=checkout))
    assert "\n" not in str(caught.value)
    assert _git(checkout, "rev-parse", "HEAD") == head
    assert _git(checkout, "status", "--porcelain") == ""
    assert _git(fork, "for-each-ref", "refs/heads/result") == ""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("throughput-above-compute-roofline.json", "points[0].throughput.output_tokens_per_s: "),
        ("decode-faster-than-memory-bandwidth.json", "exceeds the memory-bandwidth bound"),
        ("unknown-gpu-id.json", "identity.gpu.id: unknown GPU id 'h100-sxm5'"),
    ],
)
def test_cli_submit_names_the_check_that_refused(
    name: str, expected: str, checkout: Path, no_gh: None
) -> None:
    path = Path(__file__).parent.parent / "examples/invalid/results" / name
    outcome = CliRunner().invoke(
        main, ["registry", "submit", str(path), "--registry-checkout", str(checkout)]
    )
    assert outcome.exit_code == 1
    assert outcome.output.count("\n") == 1
    assert f"{name} is not a valid result: " in outcome.output
    assert expected in outcome.output


def _github_remotes(checkout: Path, fork: Path, upstream: bool) -> None:
    # The fork's remote reads as GitHub's URL; pushes go to the local bare repository.
    _git(checkout, "remote", "set-url", "origin", "https://github.com/contributor/infermeter.git")
    github_fork = "https://github.com/contributor/infermeter.git"
    _git(checkout, "config", f"url.{fork}.pushInsteadOf", github_fork)
    if upstream:
        _git(checkout, "remote", "add", "upstream", "https://github.com/infermeter/infermeter")


def test_submit_from_a_fork_names_the_head_owner_and_branch(
    tmp_path: Path, checkout: Path, fork: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _github_remotes(checkout, fork, upstream=True)
    config = SubmitConfig(result_file=MEASURED, checkout=checkout)
    outcome, arguments = _submit_through_gh(tmp_path, monkeypatch, config)
    assert _git(fork, "rev-parse", outcome.branch) == outcome.commit  # pushed to the fork
    assert arguments[:8] == [
        "pr", "create", "--repo", "infermeter/infermeter",
        "--head", f"contributor:{outcome.branch}", "--base", "main",
    ]  # fmt: skip


def test_submit_from_a_fork_without_gh_prints_the_compare_link(
    checkout: Path, fork: Path, no_gh: None
) -> None:
    _github_remotes(checkout, fork, upstream=True)
    outcome = submit(SubmitConfig(result_file=MEASURED, checkout=checkout))
    command = shlex.split(outcome.remaining_commands[1])
    assert command[command.index("--head") + 1] == f"contributor:{outcome.branch}"
    assert outcome.remaining_commands[2] == (
        "# or open https://github.com/infermeter/infermeter/compare/"
        f"main...contributor:{outcome.branch}"
    )


def test_submit_to_its_own_repository_still_names_the_owner(
    tmp_path: Path, checkout: Path, fork: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _github_remotes(checkout, fork, upstream=False)
    config = SubmitConfig(result_file=MEASURED, checkout=checkout)
    outcome, arguments = _submit_through_gh(tmp_path, monkeypatch, config)
    assert arguments[:6] == ["pr", "create", "--head", f"contributor:{outcome.branch}",
                             "--base", "main"]  # fmt: skip


FORGED = "\n\nSigned-off-by: A Maintainer <m@example.com>\nCo-authored-by: Someone <s@example.com>"


def _trailers(message: str) -> list[str]:
    """The trailers git reads in a commit message (`git interpret-trailers --parse`)."""
    parsed = subprocess.run(["git", "interpret-trailers", "--parse"], input=message,
                            capture_output=True, text=True, check=True)  # fmt: skip
    return [line.split(":")[0] for line in parsed.stdout.splitlines()]


def _with_forged_trailers(path: Path) -> Result:
    """The result at `path` whose engine version and submitter end in forged trailers, made in
    memory (the models refuse a line break in such a field: `registry.models.common.Text`)."""
    result = read_result(path)
    engine = result.identity.engine
    engine = engine.model_copy(update={"version": engine.version + FORGED})
    source = result.source.model_copy(update={"submitter": "alice" + FORGED})
    identity = result.identity.model_copy(update={"engine": engine})
    result = result.model_copy(update={"identity": identity, "source": source})
    return result.model_copy(update={"id": content_id(result)})


def test_submit_refuses_a_value_that_would_forge_commit_trailers(
    tmp_path: Path, checkout: Path, no_gh: None
) -> None:
    hostile = tmp_path / "hostile.json"
    hostile.write_text(dumps_result(_with_forged_trailers(MEASURED)))
    with pytest.raises(SubmitError, match=r"identity\.engine\.version: .* holds a line break"):
        submit(SubmitConfig(result_file=hostile, checkout=checkout))


def test_commit_message_holds_each_value_on_its_line() -> None:
    message = commit_message(_with_forged_trailers(MEASURED))
    assert message.splitlines()[0] == (
        "Add result: llama-3.1-8b-instruct on 1× h100-sxm, vllm 0.8.5 Signed-off-by: A "
        "Maintainer <m@example.com> Co-authored-by: Someone <s@example.com>, chat profile"
    )
    assert message.count("\n\n") == 1  # a subject, then one paragraph of facts
    assert "Source: measured with infermeter 0.1.0 by alice Signed-off-by: A" in message
    trailers = _trailers(message + "\n")
    assert trailers == ["Model", "GPU", "Engine", "Profile", "Points", "Source", "File", "Id"]
    both = [_with_forged_trailers(MEASURED), _with_forged_trailers(REPORTED)]
    assert "Signed-off-by" not in _trailers(set_commit_message(both))
    assert set_commit_message(both).count("\n") == 4  # subject, blank line, one line each
