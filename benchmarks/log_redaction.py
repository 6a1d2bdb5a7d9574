"""How fast the vLLM log beside a result is redacted (`registry.secrets.LogRedactor`), in MB/s.

The log is redacted in a thread of the process that measures, so its cost is CPU taken from
the client: it must stay small for vLLM's startup lines (tests/data/vllm_startup_logs.yaml,
repeated to 10 MB), for the request lines that vLLM before 0.10 logs for every request (an
8,000-token prompt's ids: "max_tokens" and "prompt_token_ids" in them, no secret), and for a
log with a secret in every line. Prints MB/s per kind; run with
`.venv/bin/python benchmarks/log_redaction.py`.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from infermeter.registry.secrets import LogRedactor

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
READ_CHARS = 65536


def megabytes_per_s(text: str) -> float:
    """MB/s to redact `text` fed in 64 Ki-character reads, as the server log's pipe gives it."""
    redactor = LogRedactor()
    started = time.perf_counter()
    for at in range(0, len(text), READ_CHARS):
        redactor.feed(text[at : at + READ_CHARS])
    redactor.finish()
    return len(text) / 1e6 / (time.perf_counter() - started)


def main() -> None:
    cases = yaml.safe_load((DATA / "vllm_startup_logs.yaml").read_text())["cases"]
    startup = "".join(case["excerpt"] for case in cases)
    ids = ", ".join(str(token) for token in range(8000))
    request = (
        "INFO 05-12 09:30:01 [logger.py:39] Received request cmpl-1: prompt: 'hi', params: "
        f"SamplingParams(n=1, max_tokens=128), prompt_token_ids: [{ids}], lora_request: None\n"
    )
    secret = "INFO 05-12 09:30:01 [utils.py:326] non-default args: {'api_key': ['s3cr3t']}\n"
    for kind, line in (("startup log", startup), ("request lines", request), ("secrets", secret)):
        text = line * max(1, 10_000_000 // len(line))
        print(f"{kind:14s} {len(text) / 1e6:5.1f} MB: {megabytes_per_s(text):6.1f} MB/s")


if __name__ == "__main__":
    main()
