"""The calculators' Pyodide memory snapshot (site/hooks/calc_snapshot.py): named by what it is
made from, made once and reused from its cache, and a failure to make one is a one-line error.
(The snapshot the site serves is checked in test_build; its restore in a real Chromium by
test_browser.)"""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import calc_snapshot
import pytest
import registry_pages
from site_helpers import REPO

RUNTIME = REPO / "node_modules" / "pyodide"


def _runtime_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "pyodide"
    copy.mkdir()
    for name in calc_snapshot.RUNTIME_FILES:
        (copy / name).write_bytes((RUNTIME / name).read_bytes())
    return copy


def test_calc_snapshot_key_names_the_runtime_and_the_archive(tmp_path: Path) -> None:
    runtime = _runtime_copy(tmp_path)
    key = calc_snapshot.snapshot_key(runtime, b"archive")
    assert calc_snapshot.snapshot_key(runtime, b"archive") == key
    assert calc_snapshot.snapshot_key(runtime, b"archive 2") != key
    for name in calc_snapshot.RUNTIME_FILES:  # another Pyodide build: another snapshot
        original = (runtime / name).read_bytes()
        (runtime / name).write_bytes(original + b"\0")
        assert calc_snapshot.snapshot_key(runtime, b"archive") != key, name
        (runtime / name).write_bytes(original)


def test_calc_snapshot_cache_is_reused_and_keeps_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    name = f"calc-snapshot-{calc_snapshot.snapshot_key(RUNTIME, b'zip')}.gz"
    (cache / name).write_bytes(b"made before")
    monkeypatch.setenv("PATH", "")  # no Node: a cache miss would fail
    assert calc_snapshot.cached_snapshot(RUNTIME, b"zip", cache) == b"made before"
    with pytest.raises(calc_snapshot.SnapshotError, match="node: not found on PATH"):
        calc_snapshot.cached_snapshot(RUNTIME, b"another zip", cache)
    assert [path.name for path in cache.iterdir()] == [name]  # nothing half-written


def test_calc_snapshot_failure_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    runtime = tmp_path / "not-pyodide"
    runtime.mkdir()
    for name in calc_snapshot.RUNTIME_FILES:
        (runtime / name).write_text("throw new Error('not a Pyodide runtime');\n")
    cache = tmp_path / "cache"
    with pytest.raises(calc_snapshot.SnapshotError) as raised:
        calc_snapshot.cached_snapshot(runtime, b"zip", cache)
    message = str(raised.value)
    assert "calc_snapshot.mjs failed (exit 1)" in message
    assert "not a Pyodide runtime" in message
    assert "\n" not in message
    assert list(cache.iterdir()) == []


def test_calc_snapshot_made_by_two_builds_at_once_is_the_one_cached(tmp_path: Path) -> None:
    """Two builds that miss the cache together (two pytest workers, two `make site`) both serve
    the snapshot the cache keeps: two snapshots of the same files need not be byte-equal."""
    archive = registry_pages.calculators_archive()
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(2) as pool:
        made = list(
            pool.map(lambda _: calc_snapshot.cached_snapshot(RUNTIME, archive, cache), range(2))
        )
    (kept,) = cache.iterdir()  # one snapshot, no partial file left
    assert kept.name.startswith("calc-snapshot-")
    assert made == [kept.read_bytes()] * 2
