"""The Pareto front of a sweep (`registry.pareto`): a known set, and the brute-force definition."""

from hypothesis import given
from hypothesis import strategies as st

from infermeter.registry.pareto import front_indices


def _dominated(points: list[tuple[float, float]], i: int) -> bool:
    x, y = points[i]
    return any(
        (ox >= x and oy >= y) and (ox > x or oy > y) for j, (ox, oy) in enumerate(points) if j != i
    )


def test_pareto_front_of_a_known_sweep() -> None:
    # (tokens/s per user, tokens/s per GPU): concurrency 1, 4, 16, 64 and one bad point
    points = [(110.0, 105.0), (95.0, 370.0), (60.0, 900.0), (20.0, 1200.0), (50.0, 800.0)]
    assert front_indices(points) == [3, 2, 1, 0]
    assert 4 not in front_indices(points)  # (50, 800) is beaten by (60, 900) on both


def test_pareto_front_keeps_equal_points_and_drops_ties_that_lose() -> None:
    points = [(1.0, 5.0), (1.0, 5.0), (1.0, 4.0), (2.0, 5.0)]
    assert front_indices(points) == [3]
    assert front_indices([(1.0, 1.0), (1.0, 1.0)]) == [0, 1]
    assert front_indices([]) == []


coordinates = st.floats(min_value=0, max_value=1e4, allow_nan=False)


@given(st.lists(st.tuples(coordinates, coordinates), max_size=30))
def test_pareto_front_is_exactly_the_undominated_points(points: list[tuple[float, float]]) -> None:
    front = front_indices(points)
    assert sorted(front) == [i for i in range(len(points)) if not _dominated(points, i)]
    assert [points[i][0] for i in front] == sorted(points[i][0] for i in front)
