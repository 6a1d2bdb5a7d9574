"""The checks behind `infermeter registry validate`, one module per family.

`structure` reads a file's JSON against the schema and the models, `strings` its strings (and a
catalog's) as plain text; `content` checks what a valid
result says against its path, the catalogs and itself; `physics` against roofline bounds; `rates`
the rates a cost is worked out from against what the calculators price; `closed_loop` a closed
loop's throughput against its own concurrency and latencies; `history` across files
(duplicates) and against a git base (immutability). Each check returns Findings and never raises on
bad input: validation collects every problem, then fails once.
"""

from dataclasses import dataclass

from infermeter.registry.errors import Problem, cut


@dataclass(frozen=True)
class Finding(Problem):
    """A Problem with the name of the check that found it (`schema`, `physics`, …)."""

    check: str = ""

    def as_json(self) -> dict[str, str]:
        # JSON escapes what it must; the message is cut as a printed line is (`cut`).
        message = cut(self.message)
        return {"file": self.file, "path": self.path, "message": message, "check": self.check}


def whole(number: float) -> str:
    """A figure a message shows whole (`12345`), or to 6 digits from 10^15 on (`1.2e+302`), so
    that a file's absurd value does not print as hundreds of digits."""
    return f"{number:.0f}" if abs(number) < 1e15 else f"{number:.6g}"
