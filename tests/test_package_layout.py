"""The layout shows the parts (issue 28): one import name, `bench/` by concept, and every name
imported from the module that defines it.

A module re-exports a name when it only imports the name (defines it nowhere) and yet offers it:
in its `__all__`, as `from x import name as name`, or because another module imports the name
from it (`from m import name`, or `m.name` through `import m`). Only a package's `__init__` (its
one facade) may. The modules checked: our three packages, and the site's hooks and browser
runtime (top-level modules on their own paths); the importers: every Python file we wrote.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARTS = ("bench", "registry", "calculators")
IMPORTERS = (*PARTS, "tests", "benchmarks", "site")
# bench/ by concept: the sub-packages, and the one module beside them (the errors' base).
BENCH_CONCEPTS = {
    "cli", "session", "run", "plan", "client", "result", "workloads", "telemetry", "launch",
    "fleet", "importers",
}  # fmt: skip
BENCH_MODULES = {"__init__.py", "errors.py"}


@dataclass
class Module:
    path: Path
    defined: set[str] = field(default_factory=set)
    imported: set[str] = field(default_factory=set)
    offered: set[str] = field(default_factory=set)  # in __all__, or `name as name`

    @property
    def facade(self) -> bool:
        return self.path.name == "__init__.py"


def _python_files(root: Path, folders: tuple[str, ...]) -> list[Path]:
    files = [path for folder in folders for path in (root / folder).rglob("*.py")]
    return [path for path in files if not {"__pycache__", "data"} & set(path.parts)]


def _modules(root: Path) -> dict[str, Module]:
    found = {}
    for path in _python_files(root, PARTS):
        name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        found[f"infermeter.{name}"] = Module(path)
    for folder in ("site/hooks", "site/browser"):
        for path in (root / folder).glob("*.py"):
            found[path.stem] = Module(path)
    for module in found.values():
        _read(module, _parse(module.path).body)
    return found


def _parse(path: Path, trees: dict[Path, ast.Module] = {}) -> ast.Module:  # noqa: B006
    """Each file parsed once per session (the default dict is the cache)."""
    if path not in trees:
        trees[path] = ast.parse(path.read_text(encoding="utf-8"))
    return trees[path]


def _read(module: Module, body: list[ast.stmt]) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            module.defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            module.defined |= names
            if "__all__" in names and isinstance(node.value, (ast.List, ast.Tuple)):
                module.offered |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
        elif isinstance(node, ast.ImportFrom):
            module.imported |= {a.asname or a.name for a in node.names}
            module.offered |= {a.name for a in node.names if a.asname == a.name}
        elif isinstance(node, ast.Import):
            module.imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try)):
            _read(module, node.body + node.orelse)


def _dotted(node: ast.expr) -> str | None:
    """`a.b.c` as text, or None for anything but names and attributes."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _uses(tree: ast.Module, modules: dict[str, Module]) -> list[tuple[str, str]]:
    """(module, name) for each name this file takes from one of our modules."""
    uses, aliases, attributes = [], {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                uses.append((node.module, alias.name))
                if f"{node.module}.{alias.name}" in modules:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            aliases |= {a.asname or a.name: a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.Attribute):
            attributes.append(node)
    for node in attributes if aliases else []:
        owner = _dotted(node.value)
        if owner in aliases:
            uses.append((aliases[owner], node.attr))
    return uses


def re_exports(root: Path) -> set[str]:
    """`module: name` for every name a module (not a facade) offers but does not define."""
    modules = _modules(root)
    found = set()
    for name, module in modules.items():
        offered = module.offered & module.imported - module.defined
        found |= {f"{name}: {n}" for n in offered if not module.facade}
    for path in _python_files(root, IMPORTERS):
        for name, attribute in _uses(_parse(path), modules):
            module = modules.get(name)
            if module and not module.facade and attribute in module.imported - module.defined:
                found.add(f"{name}: {attribute} (taken by {path.relative_to(root)})")
    return found


def test_no_module_re_exports_a_name_it_does_not_define() -> None:
    assert sorted(re_exports(REPO)) == []


def test_re_export_check_finds_each_kind(tmp_path: Path) -> None:
    (tmp_path / "calculators").mkdir()
    (tmp_path / "calculators" / "__init__.py").write_text("from calculators.a import A\n")
    (tmp_path / "calculators" / "a.py").write_text("A = 1\nB = 2\n")
    (tmp_path / "calculators" / "b.py").write_text(
        "from calculators.a import A, B as B\n__all__ = ['A']\n"
    )
    (tmp_path / "calculators" / "c.py").write_text("from calculators.a import A\nC = A\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text(
        "import infermeter.calculators.c as c\nfrom infermeter.calculators import A\nc.A\n"
    )
    assert re_exports(tmp_path) == {
        "infermeter.calculators.b: A",
        "infermeter.calculators.b: B",
        "infermeter.calculators.c: A (taken by tests/t.py)",
    }


def test_bench_is_split_by_concept() -> None:
    bench = REPO / "bench"
    packages = {p.name for p in bench.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.name for p in bench.glob("*.py")}
    assert packages == BENCH_CONCEPTS
    assert modules == BENCH_MODULES
    for package in packages:  # each facade says what its package holds
        assert ast.get_docstring(ast.parse((bench / package / "__init__.py").read_text()))
