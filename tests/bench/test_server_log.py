"""The vLLM log kept beside a result holds no secret: `registry.secrets.redact_text` and
`LogRedactor` on a real log with planted secrets (tests/data/vllm_server_log_secrets.yaml),
and `bench.launch.server_log.RedactedLog` copying a real child process's output."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from infermeter.bench.launch.server_log import RedactedLog
from infermeter.bench.launch.vllm_log import parse_startup_log
from infermeter.registry.secrets import REDACTED, LogRedactor, find_secret, redact_text

DATA = Path(__file__).resolve().parent.parent / "data"
LOG = yaml.safe_load((DATA / "vllm_server_log_secrets.yaml").read_text())
STARTUP_CASES = yaml.safe_load((DATA / "vllm_startup_logs.yaml").read_text())["cases"]


def _no_secret(text: str) -> None:
    for secret in LOG["secrets"]:
        assert secret not in text, secret


def test_redact_text_real_vllm_log_keeps_no_planted_secret_and_every_other_line() -> None:
    redacted = redact_text(LOG["excerpt"])
    _no_secret(redacted)
    for line in LOG["kept"]:
        assert line in redacted, line
    assert redacted.count(REDACTED) == 8  # abc-123 twice, the other six once
    assert len(redacted.splitlines()) == len(LOG["excerpt"].splitlines())
    assert find_secret(redacted) is None
    assert find_secret(LOG["excerpt"]) is not None


def test_find_secret_names_a_key_in_vllm_args_dict() -> None:
    line = "non-default args: {'model': 'm', 'api_key': ['k-1'], 'hf_token': None}"
    assert find_secret(line) == "the value of `api_key` (an API key, token or password)"
    assert find_secret(line.replace("['k-1']", "None")) is None


@pytest.mark.parametrize("seed", range(4))
def test_log_redactor_in_pieces_writes_what_the_whole_text_gives(seed: int) -> None:
    rng = random.Random(seed)
    text = LOG["excerpt"] * 3
    redactor = LogRedactor(max_line_chars=256, overlap_chars=64)  # the long lines get cut
    out, at = [], 0
    while at < len(text):
        size = rng.randint(1, 40)
        out.append(redactor.feed(text[at : at + size]))
        at += size
    out.append(redactor.finish())
    joined = "".join(out)
    _no_secret(joined)
    assert joined.replace(REDACTED, "").count("'api_key': ['']") == 3
    assert len(joined.splitlines()) == len(text.splitlines())


def test_log_redactor_overlong_line_is_cut_between_secrets_never_inside() -> None:
    # Every shift puts the cut somewhere else: between a name and its value, inside a value.
    secrets = ("planted-option-value", "planted-pair-value", "planted-header-value")
    pairs = f"--api-key {secrets[0]} 'hf_token': '{secrets[1]}' Authorization: Bearer {secrets[2]}"
    for shift in range(160):
        line = "a " * shift + pairs + " b" * 60 + "\n"
        redactor = LogRedactor(max_line_chars=96, overlap_chars=48)
        out = [redactor.feed(line[at : at + 5]) for at in range(0, len(line), 5)]
        joined = "".join(out) + redactor.finish()
        assert not [secret for secret in secrets if secret in joined], shift
        assert joined == redact_text(line), shift


def test_log_redactor_huge_line_holds_at_most_one_window() -> None:
    line = " ".join(f"w{n}" for n in range(60_000)) + " --api-key planted-at-the-end\n"
    redactor = LogRedactor(max_line_chars=8_192, overlap_chars=1_024)
    out, largest_held = [], 0
    for at in range(0, len(line), 5_000):
        out.append(redactor.feed(line[at : at + 5_000]))
        largest_held = max(largest_held, len(redactor._held))
    joined = "".join(out) + redactor.finish()
    assert largest_held <= redactor.max_line_chars
    assert joined == line.replace("planted-at-the-end", REDACTED)


@pytest.mark.parametrize("case", STARTUP_CASES[:6], ids=[case["id"] for case in STARTUP_CASES[:6]])
def test_redacted_log_gives_the_same_startup_figures(case: dict[str, Any]) -> None:
    assert parse_startup_log(redact_text(case["excerpt"])) == parse_startup_log(case["excerpt"])


def test_redacted_log_copies_a_child_output_and_sync_makes_it_readable(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = (
        "import sys, time, pathlib\n"
        f"sys.stdout.write({LOG['excerpt']!r})\n"
        "sys.stdout.write('half a line: --api-key abc-123 ')\n"
        "sys.stdout.flush()\n"
        f"pathlib.Path({str(ready)!r}).write_text('1')\n"
        "time.sleep(0.5)\n"
        "sys.stdout.write('and its end\\n' + 'x' * 300000)\n"
    )
    log = RedactedLog(tmp_path / "server.vllm.log")
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert child.stdout is not None
    log.attach(child.stdout)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    log.sync()
    written = log.path.read_text()
    assert "Using max model len 40960" in written  # the complete lines, at once
    assert "half a line" not in written  # an unfinished line waits for its end
    child.wait(30)
    log.close()
    written = log.path.read_text()
    _no_secret(written)
    assert "half a line: --api-key REDACTED and its end\n" in written
    assert written.endswith("x" * 1000)
