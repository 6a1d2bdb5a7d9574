"""Did you mean, written once (calculators.suggest): what every unknown-id error suggests."""

from infermeter.calculators.suggest import KNOWN, closest, known_hint, unknown_name

GPUS = ["a100-pcie-40gb", "a100-sxm-80gb", "h100-sxm", "h200-sxm", "l40s", "mi300x"]


def test_a_fragment_names_every_id_that_contains_it_first() -> None:
    assert closest("A100", GPUS)[:2] == ["a100-pcie-40gb", "a100-sxm-80gb"]
    assert closest("A100", GPUS, limit=2) == ["a100-pcie-40gb", "a100-sxm-80gb"]


def test_a_misspelling_gets_its_look_alikes() -> None:
    assert closest("h100-sxn", GPUS, limit=1) == ["h100-sxm"]


def test_nothing_near_lists_what_is_known_instead() -> None:
    assert closest("zzzz", GPUS) == []
    assert known_hint("zzzz", GPUS) == f"; known: {', '.join(GPUS)}"
    many = [f"gpu-{n:02d}" for n in range(KNOWN + 3)]
    assert known_hint("zzzz", many) == f"; known: {', '.join(many[:KNOWN])}, …"
    assert known_hint("mi300", GPUS) == "; closest: mi300x"
    assert known_hint("zzzz", []) == ""


def test_an_unknown_name_is_refused_one_way() -> None:
    hint = known_hint("h100-sxn", GPUS)
    assert hint.startswith("; closest: h100-sxm, ")
    assert unknown_name("GPU id", "h100-sxn", GPUS) == f"unknown GPU id 'h100-sxn'{hint}"
    assert unknown_name("GPU id", "mi300", GPUS, among="registry/catalogs/") == (
        "unknown GPU id 'mi300' (not in registry/catalogs/); closest: mi300x"
    )
