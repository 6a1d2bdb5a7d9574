"""The built-in traffic profiles: input and output length distributions and a default sweep.

Input and output lengths in tokens; the spec syntax is `bench.workloads.lengths.parse_length`'s:

| profile | input length                 | output length                | for                     |
|---------|------------------------------|------------------------------|-------------------------|
| `chat`  | `lognormal:512:0.7`, 32–4096 | `lognormal:256:0.6`, 16–1024 | interactive chat        |
| `rag`   | `uniform:8192:32768`         | `normal:128:32`, 32–256      | long input, short reply |
| `batch` | `normal:1024:256`, 128–2048  | `fixed:1024`                 | offline, max throughput |
| `chat-multiturn` | `lognormal:128:0.6`, 16–1024 | `lognormal:192:0.6`, 16–1024 | multi-turn chat |

`chat-multiturn`'s lengths are those of each new user message and each reply; every turn sends
the whole history before it (`bench.workloads.conversation`).
"""

from __future__ import annotations

from dataclasses import dataclass

from infermeter.bench.errors import BenchConfigError
from infermeter.bench.workloads.lengths import LengthDistribution
from infermeter.calculators.suggest import unknown_name


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
        "(bench.workloads.conversation); lengths are each new user message and each reply",
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
        raise BenchConfigError(unknown_name("profile", name, PROFILES), "--profile") from None
