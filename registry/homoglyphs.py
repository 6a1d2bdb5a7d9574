"""Homoglyphs: Cyrillic and Greek letters that read as Latin ones, and names they disguise.

Pages, tables and rankings call a catalog entry by its name. A Cyrillic `Н` reads as the Latin
`H`, so a GPU named 'NVIDIA Н100 SXM' in Cyrillic would read as the H100 wherever it is shown,
and no folding of case, width or spacing (`registry.catalog`'s names-apart check) tells them
apart. After Unicode TR39 (security mechanisms), a name is refused when

- a word mixes Latin letters with Cyrillic or Greek ones (TR39's mixed-script test: 'Н100'
  spelled `Н` Cyrillic, `1`, `0`, `0` is one script, but 'SХM' with a Cyrillic `Х` is two), or
- every Cyrillic (or every Greek) letter of the name is one that reads as a Latin letter
  (TR39's whole-script confusable: 'NVIDIA Н100 SXM', or 'Н100' alone).

A name written in one script passes, Latin or not ('ГигаЧат', 'Модель 7B', '通义千问 Qwen2'):
its Cyrillic or Greek words show letters no Latin name has.
"""

import re
import unicodedata

_MIXED_WITH_LATIN = ("Cyrillic", "Greek")

LATIN_LOOKALIKES = frozenset(
    "АВЕЅІЈКМНОРСТУХҮӀԚԜаеорсухѕіјһԁԛԝӏү"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϜϲϹϳϿαιονρυ"  # Greek
)
"""The Cyrillic and Greek letters that read as a Latin letter in common fonts (from TR39's
confusables.txt, its single-letter Latin prototypes)."""

_WORD = re.compile(r"\w+")


def script_of(character: str) -> str | None:
    """'Latin', 'Cyrillic' or 'Greek' for a letter of that script (by its Unicode name: `LATIN
    CAPITAL LETTER H`, `CYRILLIC CAPITAL LETTER EN`); None for any other character."""
    if not unicodedata.category(character).startswith("L"):
        return None
    script = unicodedata.name(character, "").split(" ", 1)[0].capitalize()
    return script if script in ("Latin", *_MIXED_WITH_LATIN) else None


def _letter(character: str) -> str:
    return f"U+{ord(character):04X} {unicodedata.name(character, '')}"


def _mixed_word(name: str) -> str | None:
    for word in _WORD.findall(name):
        scripts = {script_of(character) for character in word}
        other = next((script for script in _MIXED_WITH_LATIN if script in scripts), None)
        if "Latin" in scripts and other is not None:
            letter = next(character for character in word if script_of(character) == other)
            return f"the word {word!r} mixes Latin and {other} letters ({_letter(letter)})"
    return None


def _reads_as_latin(name: str) -> str | None:
    for script in _MIXED_WITH_LATIN:
        letters = [character for character in name if script_of(character) == script]
        if letters and all(letter in LATIN_LOOKALIKES for letter in letters):
            word = next(word for word in _WORD.findall(name) if letters[0] in word)
            letter = _letter(letters[0])
            return f"{word!r} is written in {script} letters that read as Latin ones ({letter})"
    return None


def disguised_name(name: str) -> str | None:
    """Why `name` could pass for another written in Latin letters, or None (see the module's
    docstring)."""
    return _mixed_word(name) or _reads_as_latin(name)
