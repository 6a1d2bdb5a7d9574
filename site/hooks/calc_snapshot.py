"""The calculators' Pyodide memory snapshot, made at site build time and served as a static file.

A cold calculator page spends most of its start in Pyodide's interpreter start-up (seconds on a
busy machine); the worker restores this snapshot instead: Python already started, the archive on
`sys.path`, `calc_api` imported. `calc_snapshot.mjs` makes it in Node with the same Pyodide build
the site serves (a snapshot loads only into the build that made it), gzipped.

Making one takes seconds, so it is cached under `node_modules/.cache/infermeter/`, named by the
hash of everything it depends on (the runtime's files, the archive, the script); `npm ci`, which
replaces the runtime, empties that cache too.
"""

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

HOOKS = Path(__file__).resolve().parent
SCRIPT = HOOKS / "calc_snapshot.mjs"
# What the snapshot's memory depends on: the wasm module and its JS glue (the build id), and the
# stdlib zip (zipimport keeps its directory, offsets into the file, in memory).
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
TIMEOUT_S = 600


class SnapshotError(Exception):
    """The snapshot could not be made (no Node.js, or Pyodide failed in it)."""


def snapshot_key(runtime: Path, archive: bytes) -> str:
    """The hash naming a snapshot: of the runtime files, the archive and the script."""
    digest = hashlib.sha256()
    for path in [*(runtime / name for name in RUNTIME_FILES), SCRIPT]:
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    digest.update(b"archive\0" + hashlib.sha256(archive).digest())
    return digest.hexdigest()[:32]


def make_snapshot(runtime: Path, archive: bytes, out: Path) -> None:
    """Run the Node script: the gzipped snapshot of `runtime` with `archive` imported, to `out`."""
    node = shutil.which("node")
    if node is None:
        raise SnapshotError("node: not found on PATH (the site build runs Pyodide in Node.js)")
    with tempfile.TemporaryDirectory() as folder:
        archive_path = Path(folder) / "calculators.zip"
        archive_path.write_bytes(archive)
        try:
            completed = subprocess.run(
                [node, str(SCRIPT), str(runtime), str(archive_path), str(out)],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise SnapshotError(f"{SCRIPT.name}: no snapshot after {TIMEOUT_S} s") from None
    if completed.returncode != 0:
        lines = (completed.stderr or completed.stdout).strip().splitlines() or ["no output"]
        raise SnapshotError(f"{SCRIPT.name} failed (exit {completed.returncode}): {lines[-1]}")


def cached_snapshot(runtime: Path, archive: bytes, cache: Path) -> bytes:
    """The gzipped snapshot for this runtime and archive: from `cache`, else made and cached
    (written under a temporary name, then linked into place; older snapshots in `cache` are
    removed). Two builds that make it at once return the same bytes: the first one linked wins
    and the other returns that one, since two snapshots of the same files need not be equal."""
    path = cache / f"calc-snapshot-{snapshot_key(runtime, archive)}.gz"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    cache.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=cache, prefix=f".{path.name}.", suffix=".partial")
    os.close(handle)
    partial = Path(name)
    try:
        make_snapshot(runtime, archive, partial)
        with contextlib.suppress(FileExistsError):  # another build cached one first: serve it
            os.link(partial, path)
        data = path.read_bytes()
    finally:
        partial.unlink(missing_ok=True)
    for old in cache.glob("calc-snapshot-*.gz"):
        if old != path:
            old.unlink(missing_ok=True)
    return data
