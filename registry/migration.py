"""Older result formats, upgraded to the current one (`RESULT_SCHEMA_VERSION`).

A file's content id covers its `schema_version`, so an upgraded result is a new file with a new
id and path; `registry.migrate` rewrites a registry, and the immutability check accepts a merged
file that vanished when its upgrade sits where the upgrade belongs.

Version 1 → 2. Version 1 had no word for *offline*: a run that queued every request at once
was stored as a closed loop whose concurrency was at least the number of requests sent (the
TensorRT-LLM tables: concurrency = request count; vLLM's `--request-rate inf` runs, marked with
an `all-at-once` verdict). No request of such a point waited for another to finish, so it is an
offline point: version 2 stores `{"arrival": "offline"}`, keeps `requests.sent`, and drops the
`all-at-once` verdict whose caveat the new arrival kind states. Every other point is unchanged.
"""

import copy
from typing import Any

from infermeter.registry.errors import InvalidFileError, Problem
from infermeter.registry.models.common import RESULT_SCHEMA_VERSION

OLDEST_SCHEMA_VERSION = 1
"""The oldest result format that can still be read."""

_ALL_AT_ONCE_VERDICT = "all-at-once"


def schema_version_of(data: Any) -> int | None:
    """The `schema_version` of parsed result data, or None if it has no integer one."""
    if not isinstance(data, dict):
        return None
    version = data.get("schema_version")
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def is_older_format(data: Any) -> bool:
    """Whether `data` is a result in a format older than the current one, and still readable."""
    version = schema_version_of(data)
    return version is not None and OLDEST_SCHEMA_VERSION <= version < RESULT_SCHEMA_VERSION


def _was_offline(point: dict[str, Any]) -> bool:
    load, requests = point.get("load"), point.get("requests")
    if not isinstance(load, dict) or not isinstance(requests, dict):
        return False
    concurrency, sent = load.get("concurrency"), requests.get("sent")
    return (
        load.get("arrival") == "closed"
        and isinstance(concurrency, int)
        and isinstance(sent, int)
        and 0 < sent <= concurrency
    )


def _point_v1_to_v2(point: Any) -> Any:
    if not isinstance(point, dict) or not _was_offline(point):
        return point
    upgraded = dict(point, load={"arrival": "offline"})
    validity = point.get("validity")
    if isinstance(validity, list):
        upgraded["validity"] = [
            verdict
            for verdict in validity
            if not (isinstance(verdict, dict) and verdict.get("code") == _ALL_AT_ONCE_VERDICT)
        ]
    return upgraded


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    upgraded = dict(data, schema_version=2)
    points = data.get("points")
    if isinstance(points, list):
        upgraded["points"] = [_point_v1_to_v2(point) for point in points]
    return upgraded


_STEPS = {1: _v1_to_v2}
"""One step per version: data of version N → data of version N + 1."""


def upgrade_result_data(data: Any, file: str) -> Any:
    """Result data of any readable version as data of the current version.

    Current-version data (and anything that is no result at all) comes back unchanged, for the
    models to judge. The id is left as it was: the caller mints the new one from the content.
    Raises InvalidFileError for a version newer than this infermeter knows.
    """
    version = schema_version_of(data)
    if version is None or version == RESULT_SCHEMA_VERSION:
        return data
    if version > RESULT_SCHEMA_VERSION:
        message = (
            f"schema_version {version} is newer than this infermeter reads "
            f"({RESULT_SCHEMA_VERSION}); upgrade infermeter"
        )
        raise InvalidFileError([Problem(file, "schema_version", message)])
    if version < OLDEST_SCHEMA_VERSION:
        return data
    upgraded = copy.deepcopy(data)
    while version < RESULT_SCHEMA_VERSION:
        upgraded = _STEPS[version](upgraded)
        version += 1
    return upgraded
