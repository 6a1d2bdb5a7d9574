"""The calculators' inputs are declared once (`calculators.inputs`): every `infermeter calc`
command's options are generated from the same fields the calculator pages show."""

import click
import pytest
from test_calc_api import CATALOG, calc_compute

from infermeter.bench.cli.calc import calc_group
from infermeter.calculators.inputs import FIELDS

CLI_ONLY = {"as_json", "from_perf"}  # printing, and reading another command's output


@pytest.mark.parametrize("kind", sorted(FIELDS))
def test_every_cli_option_is_a_declared_field_and_back(kind: str) -> None:
    command = calc_group.commands[kind]
    options = {p.name for p in command.params if isinstance(p, click.Option)} - CLI_ONLY
    if kind in ("vram", "fit"):
        options -= {"engine"}
    declared = {field.name for field in FIELDS[kind] if field.where != "page"}
    assert options == declared


@pytest.mark.parametrize("kind", sorted(FIELDS))
def test_the_cli_default_is_the_pages_default(kind: str) -> None:
    command = calc_group.commands[kind]
    defaults = {p.name: p.default for p in command.params if isinstance(p, click.Option)}
    for field in FIELDS[kind]:
        if field.where == "page" or field.kind in ("bool", "ids") or field.cli_required:
            continue
        given = defaults[field.name]
        assert (given is None) == (field.default == ""), field.name
        if given is not None:
            assert str(given) in (field.default, f"{field.default}.0"), field.name


@pytest.mark.parametrize(
    ("kind", "name"),
    [(kind, field.name) for kind, fields in sorted(FIELDS.items()) for field in fields
     if field.example],
)  # fmt: skip
def test_an_example_fills_only_an_input_the_command_line_asks_for(kind: str, name: str) -> None:
    # A page's link leaves out an input at its form's prefill, so a page opened without it
    # computes at the example: vram's max_model_len at 32768 where `calc vram` (and vLLM) plan
    # the model's own context length, fit's concurrency at 16 where `calc fit` plans 1. An input
    # with an example must be one whose absence both skins refuse.
    query = {field.name: field.prefill for field in FIELDS[kind]} | {name: ""}
    result = calc_compute.compute(kind, query, CATALOG)
    assert "errors" in result, f"{kind} computes without {name}: its example is no default"
