"""A count and its noun in one wording for every message: `1 request`, `2 requests`."""


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` (thousands separated) and `noun`, plural unless the count is 1; `plural` where
    adding an s is wrong (`counted(2, "process", "processes")`)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
