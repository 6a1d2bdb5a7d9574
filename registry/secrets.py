"""Secrets in command lines and texts: found, and replaced by REDACTED before anything is stored.

A result file is published; its `source.command` and `source.server_command` are the exact
command lines, which may carry an API key (`--api-key S`, also inside `--vllm-arg "--api-key
S"`), a token (`--hf-token`), an `Authorization:` header, or an environment assignment such as
`HF_TOKEN=…`. `redact` replaces each value with `REDACTED` and keeps the rest of the line as it
was; `find_secret` says what a text still carries (`registry validate` rejects such a file).

What counts as a secret:
- the value of an option whose name ends in key, token, secret, password or credential(s)
  (`--api-key`, `--hf-token`, `--aws-secret`; not `--max-num-batched-tokens`);
- the value of an environment assignment whose name ends the same way (`HF_TOKEN=…`,
  `OPENAI_API_KEY=…`);
- the value of an `Authorization`, `X-Api-Key` or `Api-Key` header;
- a string shaped like a known token (Hugging Face `hf_…`, OpenAI `sk-…`, GitHub `ghp_…` and
  `github_pat_…`, GitLab `glpat-…`, Slack `xox?-…`, AWS `AKIA…`).
"""

from __future__ import annotations

import re
import shlex

REDACTED = "REDACTED"  # a plain word: shlex.join leaves it unquoted

_NAME_END = r"(?:key|token|secret|password|passwd|credentials?)"
_OPTION = re.compile(rf"--?(?:[A-Za-z0-9]+[-_])*{_NAME_END}", re.I)
_OPTION_VALUE = re.compile(
    rf"(?<![\w-])(?P<name>--?(?:[A-Za-z0-9]+[-_])*{_NAME_END})(?P<gap>=|\s+)(?P<value>\S+)", re.I
)
# Environment variables are upper case: HF_TOKEN=…, OPENAI_API_KEY=… (not monkey=3).
_ENV = re.compile(
    r"(?<![A-Za-z0-9_])(?P<name>[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?))"
    r"=(?P<value>[^\s'\"]+)"
)
_HEADER = re.compile(
    r"(?P<name>\b(?:authorization|x-api-key|api-key)\s*:\s*(?:(?:bearer|basic|token)\s+)?)"
    r"(?P<value>[^\s'\"]+)",
    re.I,
)
_SHAPES = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16})\b"
)


def _is_redacted(value: str) -> bool:
    return value.strip("'\"") == REDACTED


def _redact_text(text: str) -> str:
    text = _HEADER.sub(lambda m: m.group("name") + REDACTED, text)
    text = _ENV.sub(lambda m: f"{m.group('name')}={REDACTED}", text)
    return _SHAPES.sub(REDACTED, text)


def redact(command: str) -> str:
    """`command` with every secret value replaced by REDACTED (see the module docstring); a
    command line stays a command line (split and joined like a shell would)."""
    try:
        words = shlex.split(command)
    except ValueError:  # not a shell line: redact the text as it is
        return _OPTION_VALUE.sub(
            lambda m: m.group("name") + m.group("gap") + REDACTED, _redact_text(command)
        )
    return shlex.join(_redact_words(words))


def _redact_words(words: list[str]) -> list[str]:
    redacted: list[str] = []
    hide_next = False
    for word in words:
        if hide_next:
            redacted.append(REDACTED)
            hide_next = False
            continue
        name, equals, value = word.partition("=")
        if _OPTION.fullmatch(name):
            if equals:
                redacted.append(f"{name}={REDACTED}")
            else:
                redacted.append(word)
                hide_next = True
            continue
        if equals and _OPTION.fullmatch(value):  # --vllm-arg=--api-key S
            redacted.append(word)
            hide_next = True
            continue
        if " " in word.strip():  # an argument that is itself a command line (--vllm-arg "…")
            redacted.append(redact(word))
            continue
        redacted.append(_redact_text(word))
    return redacted


def find_secret(text: str) -> str | None:
    """What secret `text` carries (named, never shown), or None."""
    for match in _OPTION_VALUE.finditer(text):
        if not _is_redacted(match.group("value")) and not match.group("value").startswith("-"):
            return f"the value of {match.group('name')} (an API key, token or password)"
    for match in _ENV.finditer(text):
        if not _is_redacted(match.group("value")):
            return f"the value of {match.group('name')} (an API key, token or password)"
    for match in _HEADER.finditer(text):
        if not _is_redacted(match.group("value")):
            return "an authorization header's value"
    if _SHAPES.search(text):
        return "a string shaped like an access token"
    return None
