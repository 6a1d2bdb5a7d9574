"""The running command's options as the library's typed input: a dataclass whose fields are
named as the options are."""

from typing import Any

import click

from infermeter.calculators.fields import TargetT, same_named


def from_options(target: type[TargetT], **given: Any) -> TargetT:
    """`target` (a dataclass) of the running command: each field an option of the same name
    gives, as click parsed it, and the rest (looked up, converted) from `given`."""
    return same_named(target, click.get_current_context().params, **given)
