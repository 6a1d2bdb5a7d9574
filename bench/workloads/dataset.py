"""Prompts from files: the ShareGPT dataset loader, its rows and digest, and the tokenizer.

`read_json_rows` reads one JSON array or JSON lines (also `bench.workloads.conversation`'s
sessions); `load_sharegpt` takes each conversation's first human turn and the reply after it;
`load_tokenizer` loads a `tokenizers.Tokenizer` (extra `bench`) for exact prompt lengths.
Errors are `WorkloadFileError`s naming the file (and line) and the option.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from infermeter.bench.errors import BenchConfigError, WorkloadFileError
from infermeter.calculators.json_text import json_loads
from infermeter.registry.input_files import InputFileError, check_regular_file, read_input_text
from infermeter.registry.models.common import HF_REPO_PATTERN


class Tokenizer(Protocol):
    """The part of a `tokenizers.Tokenizer` that prompt synthesis uses."""

    def encode(
        self,
        sequence: Any,
        pair: Any | None = ...,
        is_pretokenized: bool = ...,
        add_special_tokens: bool = ...,
    ) -> Any: ...

    def decode(self, ids: list[int], skip_special_tokens: bool = ...) -> str: ...


@dataclass(frozen=True)
class DatasetEntry:
    """One prompt from a dataset, with the length of the reply the dataset recorded."""

    prompt: str
    input_tokens: int
    reference_output_tokens: int


def read_json_rows(path: Path) -> list[tuple[int, Any]]:
    """A dataset file's rows with the number a reader finds them by: one JSON array (element
    numbers) or JSON lines (line numbers, blank lines skipped). Raises WorkloadFileError naming
    the file, and the line that is no JSON."""
    try:
        text = read_input_text(path, "dataset")
    except InputFileError as error:
        raise WorkloadFileError(str(error), "--dataset") from None
    rows: list[tuple[int, Any]] = []
    if text.lstrip().startswith("["):
        try:
            rows = list(enumerate(json_loads(text), start=1))
        except ValueError as error:
            raise WorkloadFileError(f"{path}: not JSON: {error}", "--dataset") from None
    else:
        # Lines end at a line feed alone: str.splitlines also breaks at U+2028, U+2029 and
        # U+0085, which a JSON string holds unescaped (json.dumps(…, ensure_ascii=False)).
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                rows.append((number, json_loads(line)))
            except ValueError as error:
                raise WorkloadFileError(
                    f"{path}:{number}: not a JSON line: {error}", "--dataset"
                ) from None
    return rows


def message_text(content: object) -> str | None:
    """A message's text: the string, or a list of content parts that are all text (OpenAI's
    `[{"type": "text", "text": …}]`) joined by line breaks, as vLLM's chat parser joins them;
    None for anything else (an image part cannot be sent as text)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        return None
    texts = [
        text
        for part in content
        if isinstance(part, dict) and part.get("type") == "text"
        if isinstance(text := part.get("text"), str)
    ]
    return "\n".join(texts) if len(texts) == len(content) else None


def dataset_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a dataset file's bytes, which the result records beside its name
    (two files of one name are two workloads). Raises WorkloadFileError naming the file."""
    try:
        check_regular_file(path, "dataset")
        with path.open("rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except InputFileError as error:
        raise WorkloadFileError(str(error), "--dataset") from None
    except OSError as error:
        raise WorkloadFileError(f"{path}: cannot read: {error}", "--dataset") from None


def load_sharegpt(path: Path, tokenizer: Tokenizer | None = None) -> list[DatasetEntry]:
    """Read a ShareGPT-format dataset: JSON lines (or one JSON array) of objects whose
    `conversations` list holds `{"from": "human"|"gpt", "value": text}` turns. Each entry's
    prompt is its first human turn and its reference output the reply that follows. Token
    counts use the tokenizer when given, else the word count."""
    rows = read_json_rows(path)

    def count(value: str) -> int:
        if tokenizer is not None:
            return len(tokenizer.encode(value, add_special_tokens=False).ids)
        return len(value.split())

    entries: list[DatasetEntry] = []
    for number, row in rows:
        turns = row.get("conversations") if isinstance(row, dict) else None
        if not isinstance(turns, list):
            raise WorkloadFileError(
                f"{path}:{number}: expected an object with a `conversations` list", "--dataset"
            )
        for first, second in itertools.pairwise(turns):
            if (
                isinstance(first, dict)
                and isinstance(second, dict)
                and first.get("from") == "human"
                and second.get("from") == "gpt"
                and isinstance(first.get("value"), str)
                and isinstance(second.get("value"), str)
            ):
                prompt, reply = first["value"], second["value"]
                if prompt.strip() and reply.strip():
                    entries.append(DatasetEntry(prompt, count(prompt), max(count(reply), 1)))
                break
    if not entries:
        raise WorkloadFileError(
            f"{path}: no conversation with a human turn followed by a gpt turn", "--dataset"
        )
    return entries


def load_tokenizer(name_or_path: str) -> Tokenizer:
    """A `tokenizers.Tokenizer` from a `tokenizer.json` file, a folder holding one, or a
    Hugging Face model id (downloaded). A name that is on disk is read there, never looked up
    on the Hub (a folder without tokenizer.json, a FIFO: one line saying so); one that is not
    must be an id `owner/name`."""
    try:
        from tokenizers import Tokenizer as HfTokenizer
    except ImportError:
        raise BenchConfigError(
            "needs the `tokenizers` package: pip install 'infermeter[bench]'", "--tokenizer"
        ) from None
    path = Path(name_or_path)
    on_disk = os.path.lexists(path)
    if on_disk:
        path = path / HUB_TOKENIZER_FILE if path.is_dir() else path
        try:
            check_regular_file(path, "tokenizer")
        except InputFileError as error:
            raise WorkloadFileError(str(error), "--tokenizer") from None
    elif not re.fullmatch(HF_REPO_PATTERN, name_or_path):
        raise WorkloadFileError(
            f"{name_or_path}: no such file or folder, nor a Hugging Face id (owner/name)",
            "--tokenizer",
        )
    else:
        _check_hub_reachable(name_or_path)
    try:
        if on_disk:
            tokenizer: Tokenizer = HfTokenizer.from_file(str(path))
        else:
            tokenizer = HfTokenizer.from_pretrained(name_or_path)
    except Exception as error:  # the library raises bare Exception subclasses of its own
        raise WorkloadFileError(
            f"cannot load tokenizer {name_or_path!r}: {error}", "--tokenizer"
        ) from None
    return tokenizer


HUB_TOKENIZER_FILE = "tokenizer.json"
_GIVE_A_PATH = f"pass --tokenizer PATH to a {HUB_TOKENIZER_FILE} (or a folder holding one)"


def _check_hub_reachable(repo_id: str) -> None:
    """Refuse at once a Hugging Face id whose tokenizer is not in the local cache on a host
    that cannot download it: offline mode (`HF_HUB_OFFLINE`), or a Hub that does not answer
    one request. Without this, `from_pretrained` retries an unanswered request for about 23 s
    before it fails. A cached tokenizer is left to `from_pretrained`, which refreshes it where
    the Hub answers and reads the cache at once where it does not."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub import try_to_load_from_cache as cached

    if isinstance(cached(repo_id, HUB_TOKENIZER_FILE), str):
        return
    if constants.HF_HUB_OFFLINE:
        raise WorkloadFileError(
            f"{repo_id}: HF_HUB_OFFLINE is set and its {HUB_TOKENIZER_FILE} is not in the "
            f"Hugging Face cache; {_GIVE_A_PATH}",
            "--tokenizer",
        )
    try:
        get_hf_file_metadata(hf_hub_url(repo_id, HUB_TOKENIZER_FILE))  # one try, no retries
    except Exception as error:  # the HTTP client's (httpx or requests, by version) or the Hub's
        if getattr(error, "response", None) is not None:
            return  # the Hub answered (gated, not found …): from_pretrained says what it said
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise WorkloadFileError(
            f"{repo_id}: the Hugging Face Hub ({constants.ENDPOINT}) cannot be reached "
            f"({reason}) and its {HUB_TOKENIZER_FILE} is not in the Hugging Face cache; "
            f"{_GIVE_A_PATH}",
            "--tokenizer",
        ) from None
