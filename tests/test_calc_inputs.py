"""The calculators' inputs are declared once (`calculators.inputs`): every `infermeter calc`
command's options are generated from the same fields the calculator pages show."""

import click
import pytest

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
