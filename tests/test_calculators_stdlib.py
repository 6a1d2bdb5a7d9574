"""Meta-test: `calculators/` imports only the standard library and itself, so it runs under
Pyodide with nothing else loaded."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CALCULATORS = ROOT / "calculators"
MODULES = sorted(CALCULATORS.glob("*.py"))


def _top(module: str) -> str:
    """A module's top-level name; `infermeter.calculators…` counts as "calculators"
    (itself), any other `infermeter.…` as "infermeter" (not allowed)."""
    parts = module.split(".")
    return "calculators" if parts[:2] == ["infermeter", "calculators"] else parts[0]


def _imported_top_levels(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(_top(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a relative import stays inside the package
                names.add("calculators")
            elif node.module is not None:
                names.add(_top(node.module))
    return names


def test_calculators_package_has_modules() -> None:
    names = {path.stem for path in MODULES}
    assert {
        "model_arch",
        "quantization",
        "kv_cache",
        "vllm_plan",
        "memory",
        "fit",
        "cost_report",
    } <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_calculators_module_imports_only_stdlib(path: Path) -> None:
    allowed = set(sys.stdlib_module_names) | {"calculators", "__future__"}
    foreign = _imported_top_levels(path) - allowed
    assert not foreign, f"calculators/{path.name} imports {sorted(foreign)}"


def test_calculators_import_check_sees_third_party_imports(tmp_path: Path) -> None:
    # The check above must be able to fail.
    module = tmp_path / "bad.py"
    module.write_text("import json\nfrom pydantic import BaseModel\nimport click.testing\n")
    assert _imported_top_levels(module) - set(sys.stdlib_module_names) == {"pydantic", "click"}


def test_calculators_import_without_site_packages() -> None:
    # -I: no user site, no PYTHON* variables, no script directory; -S: no site module, so no
    # site-packages at all. Only the repository root is put on the path.
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / '.typecheck')!r})\n"
        "import infermeter.calculators.memory, infermeter.calculators.fit\n"
        "import infermeter.calculators.cost_report\n"
        "import infermeter.calculators.quantization, infermeter.calculators.kv_cache\n"
        "import infermeter.calculators.vllm_plan\n"
        "assert not any('site-packages' in entry for entry in sys.path), sys.path\n"
        "loaded = {'pydantic', 'click', 'yaml', 'numpy'} & set(sys.modules)\n"
        "assert not loaded, loaded\n"
        "from infermeter.calculators.config_reader import parse_config\n"
        "from infermeter.calculators.param_count import param_counts\n"
        "arch = parse_config({'model_type': 'llama', 'hidden_size': 64, 'num_hidden_layers': 2,\n"
        "    'num_attention_heads': 4, 'intermediate_size': 128, 'vocab_size': 100})\n"
        "print(param_counts(arch).total)\n"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 0
