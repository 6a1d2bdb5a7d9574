"""Prompt synthesis: the requests of a workload, each reproducible from the seed.

Its parts: `lengths` (`LengthDistribution`, `parse_length`, `LENGTH_SYNTAX`, …), `profiles`
(`PROFILES`, `get_profile`) and `dataset` (`load_sharegpt`, `load_tokenizer`, `Tokenizer`, …).

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

import random
from collections.abc import Sequence
from dataclasses import dataclass

from infermeter.bench.client.request_record import PromptRequest
from infermeter.bench.errors import BenchConfigError
from infermeter.bench.workloads.dataset import (
    DatasetEntry,
    Tokenizer,
)
from infermeter.bench.workloads.lengths import (
    LengthDistribution,
)
from infermeter.bench.workloads.profiles import Profile

__all__ = [
    "PROMPT_WORDS",
    "RequestFactory",
    "WorkloadSpec",
    "synthesize_after_prefix",
    "synthesize_with_tokenizer",
]

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
"""The words synthetic prompts are made of (also `bench.workloads.conversation`'s user messages)."""


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
