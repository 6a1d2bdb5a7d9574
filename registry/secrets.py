"""Secrets in command lines and texts: found, and replaced by REDACTED before anything is stored.

A result file is published; its `source.command` and `source.server_command` are the exact
command lines, which may carry an API key (`--api-key S`, also inside `--vllm-arg "--api-key
S"`), a token (`--hf-token`), an `Authorization:` header, or an environment assignment such as
`HF_TOKEN=…`. `redact` replaces each value with `REDACTED` and keeps the rest of the line as it
was written, quotes included (`registry.shell_words`); `redact_text` does the same to any text
(a server's log); `LogRedactor` to a text that arrives in pieces, holding at most about one
long line; `find_secret` says what a text still carries (`registry validate` rejects such a
file).

One rule serves every surface: what is stored (a result's commands, a server's log, raw
records), printed (stdout, stderr, error lines), rendered (a fleet's matrix, Kubernetes and
GitHub Actions files) and validated (`registry validate` refuses a file that carries one).
What counts as a secret:
- the value of an option whose name names a credential (`is_credential_name`: its last word,
  in any case or separator style, is key, token, secret, password, credential(s) or
  authorization: `--api-key`, `--hf-token`, `--apiKey`; not `--max-num-batched-tokens`);
- the value of an environment assignment whose name ends the same way (`HF_TOKEN=…`,
  `OPENAI_API_KEY=…`);
- the value of an `Authorization`, `Proxy-Authorization`, `X-Api-Key` or `Api-Key` header, as
  a header (`Authorization: Bearer S`) or as a JSON or Python pair (`"Authorization": "Bearer S"`);
- the value of a key/value pair whose key names a credential, as Python and JSON print it
  (vLLM logs its arguments so: `non-default args: {'api_key': ['S']}`,
  `Namespace(…, hf_token='S')`; `--extra-body '{"apiKey": "S", "x-api-key": "S"}'`);
- the user information of a URL (`http://user:password@host`);
- a string shaped like a known token (Hugging Face `hf_…`, OpenAI `sk-…`, GitHub `ghp_…` and
  `github_pat_…`, GitLab `glpat-…`, Slack `xox?-…`, AWS `AKIA…`).
"""

from __future__ import annotations

import re

from infermeter.registry.shell_words import replace_in_line, words

REDACTED = "REDACTED"  # a plain word: shlex.join leaves it unquoted

# The last word of a credential's name, as the patterns below read it (case-insensitively); the
# plural before the singular, as `credentials?` would try them.
_NAME_ENDS = (
    "key", "token", "secret", "password", "passwd", "passphrase", "credentials", "credential",
    "authorization",
)  # fmt: skip
_NAME_END = "(?:" + "|".join(_NAME_ENDS) + ")"
# A name's closing quote, if any: a pair's key as Python or JSON prints it, or as JSON text inside a
# JSON string shows it, its quote escaped (\"apiKey\": \"S\").
_QUOTE = r"(?:\\?['\"])?"
# A name that may name a credential: words joined by -, _ or . or in camelCase, ending in one of
# the ends above (whether it does is `is_credential_name`'s to say: not `monkey`).
_NAME = rf"(?:[A-Za-z0-9][A-Za-z0-9_.-]*?)?{_NAME_END}"
_OPTION = re.compile(rf"--?(?:[A-Za-z0-9]+[-_.])*[A-Za-z0-9]*{_NAME_END}", re.I)
_OPTION_VALUE = re.compile(rf"(?<![\w-])(?P<name>--?{_NAME})(?P<gap>=|\s+)(?P<value>\S+)", re.I)
# Environment variables are upper case: HF_TOKEN=…, OPENAI_API_KEY=… (not monkey=3).
_ENV = re.compile(
    r"(?<![A-Za-z0-9_])(?P<name>[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?))"
    r"=(?P<value>[^\s'\"]+)"
)
# The scheme words of an authorization header's value (`Bearer S`).
_SCHEMES = ("bearer", "basic", "token", "digest")
# A header, also as JSON or Python print it ("Authorization": "Bearer S"); a scheme word is
# kept, the credential after it replaced. Not an option's name before the reason an error line
# gives (`--api-key: the …`): the option's value is `_OPTION_VALUE`'s to find.
_HEADER = re.compile(
    rf"(?P<name>(?<!--)\b(?:authorization|x-api-key|api-key){_QUOTE}\s*[:=]\s*{_QUOTE}"
    rf"(?:(?:{'|'.join(_SCHEMES)})\s+)?)"
    r"(?P<value>[^\s'\"\\]+)",
    re.I,
)
# A pair as Python or JSON prints it: 'api_key': ['S'], hf_token='S', "apiKey": "S".
# Also as JSON text inside a JSON string shows it, its quotes escaped: \"apiKey\": \"S\".
_PAIR = re.compile(
    rf"(?P<name>(?<![\w-]){_QUOTE}(?P<key>{_NAME}){_QUOTE}\s*[:=]\s*\[?\s*)"
    r"(?P<value>\\\"(?:[^\\\"\n]|\\\\)*\\\"|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\""
    r"|[^\s,;'\"()\[\]{}\\]+)",
    re.I,
)
# A credential's name with a list of values (vLLM logs `'api_key': ['k1', 'k2']` when the key is
# given twice; JSON writes `"api_key": ["k1", "k2"]`): every quoted item is a secret.
_PAIR_LIST = re.compile(
    rf"(?P<name>(?<![\w-]){_QUOTE}(?P<key>{_NAME}){_QUOTE}\s*[:=]\s*)"
    r"(?P<items>\[[^\]\n]*\]|\([^)\n]*\))",
    re.I,
)
_LIST_ITEM = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
# Credentials in a URL: scheme://user:password@host (or a token as the user name).
_USERINFO = re.compile(r"(?P<name>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<value>[^\s/?#@'\"<>]+)@")
_NOT_SECRETS = {"", "none", "null", "true", "false", REDACTED.lower()}
# Known token shapes: each prefix, and what follows it.
_TOKEN_SHAPES = (
    ("hf_", "[A-Za-z0-9]{20,}"),
    ("sk-", "[A-Za-z0-9_-]{20,}"),
    *((f"gh{kind}_", "[A-Za-z0-9]{20,}") for kind in "pousr"),
    ("github_pat_", "[A-Za-z0-9_]{20,}"),
    ("glpat-", "[A-Za-z0-9_-]{20,}"),
    *((f"xox{kind}-", "[A-Za-z0-9-]{10,}") for kind in "abpr"),
    ("AKIA", "[0-9A-Z]{16}"),
)
_SHAPES = re.compile(
    r"\b(?:" + "|".join(re.escape(prefix) + rest for prefix, rest in _TOKEN_SHAPES) + r")\b"
)
# What a text needs for any pattern above to match in it, tested before any of them runs: most
# texts (a log's lines, the 80,000 strings `registry validate` reads) hold none, and the
# patterns' case-insensitive alternations and lazy names cost ~40 µs a string. Built from the
# patterns' own parts, so that a name's end or a token's prefix added to a pattern is in the gate
# too (tests/registry/test_secrets_gate.py generates strings from each pattern).
_PATTERNS = (_OPTION_VALUE, _ENV, _HEADER, _PAIR_LIST, _PAIR, _USERINFO, _SHAPES)
# A name's end, then what joins it to its value (an option's `=` or space, a pair's `:` or `=`
# after its quote); an option's dash and name before a space get their own expression, which
# Python's `re` searches fast from its leading '-', while an alternation of the two it tries at
# every character (47 KB of a vLLM request line: 0.45 ms, not 2.3 ms).
_NAMED_VALUE = (rf"{_NAME_END}{_QUOTE}\s*[:=]", rf"-[a-z0-9_.-]*{_NAME_END}\s")
# Searched in the text lowered (`_lowered`), without re.I: ten times faster.
_NAMED_VALUE_LOWERED = tuple(re.compile(expression) for expression in _NAMED_VALUE)
# str.lower and re.I agree on ASCII; beyond it, re.I alone takes ı, ſ and İ for i, s and i
# (str.lower writes İ as i and a combining dot above, and K, Kelvin's sign, as k), which
# makes 'Authorızation: Bearer S' a header to every pattern.
_LOWERED_AS_ASCII = (("\u0131", "i"), ("\u017f", "s"), ("i\u0307", "i"))
# _SHAPES is case-sensitive: its prefixes, lowered, are in the lowered text.
_TOKEN_PREFIXES = re.compile("|".join(re.escape(prefix.lower()) for prefix, _ in _TOKEN_SHAPES))


# The patterns join a name to its value with \s, which crosses a line's end ('api_key:\n  S',
# '--api-key\nS'): a line ending (but for spaces) in a name and its quote, ':', '=', '[' or a
# scheme word may have its secret's value on the next line; a blank line, between the two.
_CONTINUED = re.compile(rf"(?:{_NAME_END}{_QUOTE}|[:=\[]|{'|'.join(_SCHEMES)})\Z")
_CONTINUED_CHARS = 16  # the longest such end, 'authorization\\"', and one more
# Their last characters, in any case re.I reads: most lines end in none, and are passed on at once.
_CONTINUED_LAST = frozenset([end[-1] for end in (*_NAME_ENDS, *_SCHEMES)] + list("'\":=["))
_CONTINUED_LAST_ANY_CASE = frozenset(
    [*_CONTINUED_LAST, *(c.upper() for c in _CONTINUED_LAST)]
    + [letter for letter, ascii_letter in _LOWERED_AS_ASCII if ascii_letter in _CONTINUED_LAST]
)


def _continues(line: str) -> bool:
    """Whether a pattern may match from `line` across its end into the next line."""
    content = line.rstrip()
    return not content or (
        content[-1] in _CONTINUED_LAST_ANY_CASE
        and _CONTINUED.search(_lowered(content[-_CONTINUED_CHARS:])) is not None
    )


def _lowered(text: str) -> str:
    """`text` lowered, each letter that re.I matches to an ASCII one written as that one."""
    lowered = text.lower()
    if not lowered.isascii():
        for letter, ascii_letter in _LOWERED_AS_ASCII:
            lowered = lowered.replace(letter, ascii_letter)
    return lowered


def _may_hold_secret(text: str) -> bool:
    """The one quick check before any pattern runs (`redact_text`, `find_secret`, `_safe_cut`):
    false, none of them can match in `text`."""
    if "@" in text and "://" in text:  # _USERINFO's
        return True
    lowered = _lowered(text)
    return _TOKEN_PREFIXES.search(lowered) is not None or any(
        expression.search(lowered) for expression in _NAMED_VALUE_LOWERED
    )


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# The last word of a name that names a credential; words run together count when they are a
# known compound (APIKEY, accesstoken), not any word that merely ends so (monkey, broken).
_CREDENTIAL_WORDS = frozenset(
    {"key", "token", "secret", "password", "passwd", "passphrase", "credential", "credentials",
     "authorization", "apikey", "accesskey", "secretkey", "privatekey", "authkey", "authtoken",
     "accesstoken", "apitoken", "bearertoken", "refreshtoken", "sessiontoken", "idtoken",
     "hftoken", "clientsecret"}
)  # fmt: skip


# infermeter's own fields whose name ends in "key" hold a content hash, not a credential: the
# index's and the answers' workload and replicate keys (`"workload_key": "e1d802838f"` in
# `infermeter registry answer --json` was printed as REDACTED).
_OWN_HASH_KEYS = frozenset({"workload_key", "replicate_key"})


def is_credential_name(name: str) -> bool:
    """Whether a key, option or variable name names a credential, in any case or separator
    style: `api_key`, `apiKey`, `x-api-key`, `API-KEY`, `--hf-token`, `Proxy-Authorization`;
    not `max_tokens`, `monkey`, `sort_keys` or our own `workload_key`."""
    if name.lower() in _OWN_HASH_KEYS:
        return False
    found = _WORDS.findall(name)
    return bool(found) and found[-1].lower() in _CREDENTIAL_WORDS


def _is_redacted(value: str) -> bool:
    words = value.strip("'\"\\").split()
    return bool(words) and words[-1].strip("'\"\\") == REDACTED


# A short unquoted number after a name that ends in "token" or "key" is a figure, not a
# credential: AIPerf's `--goodput 'time_to_first_token:1500'`, a `sort_key: 3`. After "password"
# or "secret", quoted ('123') or long, even digits are kept out.
_FIGURE = re.compile(r"\d{1,9}(?:\.\d{1,9})?")
_FIGURE_NAMES = re.compile(r"(?:token|key)['\"]?\s*[:=]\s*\[?\s*$", re.I)


def _pair_value_is_secret(value: str, name: str = "") -> bool:
    if _FIGURE.fullmatch(value) and _FIGURE_NAMES.search(name):
        return False
    if _is_redacted(value) or value.lower() in _SCHEMES:  # the header rule took what follows
        return False
    if value.lstrip("'\"").startswith("$"):  # a reference ($VAR, ${{ secrets.X }}), no value
        return False
    return value.strip("'\"\\").lower() not in _NOT_SECRETS


def _redact_pair(match: re.Match[str]) -> str:
    value = match.group("value")
    if not is_credential_name(match.group("key")) or not _pair_value_is_secret(
        value, match.group("name")
    ):
        return match.group(0)
    quote = '\\"' if value.startswith('\\"') else value[0] if value[0] in "'\"" else ""
    return f"{match.group('name')}{quote}{REDACTED}{quote}"


def _redact_pair_list(match: re.Match[str]) -> str:
    if not is_credential_name(match.group("key")):
        return match.group(0)

    def item(quoted: re.Match[str]) -> str:
        value = quoted.group(0)
        if not _pair_value_is_secret(value, match.group("name")):
            return value
        return f"{value[0]}{REDACTED}{value[0]}"

    return match.group("name") + _LIST_ITEM.sub(item, match.group("items"))


def _redact_option(match: re.Match[str]) -> str:
    if not is_credential_name(match.group("name")):
        return match.group(0)
    return match.group("name") + match.group("gap") + REDACTED


def _redact_text(text: str) -> str:
    text = _HEADER.sub(lambda m: m.group("name") + REDACTED, text)
    text = _PAIR_LIST.sub(_redact_pair_list, text)
    text = _PAIR.sub(_redact_pair, text)
    text = _ENV.sub(lambda m: f"{m.group('name')}={REDACTED}", text)
    text = _SHAPES.sub(REDACTED, text)
    # Last: a token glued to a scheme ('ghp_…http://user@host') is a scheme only once replaced.
    return _USERINFO.sub(lambda m: m.group("name") + REDACTED + "@", text)


def redact(command: str) -> str:
    """`command` with every secret value replaced by REDACTED (see the module docstring); a
    command line stays the command line it was: it splits into the same words but for the
    secrets, and every word, space and quote around them is kept as written."""
    try:
        found = words(command)
    except ValueError:  # not a shell line: redact the text as it is
        return redact_text(command)
    texts = [word.text for word in found]
    redacted = _redact_words(texts)
    return command if redacted == texts else replace_in_line(command, found, redacted)


def redact_text(text: str) -> str:
    """`text` (any text: a log, a message) with every secret value replaced by REDACTED, line
    by line (a line without any secret's marker is passed as it is, which keeps a log fast), and
    a value on the line after its name too (`api_key:` then the key)."""
    if not _may_hold_secret(text):
        return text
    redacted = "".join(
        _redact_line(line) if _may_hold_secret(line) else line
        for line in text.splitlines(keepends=True)
    )
    return _redact_across_lines(redacted)


def _redact_across_lines(text: str) -> str:
    r"""`text`, redacted line by line, with what the patterns match across a line's end redacted
    too: a \n between a name and its value (`_continues`), a value holding a line break other
    than \n (a quoted 'a\x85b'; only \n ends a pattern's value). Each run of \n lines that a
    pattern may match across, with the line it runs into, is redacted as one text."""
    lines = text.split("\n")  # the last: what follows the last \n
    runs = _runs_across_lines(lines)
    if len(text.splitlines()) != len(lines) - (lines[-1] == ""):  # a break other than \n
        covered = {at for first, last in runs for at in range(first, last + 1)}
        runs += [(at, at) for at, line in enumerate(lines) if at not in covered]
    for first, last in sorted(runs, reverse=True):
        run = "\n".join(lines[first : last + 1])
        if _may_hold_secret(run):
            lines[first : last + 1] = [_redact_line(run)]
    return "\n".join(lines)


def _runs_across_lines(lines: list[str]) -> list[tuple[int, int]]:
    """The first and last of each run of `lines` that a pattern may match across: lines that
    continue (`_continues`), and the line after them."""
    runs: list[tuple[int, int]] = []
    for at in [at for at, line in enumerate(lines[:-1]) if _continues(line)]:
        if runs and runs[-1][1] == at:
            runs[-1] = (runs[-1][0], at + 1)
        else:
            runs.append((at, at + 1))
    return runs


def _redact_line(line: str) -> str:
    return _OPTION_VALUE.sub(_redact_option, _redact_text(line))


def _redact_words(words: list[str]) -> list[str]:
    redacted: list[str] = []
    hide_next = False
    for word in words:
        if hide_next:
            redacted.append(REDACTED)
            hide_next = False
            continue
        name, equals, value = word.partition("=")
        if _OPTION.fullmatch(name) and is_credential_name(name):
            if equals:
                redacted.append(f"{name}={REDACTED}")
            else:
                redacted.append(word)
                hide_next = True
            continue
        if equals and _OPTION.fullmatch(value) and is_credential_name(value):  # --x=--api-key S
            redacted.append(word)
            hide_next = True
            continue
        if " " in word.strip():  # an argument that is itself a command line (--vllm-arg "…")
            # re-split only when there is a secret: a JSON value ('{"a": 1}') stays as it was
            if find_secret(word) is None:
                redacted.append(word)
                continue
            inner = redact(word)
            # Not a command line's secret but a text's: a header (-H "Authorization: Bearer S").
            redacted.append(inner if find_secret(inner) is None else redact_text(inner))
            continue
        redacted.append(_redact_text(word))
    return redacted


def without_userinfo(url: str) -> str:
    """`url` without the user information of its authority (`https://user:pw@host/x` →
    `https://host/x`): a source's address cited without credentials."""
    return _USERINFO.sub(lambda m: m.group("name"), url)


def _named_value(text: str) -> str | None:
    """What value of a credential's name (an option, a variable, a header, a pair) `text`
    carries, or None."""
    for match in _OPTION_VALUE.finditer(text):
        value = match.group("value")
        if is_credential_name(match.group("name")) and not (
            _is_redacted(value) or value.startswith("-")
        ):
            return f"the value of `{match.group('name')}` (an API key, token or password)"
    for match in _ENV.finditer(text):
        if not _is_redacted(match.group("value")):
            return f"the value of `{match.group('name')}` (an API key, token or password)"
    for match in _HEADER.finditer(text):
        if not _is_redacted(match.group("value")):
            return "an authorization header's value"
    for match in _PAIR.finditer(text):
        if is_credential_name(match.group("key")) and _pair_value_is_secret(
            match.group("value"), match.group("name")
        ):
            return f"the value of `{match.group('key')}` (an API key, token or password)"
    return None


def find_secret(text: str) -> str | None:
    """What secret `text` carries (named, never shown), or None."""
    if not _may_hold_secret(text):
        return None
    if "@" in text:  # a URL's credentials come before its host
        for match in _USERINFO.finditer(text):
            if not _is_redacted(match.group("value")):
                return "credentials in a URL (user:password@host)"
    named = _named_value(text)
    if named is not None:
        return named
    if _SHAPES.search(text):
        return "a string shaped like an access token"
    return None


class LogRedactor:
    """Redacts a text that arrives in pieces of any size (a server's log as it is written).

    `feed` returns the redacted text of every line completed so far; a line is held until its
    end arrives, except that a line longer than `max_line_chars` is let out in parts, each cut
    at a space and never inside a secret (its name and value stay together), so memory stays
    bounded however long a line grows. `finish` returns what is still held.
    """

    def __init__(self, max_line_chars: int = 65_536, overlap_chars: int = 4_096) -> None:
        self.max_line_chars = max_line_chars
        self.overlap_chars = min(overlap_chars, max_line_chars // 2)
        self._held = ""

    def feed(self, text: str) -> str:
        """The redacted text that `text` completes (whole lines, or parts of an overlong one)."""
        held = self._held + text
        end = _closed_lines_end(held)
        out = redact_text(held[:end]) if end else ""
        held = held[end:]
        while len(held) > self.max_line_chars:
            cut = _safe_cut(held, len(held) - self.overlap_chars)
            out += redact_text(held[:cut])
            held = held[cut:]
        self._held = held
        return out

    def finish(self) -> str:
        """The redacted rest (a last line without its newline)."""
        rest, self._held = self._held, ""
        return redact_text(rest)


def _closed_lines_end(text: str) -> int:
    """Where the whole lines of `text` end, less those at the end that a pattern may match
    across into a line still to come (`_continues`)."""
    end = text.rfind("\n") + 1
    while end and _continues(text[text.rfind("\n", 0, end - 1) + 1 : end]):
        end = text.rfind("\n", 0, end - 1) + 1
    return end


def _safe_cut(text: str, target: int) -> int:
    """Where `text` may be cut near `target`: after a space, never inside a secret's match."""
    cut = max(text.rfind(" ", 0, target), text.rfind("\t", 0, target)) + 1 or target
    if not _may_hold_secret(text):
        return cut
    spans = sorted(
        (match.start(), match.end()) for pattern in _PATTERNS for match in pattern.finditer(text)
    )
    for start, end in reversed(spans):
        if start < cut < end:
            cut = start
    # A secret-shaped run as long as the whole window: let all of it out, redacted.
    return cut or len(text)
