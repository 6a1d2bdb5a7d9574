"""Deterministic YAML for rendered files: keys in the order built, multi-line strings as `|`,
and comments that stay comments whatever a value shown in them holds."""

from __future__ import annotations

import re
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


# What no YAML stream may hold, comments included (YAML 1.1's printable set, as PyYAML's reader
# checks it): one such character makes the whole file unreadable.
_NOT_PRINTABLE = re.compile(
    r"[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def comment(text: str) -> str:
    """`text` as comment lines, `# ` before each. The rest of a value shown in it (a plan's
    path) after a line break (LF, CR, U+0085, U+2028 or U+2029: each ends a YAML comment)
    goes on a comment line of its own instead of starting YAML, and a character no YAML file
    may hold is shown as U+FFFD."""
    printable = _NOT_PRINTABLE.sub("\ufffd", text)
    return "".join(f"# {line}\n" for line in printable.splitlines())
