"""Library functions that do not fit a screen: every function or method in `calculators/`,
`registry/`, `bench/` and `site/hooks/` over `--max-lines` lines (default 60) or over
`--max-complexity` (default 15), with totals and the count by package.

Length is counted from the `def` line to the function's last line (decorators excluded).
Complexity is McCabe's, counted as ruff's `C901` counts it: 1, plus 1 for each `if`/`elif`,
`for`, `while`, `except` handler, `match` case and nested function or lambda-free `def`, with
nested bodies included. Nested functions are counted within the function that holds them, not
listed on their own.

    python benchmarks/function_sizes.py [--max-lines 60] [--max-complexity 15]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("calculators", "registry", "bench", "site/hooks")

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class FunctionSize:
    """One function's place, length in lines and cyclomatic complexity."""

    package: str
    path: str
    name: str
    line: int
    lines: int
    complexity: int


def _statements_complexity(statements: Sequence[ast.stmt]) -> int:
    return sum(_statement_complexity(statement) for statement in statements)


def _statement_complexity(statement: ast.stmt) -> int:
    if isinstance(statement, ast.If):
        return 1 + _statements_complexity(statement.body) + _statements_complexity(statement.orelse)
    if isinstance(statement, ast.For | ast.AsyncFor | ast.While):
        return 1 + _statements_complexity(statement.body) + _statements_complexity(statement.orelse)
    if isinstance(statement, ast.Try | ast.TryStar):
        handlers = sum(1 + _statements_complexity(handler.body) for handler in statement.handlers)
        return handlers + sum(
            _statements_complexity(block)
            for block in (statement.body, statement.orelse, statement.finalbody)
        )
    if isinstance(statement, ast.Match):
        return sum(1 + _statements_complexity(case.body) for case in statement.cases)
    if isinstance(statement, ast.With | ast.AsyncWith):
        return _statements_complexity(statement.body)
    if isinstance(statement, FunctionNode):
        return 1 + _statements_complexity(statement.body)
    if isinstance(statement, ast.ClassDef):
        return _statements_complexity(statement.body)
    return 0


def complexity(function: FunctionNode) -> int:
    """McCabe's cyclomatic complexity of `function`, as ruff's C901 counts it."""
    return 1 + _statements_complexity(function.body)


def _functions(body: Sequence[ast.stmt], prefix: str = "") -> Iterator[tuple[str, FunctionNode]]:
    """Module-level functions and methods (of classes at any depth); nested defs stay inside."""
    for statement in body:
        if isinstance(statement, FunctionNode):
            yield prefix + statement.name, statement
        elif isinstance(statement, ast.ClassDef):
            yield from _functions(statement.body, f"{prefix}{statement.name}.")


def measure(root: Path = ROOT, packages: Sequence[str] = PACKAGES) -> list[FunctionSize]:
    """Every library function under `packages`, measured."""
    sizes = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for name, node in _functions(tree.body):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                sizes.append(
                    FunctionSize(
                        package=package,
                        path=path.relative_to(root).as_posix(),
                        name=name,
                        line=node.lineno,
                        lines=length,
                        complexity=complexity(node),
                    )
                )
    return sizes


def _report(title: str, chosen: list[FunctionSize], key: str) -> None:
    print(f"{title}: {len(chosen)}")
    for size in sorted(chosen, key=lambda s: (-getattr(s, key), s.path, s.line)):
        print(
            f"  {size.lines:4d} lines  complexity {size.complexity:3d}  "
            f"{size.path}:{size.line} {size.name}"
        )
    by_package = Counter(size.package for size in chosen)
    print("  by package: " + ", ".join(f"{p} {by_package.get(p, 0)}" for p in PACKAGES))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-lines", type=int, default=60, help="longest allowed (default 60)")
    parser.add_argument(
        "--max-complexity", type=int, default=15, help="highest allowed (default 15)"
    )
    args = parser.parse_args(argv)
    sizes = measure()
    print(f"library functions measured: {len(sizes)}")
    _report(f"over {args.max_lines} lines", [s for s in sizes if s.lines > args.max_lines], "lines")
    _report(
        f"over complexity {args.max_complexity}",
        [s for s in sizes if s.complexity > args.max_complexity],
        "complexity",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
