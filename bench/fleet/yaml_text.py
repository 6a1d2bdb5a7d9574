"""Deterministic YAML for rendered files: keys in the order built, multi-line strings as `|`."""

from __future__ import annotations

from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    """SafeDumper that writes a string holding a newline as a literal block, and no anchors."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _string)


def dump(document: Any) -> str:
    """One YAML document, block style, keys unsorted, lines unwrapped."""
    text: str = yaml.dump(
        document, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=10_000
    )
    return text


def dump_all(documents: list[Any]) -> str:
    """Several documents separated by `---`."""
    return "---\n".join(dump(document) for document in documents)
