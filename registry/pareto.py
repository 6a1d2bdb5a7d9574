"""The Pareto front of a load sweep: the points no other point beats on both axes.

A buyer trades speed per user (tokens/s each stream sees) against throughput per GPU (what the
hour pays for). A point is on the front when no other point of its group has at least as
much of both and more of one. `registry.across_rows` groups by model, workload, GPU and count
(any engine and settings: the best a buyer of that hardware can get): across workloads the axes
measure different work.
"""

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def front_indices(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points on the front (both coordinates larger is better), in ascending
    order of the first coordinate. Equal points are all kept."""
    order = sorted(range(len(points)), key=lambda i: (-points[i][0], -points[i][1]))
    front: list[int] = []
    best_y = float("-inf")
    best_at_x: tuple[float, float] | None = None
    for i in order:
        x, y = points[i]
        if y > best_y:
            front.append(i)
            best_y, best_at_x = y, (x, y)
        elif best_at_x == (x, y):
            front.append(i)  # the same point twice: neither dominates the other
    return sorted(front, key=lambda i: (points[i][0], i))


def front_flags(
    items: Sequence[T],
    group: Callable[[T], Hashable | None],
    point: Callable[[T], tuple[float, float] | None],
) -> list[bool | None]:
    """For each item: whether it is on the front of its group, or None where it takes no part
    (no group, no point, or a group of fewer than two points: no sweep to draw a front from)."""
    members: dict[Hashable, list[int]] = {}
    for index, item in enumerate(items):
        key = group(item)
        if key is not None and point(item) is not None:
            members.setdefault(key, []).append(index)
    flags: list[bool | None] = [None] * len(items)
    for indices in members.values():
        if len(indices) < 2:
            continue
        points = [point(items[i]) for i in indices]
        front = set(front_indices([p for p in points if p is not None]))
        for position, index in enumerate(indices):
            flags[index] = position in front
    return flags
