"""Where the registry's data lives: a checkout named explicitly, or found from a folder upward.

The code and the data are separate: the package (installed from a wheel, or editable from a
checkout) carries its catalogs and JSON Schemas; the registry's results, corrections and the
catalogs they are judged by sit in a checkout of the registry repository. Commands that read
that data take it from `--registry PATH` (or the `INFERMETER_REGISTRY` environment variable),
else from the first folder, from the current one upward, that is a checkout. The package's own
install location is never taken for one.
"""

from pathlib import Path

from infermeter.registry.errors import RegistryError

REGISTRY_ENV = "INFERMETER_REGISTRY"
"""The environment variable that names the registry checkout (as `--registry` does)."""

CATALOGS_FOLDER = Path("registry") / "catalogs"
"""Where a registry checkout keeps its catalogs (GPUs, models, prices), relative to its root."""

_MARKERS = (Path("registry") / "results", CATALOGS_FOLDER)


def catalogs_folder(root: Path) -> Path:
    """The catalogs folder (`registry/catalogs/`) of the registry checkout at `root`."""
    return root / CATALOGS_FOLDER


class RegistryNotFoundError(RegistryError):
    """No registry checkout was named or found."""


_PACKAGE = Path(__file__).resolve().parent
"""This package's folder: in a checkout (editable install) the checkout's `registry/`, in an
installed wheel `site-packages/registry/`, which has catalogs but is no registry."""


def is_registry_checkout(folder: Path) -> bool:
    """Whether `folder` holds a registry's data (`registry/results/` or `registry/catalogs/`);
    never the folder the package is installed in (its catalogs are package data)."""
    if not (folder / _MARKERS[0]).is_dir() and (folder / "registry").resolve() == _PACKAGE:
        return False
    return any((folder / marker).is_dir() for marker in _MARKERS)


def find_registry(start: Path) -> Path | None:
    """The first registry checkout at `start` or above it, or None."""
    folder = start.absolute()
    for candidate in (folder, *folder.parents):
        if is_registry_checkout(candidate):
            return candidate
    return None


def locate_registry(explicit: Path | None, start: Path | None = None) -> Path:
    """The registry checkout to use: `explicit` when given (it must be one), else the first one
    found from `start` (default: the current folder) upward; raises RegistryNotFoundError."""
    if explicit is not None:
        if not is_registry_checkout(explicit):
            raise RegistryNotFoundError(
                f"{explicit} is not a registry checkout (it has no registry/results/ "
                "or registry/catalogs/)"
            )
        return explicit
    here = start if start is not None else Path.cwd()
    found = find_registry(here)
    if found is None:
        raise RegistryNotFoundError(
            f"no registry checkout: name one with --registry PATH or {REGISTRY_ENV}, or run "
            f"from a clone of the registry (none in {here.absolute()} or above it)"
        )
    return found
