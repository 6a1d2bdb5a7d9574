"""Did you mean, written once (calculators.suggest): what every unknown-id error suggests."""

from infermeter.calculators.suggest import closest, closest_hint

GPUS = ["a100-pcie-40gb", "a100-sxm-80gb", "h100-sxm", "h200-sxm", "l40s", "mi300x"]


def test_a_fragment_names_every_id_that_contains_it_first() -> None:
    assert closest("A100", GPUS)[:2] == ["a100-pcie-40gb", "a100-sxm-80gb"]
    assert closest("A100", GPUS, limit=2) == ["a100-pcie-40gb", "a100-sxm-80gb"]


def test_a_misspelling_gets_its_look_alikes() -> None:
    assert closest("h100-sxn", GPUS, limit=1) == ["h100-sxm"]


def test_nothing_near_gives_no_hint() -> None:
    assert closest("zzzz", GPUS) == []
    assert closest_hint("zzzz", GPUS) == ""
    assert closest_hint("mi300", GPUS) == "; closest: mi300x"
