"""Library functions that do not fit a screen: every function or method in `calculators/`,
`registry/`, `bench/`, `site/hooks/` and `site/browser/` over `--max-lines` lines (default 60) or
over `--max-complexity` (default 15), with totals and the count by package.

A function may be longer where it truly must be: a comment `# long: <why>` on the line above
it (above its decorators) states the reason, which the list prints. `--check N` exits 1 when
more than N functions are over the length, when one of them states no reason, or when any is
over the complexity (ruff's C90 holds that one in CI as well).

Length is counted from the `def` line to the function's last line (decorators excluded).
Complexity is McCabe's, counted as ruff's `C901` counts it: 1, plus 1 for each `if`/`elif`,
`for`, `while`, `except` handler, `match` case and nested function or lambda-free `def`, with
nested bodies included. Nested functions are counted within the function that holds them, not
listed on their own.

    python benchmarks/function_sizes.py [--max-lines 60] [--max-complexity 15] [--check N]
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
PACKAGES = ("calculators", "registry", "bench", "site/hooks", "site/browser")

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
    reason: str = ""


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


def _reason(lines: Sequence[str], node: FunctionNode) -> str:
    """The `# long: <why>` comment on the line above the function (and its decorators)."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    above = lines[first - 2].strip() if first >= 2 else ""
    return above.removeprefix("# long:").strip() if above.startswith("# long:") else ""


def measure(root: Path = ROOT, packages: Sequence[str] = PACKAGES) -> list[FunctionSize]:
    """Every library function under `packages`, measured."""
    sizes = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source, filename=str(path))
            lines = source.splitlines()
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
                        reason=_reason(lines, node),
                    )
                )
    return sizes


def _report(title: str, chosen: list[FunctionSize], key: str) -> None:
    print(f"{title}: {len(chosen)}")
    for size in sorted(chosen, key=lambda s: (-getattr(s, key), s.path, s.line)):
        print(
            f"  {size.lines:4d} lines  complexity {size.complexity:3d}  "
            f"{size.path}:{size.line} {size.name}" + (f"  ({size.reason})" if size.reason else "")
        )
    by_package = Counter(size.package for size in chosen)
    print("  by package: " + ", ".join(f"{p} {by_package.get(p, 0)}" for p in PACKAGES))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-lines", type=int, default=60, help="longest allowed (default 60)")
    parser.add_argument(
        "--max-complexity", type=int, default=15, help="highest allowed (default 15)"
    )
    parser.add_argument(
        "--check", type=int, metavar="N", help="exit 1 past N long functions (see above)"
    )
    args = parser.parse_args(argv)
    sizes = measure()
    print(f"library functions measured: {len(sizes)}")
    long = [s for s in sizes if s.lines > args.max_lines]
    complex_ = [s for s in sizes if s.complexity > args.max_complexity]
    _report(f"over {args.max_lines} lines", long, "lines")
    _report(f"over complexity {args.max_complexity}", complex_, "complexity")
    if args.check is None:
        return 0
    unexplained = [s for s in long if not s.reason]
    print(f"check: {len(long)} long (at most {args.check}), {len(unexplained)} without a reason")
    return 1 if len(long) > args.check or unexplained or complex_ else 0


if __name__ == "__main__":
    sys.exit(main())
