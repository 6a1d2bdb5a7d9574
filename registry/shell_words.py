"""The words of a shell command line, each with where its characters stand in the line.

`shlex.split` gives a line's words but forgets how they were written (`'x'`, `"x"`, `x`), so a
line rebuilt with `shlex.join` is quoted its own way. `words` splits as `shlex.split` does
(POSIX rules: single quotes literal; in double quotes a backslash escapes only `"` and `\\`;
outside quotes a backslash escapes any character) and keeps, for each word, the index in the
line of each of its characters. `replace_in_line` then edits words in place: a word's changed
part is written back where it stood, in the quoting it had there, when that part was written
there as it reads (no quote or backslash inside it); else the word is quoted anew. The rest of
the line is kept byte for byte.
"""

from __future__ import annotations

import contextlib
import itertools
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

_SPACE = " \t\r\n"


@dataclass(frozen=True)
class Word:
    """One word of a line: its text as the shell reads it, the line's slice it was written in
    (`start`, `end`), and for each of its characters that character's index in the line."""

    text: str
    start: int
    end: int
    sources: tuple[int, ...]


def words(line: str) -> list[Word]:
    """The words of `line`; raises ValueError where `shlex.split` does (an open quote, a
    trailing backslash), and where the two would ever disagree."""
    found: list[Word] = []
    index, size = 0, len(line)
    while index < size:
        if line[index] in _SPACE:
            index += 1
            continue
        start = index
        text: list[str] = []
        sources: list[int] = []
        while index < size and line[index] not in _SPACE:
            char = line[index]
            if char == "\\":
                if index + 1 >= size:
                    raise ValueError("No escaped character")
                text.append(line[index + 1])
                sources.append(index + 1)
                index += 2
            elif char == "'":
                close = line.find("'", index + 1)
                if close < 0:
                    raise ValueError("No closing quotation")
                text.extend(line[index + 1 : close])
                sources.extend(range(index + 1, close))
                index = close + 1
            elif char == '"':
                index += 1
                while True:
                    if index >= size:
                        raise ValueError("No closing quotation")
                    char = line[index]
                    if char == '"':
                        index += 1
                        break
                    if char == "\\" and index + 1 < size and line[index + 1] in '"\\':
                        index += 1
                    text.append(line[index])
                    sources.append(index)
                    index += 1
            else:
                text.append(char)
                sources.append(index)
                index += 1
        found.append(Word("".join(text), start, index, tuple(sources)))
    if [word.text for word in found] != shlex.split(line):
        raise ValueError("the line does not split as a shell splits it")
    return found


def _in_place(line: str, word: Word, new: str) -> str:
    """The slice of `line` that reads as `new` instead of `word.text`, edited where it can be."""
    old = word.text
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    changed = word.sources[prefix : len(old) - suffix]
    written = line[word.start : word.end]
    if not changed or any(b - a != 1 for a, b in itertools.pairwise(changed)):
        return shlex.quote(new)
    cut_from, cut_to = changed[0] - word.start, changed[-1] + 1 - word.start
    return written[:cut_from] + new[prefix : len(new) - suffix] + written[cut_to:]


def replace_in_line(line: str, found: Sequence[Word], new_texts: Sequence[str]) -> str:
    """`line` with each word of `found` (its `words`) reading as its `new_texts` entry,
    edited in place (see the module docstring). Where an edit in place would not read as
    wanted (the new text holds a quote the old quoting cannot), the changed words are quoted
    anew, so the line always splits into `new_texts`."""
    edited = _rebuilt(line, found, new_texts, in_place=True)
    with contextlib.suppress(ValueError):  # the edit left an escape or a quote open
        if shlex.split(edited) == list(new_texts):
            return edited
    return _rebuilt(line, found, new_texts, in_place=False)


def _rebuilt(line: str, found: Sequence[Word], new_texts: Sequence[str], in_place: bool) -> str:
    parts: list[str] = []
    last = 0
    for word, new in zip(found, new_texts, strict=True):
        parts.append(line[last : word.start])
        if new == word.text:
            parts.append(line[word.start : word.end])
        else:
            parts.append(_in_place(line, word, new) if in_place else shlex.quote(new))
        last = word.end
    parts.append(line[last:])
    return "".join(parts)
