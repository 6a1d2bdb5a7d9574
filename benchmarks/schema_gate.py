"""The JSON Schema check of result files: the compiled gate against the full `jsonschema` walk
(printed, not asserted).

    .venv/bin/python benchmarks/schema_gate.py [--files 300]

Reads the registry's own result files (the first N by path) and prints the CPU time per file of
`jsonschema`'s Draft 2020-12 validator, of the gate (`registry.checks.schema_gate`, jsonschema-rs)
and of `result_schema_errors`, which the index and `registry validate` call (the gate, then the
full walk only for a file the gate does not accept).
"""

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from infermeter.registry.checks.schema_gate import compile_gate  # noqa: E402
from infermeter.registry.checks.structure import result_schema_errors, result_validator  # noqa: E402
from infermeter.registry.schemas import load_schema  # noqa: E402


def per_file_ms(check: object, datas: list[object]) -> float:
    started = time.process_time()
    for data in datas:
        check(data)  # type: ignore[operator]
    return (time.process_time() - started) / len(datas) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300, help="result files to check")
    options = parser.parse_args()
    paths = sorted((REPO / "registry" / "results").rglob("*.json"))[: options.files]
    datas = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    gate = compile_gate(load_schema("result.schema.json"))
    if gate is None:
        print("the gate is off (jsonschema-rs missing, or a pattern it cannot translate)")
        return
    full = per_file_ms(lambda data: list(result_validator().iter_errors(data)), datas)
    fast = per_file_ms(gate, datas)
    used = per_file_ms(result_schema_errors, datas)
    accepted = sum(1 for data in datas if gate(data))
    print(f"{len(datas)} result files, {accepted} accepted by the gate")
    print(f"jsonschema (full walk):      {full:.3f} ms CPU per file")
    print(f"compiled gate:               {fast:.3f} ms CPU per file ({full / fast:.0f}x faster)")
    print(f"result_schema_errors (used): {used:.3f} ms CPU per file")


if __name__ == "__main__":
    main()
