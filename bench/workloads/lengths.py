"""Token-length distributions and the one length syntax of every command.

`LENGTH_SYNTAX` (`N`, `fixed:N`, `uniform:LO:HI`, `normal:MEAN:STD`, `lognormal:MEDIAN:SIGMA`,
`dataset`, `dataset:MAX`) is parsed by `parse_length_spec` (`parse_length` for synthesised
prompts, without `dataset`; `parse_turns` for a session's turns, `DISTRIBUTION_SYNTAX`);
`length_model` states a length as the result file does.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

from infermeter.bench.errors import BenchConfigError
from infermeter.registry.builder import unchecked
from infermeter.registry.models import DatasetLength, FixedLength, NormalLength, UniformLength

DistributionKind = Literal["fixed", "uniform", "normal", "lognormal"]


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


DISTRIBUTION_SYNTAX = "N, fixed:N, uniform:LO:HI, normal:MEAN:STD or lognormal:MEDIAN:SIGMA"
"""A distribution of counts (`--turns` takes it; a length adds `dataset`)."""
LENGTH_SYNTAX = DISTRIBUTION_SYNTAX.replace(" or ", ", ") + ", dataset or dataset:MAX"
"""The one length syntax of every command (`bench run`, `bench import`, plans)."""


@dataclass(frozen=True)
class DatasetLengths:
    """Lengths that a dataset's own prompts and replies set (`dataset`; `dataset:MAX`: at most
    MAX tokens)."""

    maximum: int | None = None


@dataclass(frozen=True)
class _Counted:
    """What a distribution counts, for its messages: the noun and its most, with why."""

    what: str
    subject: str
    noun: str
    most: int
    why: str
    clip_to: int | None = None
    """Where a normal or lognormal draw past `most` stops (None: lengths state no clip)."""


_TOKENS = _Counted(
    "a length",
    "lengths must be",
    "token",
    MAX_LENGTH_TOKENS,
    "the longest context any model serves",
)
MAX_TURNS = MAX_LENGTH_TOKENS // 2
"""Turns of one chat-multiturn session: its last turn sends every earlier user message and
reply, each at least a token, in one prompt, which the longest context must hold."""
_TURNS = _Counted(
    "a number of turns",
    "a session must have",
    "turn",
    MAX_TURNS,
    "the last turn sends every earlier message, each at least a token, in one context of at most "
    f"{MAX_LENGTH_TOKENS:,} tokens",
    MAX_TURNS,
)


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
    return _distribution(spec, option, _TOKENS, LENGTH_SYNTAX)


def _distribution(spec: str, option: str, counted: _Counted, syntax: str) -> LengthDistribution:
    parts = spec.strip().split(":")
    what = counted.what
    try:
        numbers = [float(p) for p in parts[1:]] if len(parts) > 1 else [float(parts[0])]
    except ValueError:
        raise BenchConfigError(f"{spec[:40]!r} is not {what}; expected {syntax}", option) from None
    kind = parts[0] if len(parts) > 1 else "fixed"
    arity = {"fixed": 1, "uniform": 2, "normal": 2, "lognormal": 2}
    if kind not in arity or len(numbers) != arity[kind]:
        raise BenchConfigError(f"{spec[:40]!r} is not {what}; expected {syntax}", option)
    noun = counted.noun
    if any(not math.isfinite(n) for n in numbers) or numbers[0] < 1:
        raise BenchConfigError(f"{spec[:40]!r}: {counted.subject} at least 1 {noun}", option)
    if any(n > counted.most for n in numbers):
        most = f"{counted.most:,} {noun}s ({counted.why})"
        message = f"{spec[:40]!r}: {counted.subject} at most {most}"
        raise BenchConfigError(message, option)
    if kind == "uniform" and numbers[1] < numbers[0]:
        raise BenchConfigError(f"{spec!r}: HI must be at least LO", option)
    if kind in ("normal", "lognormal") and numbers[1] < 0:
        raise BenchConfigError(f"{spec!r}: the spread must not be negative", option)
    if kind in ("fixed", "uniform") and any(n != int(n) for n in numbers):
        raise BenchConfigError(f"{spec!r}: {noun} counts must be whole numbers", option)
    spread = numbers[1] if len(numbers) > 1 else 0.0
    return LengthDistribution(kind, numbers[0], spread, 1, counted.clip_to)  # type: ignore[arg-type]


def parse_turns(spec: str, option: str = "--turns") -> LengthDistribution:
    """Turns per chat-multiturn session, in `LENGTH_SYNTAX` but `dataset` (a --dataset's
    conversations keep their own turns), at most `MAX_TURNS`."""
    return _distribution(spec, option, _TURNS, DISTRIBUTION_SYNTAX)


def parse_length(spec: str, option: str = "--input-len") -> LengthDistribution:
    """A length for synthesised prompts (`LENGTH_SYNTAX` but `dataset`, which --dataset sets)."""
    parsed = parse_length_spec(spec, option)
    if isinstance(parsed, DatasetLengths):
        message = (
            f"{spec[:40]!r} is for bench import; bench run takes a dataset's lengths from "
            f"--dataset FILE when {option} is left out"
        )
        raise BenchConfigError(message, option)
    return parsed


Length = FixedLength | UniformLength | NormalLength | DatasetLength
"""A length as the result file's `identity.workload` states it (`registry.models`)."""

DATASET_LENGTH = unchecked(DatasetLength, kind="dataset")
"""The length of requests a dataset or a trace gives, uncapped, as `identity.workload` states it."""


def length_model(length: LengthDistribution | DatasetLengths) -> Length:
    """A length as the result file's `identity.workload` states it, built unchecked (the result's
    builder validates it): a log-normal (median m, sigma s) by its mean m·e^(s²/2) and standard
    deviation mean·√(e^(s²) − 1), in tokens."""
    if isinstance(length, DatasetLengths):
        return unchecked(DatasetLength, kind="dataset", max=length.maximum or None)
    if length.kind == "fixed":
        return unchecked(FixedLength, kind="fixed", value=int(length.a))
    if length.kind == "uniform":
        return unchecked(UniformLength, kind="uniform", min=int(length.a), max=int(length.b))
    if length.kind == "normal":
        mean, stddev = length.a, length.b
    else:
        mean = length.a * math.exp(length.b**2 / 2)
        stddev = mean * math.sqrt(math.expm1(length.b**2))
    return unchecked(
        NormalLength,
        kind=length.kind,
        mean=round(mean, 3),
        stddev=round(stddev, 3),
        min=length.minimum if length.minimum != 1 else None,
        max=length.maximum,
    )
