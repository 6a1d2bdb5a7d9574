"""Traffic profiles, length distributions, prompt synthesis and the ShareGPT dataset loader.

Built-in profiles (input and output lengths in tokens; the spec syntax is `parse_length`'s):

| profile | input length                 | output length                | for                     |
|---------|------------------------------|------------------------------|-------------------------|
| `chat`  | `lognormal:512:0.7`, 32–4096 | `lognormal:256:0.6`, 16–1024 | interactive chat        |
| `rag`   | `uniform:8192:32768`         | `normal:128:32`, 32–256      | long input, short reply |
| `batch` | `normal:1024:256`, 128–2048  | `fixed:1024`                 | offline, max throughput |
| `chat-multiturn` | `lognormal:128:0.6`, 16–1024 | `lognormal:192:0.6`, 16–1024 | multi-turn chat |

`chat-multiturn`'s lengths are those of each new user message and each reply; every turn sends
the whole history before it (`bench.conversation`).

Everything is reproducible from the seed: request i's lengths come from a generator seeded
with `(seed, i)`, its prompt text from one seeded with `(seed, salt, i)`, so a run can change
the salt (new text, same lengths) to defeat a server's prefix cache that is still warm from an
earlier run. Within a run, request indices are never reused, and every prompt starts with
random words, so prompts share no prefix block (the prefix cache does not flatter).

To measure prefix caching on purpose, `shared_prefix_tokens` N makes every prompt start with
the same N-token prefix (seeded by seed and salt) followed by its own words; the prefix counts
towards the prompt's drawn length, so the lengths stay those of the distribution, and a prompt
drawn no longer than N is the first tokens of the prefix itself. It applies to synthesised
prompts only (not to a dataset's).

Prompt text is a seeded sequence of common English words. With a tokenizer (the `tokenizers`
library, extra `bench`) it is cut or extended until it encodes to the exact token count.
Without one, there is one word per intended token, the count is approximate, and the server's
`usage.prompt_tokens` is the figure reported.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from bench.client import PromptRequest
from bench.errors import BenchConfigError, WorkloadFileError

DistributionKind = Literal["fixed", "uniform", "normal", "lognormal"]

# Common English words that most BPE vocabularies hold as one token (with a leading space).
_WORD_TEXT = (
    "the of and to in is was for on are with as his they at be this from have or by one had "
    "not but what all were when we there can an your which their said if do will each about "
    "how up out them then she many some so these would other into has more her two like him "
    "see time could no make than first been its who now people my made over did down only way "
    "find use may water long little very after words called just where most know get through "
    "back much before go good new write our used me man too any day same right look think also "
    "around another came come work three word must because does part even place well such here "
    "take why things help put years different away again off went old number great tell men "
    "say small every found still between name should home big give air line set own under "
    "read last never us left end along while might next sound below saw something thought both "
    "few those always looked show large often together asked house world going want school "
    "important until form food keep children feet land side without boy once animals life "
    "enough took sometimes four head above kind began almost live page got earth need far hand "
    "high year mother light parts country father let night following picture being study second "
    "eyes soon times story boys since white days ever paper hard near sentence better best across"
)
_WORDS = tuple(_WORD_TEXT.split())
PROMPT_WORDS = _WORDS
"""The words synthetic prompts are made of (also `bench.conversation`'s user messages)."""


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
class LengthDistribution:
    """A distribution of token counts, clipped to [minimum, maximum].

    fixed: `a`; uniform: integers in [a, b]; normal: mean a, standard deviation b;
    lognormal: median a, sigma b (of the underlying normal).
    """

    kind: DistributionKind
    a: float
    b: float = 0.0
    minimum: int = 1
    maximum: int | None = None

    def sample(self, rng: random.Random) -> int:
        """One length drawn from the distribution."""
        if self.kind == "fixed":
            value = self.a
        elif self.kind == "uniform":
            value = rng.randint(int(self.a), int(self.b))
        elif self.kind == "normal":
            value = rng.gauss(self.a, self.b)
        else:
            value = rng.lognormvariate(math.log(self.a), self.b)
        length = max(self.minimum, round(value))
        return min(length, self.maximum) if self.maximum is not None else length

    def describe(self) -> str:
        """The distribution in `parse_length` syntax, with its clipping range."""
        if self.kind == "fixed":
            return f"fixed:{self.a:g}"
        spec = f"{self.kind}:{self.a:g}:{self.b:g}"
        if self.minimum != 1 or self.maximum is not None:
            spec += f" (clipped to {self.minimum}–{self.maximum if self.maximum else '∞'})"
        return spec


MAX_LENGTH_TOKENS = 10_000_000


LENGTH_SYNTAX = (
    "N, fixed:N, uniform:LO:HI, normal:MEAN:STD, lognormal:MEDIAN:SIGMA, dataset or dataset:MAX"
)
"""The one length syntax of every command (`bench run`, `bench import`, plans)."""


@dataclass(frozen=True)
class DatasetLengths:
    """Lengths that a dataset's own prompts and replies set (`dataset`; `dataset:MAX`: at most
    MAX tokens)."""

    maximum: int | None = None


def parse_length_spec(spec: str, option: str) -> LengthDistribution | DatasetLengths:
    """Parse a length in `LENGTH_SYNTAX`; BenchConfigError naming `option` otherwise."""
    parts = spec.strip().split(":")
    if parts[0] == "dataset":
        if len(parts) == 1:
            return DatasetLengths()
        if len(parts) == 2 and parts[1].isdigit() and 1 <= int(parts[1]) <= MAX_LENGTH_TOKENS:
            return DatasetLengths(int(parts[1]))
        message = f"{spec[:40]!r}: dataset:MAX takes a whole number of tokens from 1"
        raise BenchConfigError(message, option)
    try:
        numbers = [float(p) for p in parts[1:]] if len(parts) > 1 else [float(parts[0])]
    except ValueError:
        message = f"{spec[:40]!r} is not a length; expected {LENGTH_SYNTAX}"
        raise BenchConfigError(message, option) from None
    kind = parts[0] if len(parts) > 1 else "fixed"
    arity = {"fixed": 1, "uniform": 2, "normal": 2, "lognormal": 2}
    if kind not in arity or len(numbers) != arity[kind]:
        message = f"{spec[:40]!r} is not a length; expected {LENGTH_SYNTAX}"
        raise BenchConfigError(message, option)
    if any(not math.isfinite(n) for n in numbers) or numbers[0] < 1:
        raise BenchConfigError(f"{spec[:40]!r}: lengths must be at least 1 token", option)
    if any(n > MAX_LENGTH_TOKENS for n in numbers):
        raise BenchConfigError(
            f"{spec[:40]!r}: lengths must be at most {MAX_LENGTH_TOKENS:,} tokens "
            "(the longest context any model serves)",
            option,
        )
    if kind == "uniform" and numbers[1] < numbers[0]:
        raise BenchConfigError(f"{spec!r}: HI must be at least LO", option)
    if kind in ("normal", "lognormal") and numbers[1] < 0:
        raise BenchConfigError(f"{spec!r}: the spread must not be negative", option)
    if kind in ("fixed", "uniform") and any(n != int(n) for n in numbers):
        raise BenchConfigError(f"{spec!r}: token counts must be whole numbers", option)
    return LengthDistribution(kind, numbers[0], numbers[1] if len(numbers) > 1 else 0.0)  # type: ignore[arg-type]


def parse_length(spec: str, option: str = "--input-len") -> LengthDistribution:
    """A length for synthesised prompts (`LENGTH_SYNTAX` but `dataset`, which --dataset sets)."""
    parsed = parse_length_spec(spec, option)
    if isinstance(parsed, DatasetLengths):
        message = f"{spec[:40]!r}: the dataset's lengths come with --dataset FILE"
        raise BenchConfigError(message, option)
    return parsed


def length_data(length: LengthDistribution | DatasetLengths) -> dict[str, Any]:
    """A length as the result file's `identity.workload` states it: a log-normal (median m,
    sigma s) by its mean m·e^(s²/2) and standard deviation mean·√(e^(s²) − 1), in tokens."""
    if isinstance(length, DatasetLengths):
        return {"kind": "dataset", **({"max": length.maximum} if length.maximum else {})}
    if length.kind == "fixed":
        return {"kind": "fixed", "value": int(length.a)}
    if length.kind == "uniform":
        return {"kind": "uniform", "min": int(length.a), "max": int(length.b)}
    if length.kind == "normal":
        mean, stddev = length.a, length.b
    else:
        mean = length.a * math.exp(length.b**2 / 2)
        stddev = mean * math.sqrt(math.expm1(length.b**2))
    data: dict[str, Any] = {"kind": length.kind, "mean": round(mean, 3), "stddev": round(stddev, 3)}
    if length.minimum != 1:
        data["min"] = length.minimum
    if length.maximum is not None:
        data["max"] = length.maximum
    return data


@dataclass(frozen=True)
class Profile:
    """A named traffic profile: length distributions and the default load sweep."""

    name: str
    description: str
    input_len: LengthDistribution
    output_len: LengthDistribution
    default_concurrency: tuple[int, ...]


PROFILES: dict[str, Profile] = {
    "chat": Profile(
        "chat",
        "interactive chat: short prompts, moderate answers",
        LengthDistribution("lognormal", 512, 0.7, minimum=32, maximum=4096),
        LengthDistribution("lognormal", 256, 0.6, minimum=16, maximum=1024),
        (1, 4, 16, 64),
    ),
    "rag": Profile(
        "rag",
        "retrieval-augmented generation: long prompts of 8k–32k tokens, short answers",
        LengthDistribution("uniform", 8192, 32768),
        LengthDistribution("normal", 128, 32, minimum=32, maximum=256),
        (1, 4, 16),
    ),
    "chat-multiturn": Profile(
        "chat-multiturn",
        "multi-turn chat: sessions of 2–6 turns, each sending the whole history so far "
        "(bench.conversation); lengths are each new user message and each reply",
        LengthDistribution("lognormal", 128, 0.6, minimum=16, maximum=1024),
        LengthDistribution("lognormal", 192, 0.6, minimum=16, maximum=1024),
        (1, 4, 16),
    ),
    "batch": Profile(
        "batch",
        "offline batch: moderate prompts, long outputs, maximum throughput",
        LengthDistribution("normal", 1024, 256, minimum=128, maximum=2048),
        LengthDistribution("fixed", 1024),
        (256,),
    ),
}


def get_profile(name: str) -> Profile:
    """The built-in profile called `name`."""
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise BenchConfigError(f"unknown profile {name!r}; known: {known}", "--profile") from None


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
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise WorkloadFileError(f"{path}: cannot read: {error}", "--dataset") from None
    rows: list[tuple[int, Any]] = []
    if text.lstrip().startswith("["):
        try:
            rows = list(enumerate(json.loads(text), start=1))
        except ValueError as error:
            raise WorkloadFileError(f"{path}: not JSON: {error}", "--dataset") from None
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except ValueError as error:
                raise WorkloadFileError(
                    f"{path}:{number}: not a JSON line: {error}", "--dataset"
                ) from None
    return rows


def dataset_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a dataset file's bytes, which the result records beside its name
    (two files of one name are two workloads). Raises WorkloadFileError naming the file."""
    try:
        with path.open("rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
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
    Hugging Face model id (downloaded)."""
    try:
        from tokenizers import Tokenizer as HfTokenizer
    except ImportError:
        raise BenchConfigError(
            "needs the `tokenizers` package: pip install 'infermeter[bench]'", "--tokenizer"
        ) from None
    path = Path(name_or_path)
    if path.is_dir():
        path = path / "tokenizer.json"
    try:
        if path.is_file():
            tokenizer: Tokenizer = HfTokenizer.from_file(str(path))
        else:
            tokenizer = HfTokenizer.from_pretrained(name_or_path)
    except Exception as error:  # the library raises bare Exception subclasses of its own
        raise WorkloadFileError(
            f"cannot load tokenizer {name_or_path!r}: {error}", "--tokenizer"
        ) from None
    return tokenizer


@dataclass(frozen=True)
class WorkloadSpec:
    """What requests to make: lengths (a profile, optionally overridden) or a dataset."""

    profile: Profile
    input_len: LengthDistribution | None = None
    output_len: LengthDistribution | None = None
    seed: int = 0
    prompt_salt: int = 0
    shared_prefix_tokens: int = 0
    exact_output: bool = True


class RequestFactory:
    """Builds request `index` deterministically from the spec (and dataset, tokenizer)."""

    def __init__(
        self,
        spec: WorkloadSpec,
        *,
        tokenizer: Tokenizer | None = None,
        dataset: Sequence[DatasetEntry] | None = None,
    ) -> None:
        self.spec = spec
        self.tokenizer = tokenizer
        self.dataset = list(dataset) if dataset is not None else None
        self.input_len = spec.input_len or spec.profile.input_len
        self.output_len = spec.output_len or spec.profile.output_len
        self._order: list[int] = []
        self._prefix: tuple[str, list[int]] | None = None
        if spec.shared_prefix_tokens and self.dataset is not None:
            raise BenchConfigError(
                "applies to synthesised prompts, not to a --dataset's", "--shared-prefix-tokens"
            )
        if self.dataset:
            self._order = list(range(len(self.dataset)))
            random.Random(f"{spec.seed}:dataset").shuffle(self._order)

    def build(self, index: int) -> PromptRequest:
        """Request `index`: the same index and spec always give the same request."""
        spec = self.spec
        length_rng = random.Random(f"{spec.seed}:{index}:lengths")
        text_rng = random.Random(f"{spec.seed}:{spec.prompt_salt}:{index}:text")
        if self.dataset:
            entry = self.dataset[self._order[index % len(self.dataset)]]
            output_tokens = (
                self.output_len.sample(length_rng)
                if spec.output_len is not None
                else entry.reference_output_tokens
            )
            return PromptRequest(
                index=index,
                prompt=entry.prompt,
                max_tokens=output_tokens,
                input_tokens=entry.input_tokens,
                input_tokens_exact=self.tokenizer is not None,
                expected_output_tokens=output_tokens if spec.exact_output else None,
            )
        input_tokens = self.input_len.sample(length_rng)
        output_tokens = self.output_len.sample(length_rng)
        prompt, exact = self._synthesize(input_tokens, text_rng)
        return PromptRequest(
            index=index,
            prompt=prompt,
            max_tokens=output_tokens,
            input_tokens=input_tokens,
            input_tokens_exact=exact,
            expected_output_tokens=output_tokens if spec.exact_output else None,
        )

    def _synthesize(self, tokens: int, rng: random.Random) -> tuple[str, bool]:
        shared = self.spec.shared_prefix_tokens
        if shared:
            return self._after_prefix(tokens, rng)
        if self.tokenizer is None:
            return " ".join(rng.choices(_WORDS, k=tokens)), False
        return synthesize_with_tokenizer(self.tokenizer, tokens, rng)

    def _shared_prefix(self) -> tuple[str, list[int]]:
        """The prefix text and its token ids (words without a tokenizer), made once."""
        if self._prefix is None:
            spec = self.spec
            rng = random.Random(f"{spec.seed}:{spec.prompt_salt}:shared-prefix")
            if self.tokenizer is None:
                words = rng.choices(_WORDS, k=spec.shared_prefix_tokens)
                self._prefix = " ".join(words), []
            else:
                text, _ = synthesize_with_tokenizer(self.tokenizer, spec.shared_prefix_tokens, rng)
                ids = list(self.tokenizer.encode(text, add_special_tokens=False).ids)
                self._prefix = text, ids
        return self._prefix

    def _after_prefix(self, tokens: int, rng: random.Random) -> tuple[str, bool]:
        prefix, prefix_ids = self._shared_prefix()
        shared = self.spec.shared_prefix_tokens
        if self.tokenizer is None:
            words = prefix.split()[:tokens] + rng.choices(_WORDS, k=max(0, tokens - shared))
            return " ".join(words), False
        if tokens <= len(prefix_ids):
            return self.tokenizer.decode(prefix_ids[:tokens]), True
        return synthesize_after_prefix(self.tokenizer, prefix, prefix_ids, tokens, rng)


def synthesize_after_prefix(
    tokenizer: Tokenizer, prefix: str, prefix_ids: list[int], tokens: int, rng: random.Random
) -> tuple[str, bool]:
    """`prefix` followed by random words, `tokens` tokens in all, whose encoding starts with
    `prefix_ids` (True), or the closest attempt (False); as `synthesize_with_tokenizer`, only
    the words after the prefix are cut or extended."""
    text = prefix + " " + " ".join(rng.choices(_WORDS, k=tokens - len(prefix_ids)))
    for _ in range(16):
        ids = list(tokenizer.encode(text, add_special_tokens=False).ids)
        if len(ids) == tokens:
            return text, ids[: len(prefix_ids)] == prefix_ids
        if len(ids) > tokens:
            cut = tokenizer.decode(ids[:tokens])
            if not cut.startswith(prefix):
                break
            text = cut
        else:
            text += " " + " ".join(rng.choices(_WORDS, k=max(1, tokens - len(ids))))
    return text, False


def synthesize_with_tokenizer(
    tokenizer: Tokenizer, tokens: int, rng: random.Random
) -> tuple[str, bool]:
    """Random common words that the tokenizer encodes to exactly `tokens` tokens (True), or
    the closest attempt (False) when truncating and re-encoding does not settle.

    Words rather than random vocabulary ids: random ids often decode to invalid UTF-8 or to
    text that re-encodes differently, words re-encode stably (only a cut last word can move).
    """
    text = " ".join(rng.choices(_WORDS, k=tokens))
    for _ in range(16):
        ids = list(tokenizer.encode(text, add_special_tokens=False).ids)
        if len(ids) == tokens:
            return text, True
        if len(ids) > tokens:
            text = tokenizer.decode(ids[:tokens])
        else:
            text += " " + " ".join(rng.choices(_WORDS, k=tokens - len(ids)))
    return text, False
