r"""The dotenv format that ``envFile`` points at: ``KEY=VALUE`` lines, as VS Code and docker read them.

Accepted: blank lines, ``#`` comments (whole lines, or after an unquoted value following a space), an
optional ``export`` prefix, single quotes (taken literally), double quotes (with ``\n``, ``\t``, ``\"``,
``\\`` escapes). Values are not expanded and cannot span lines; a later line wins over an earlier one.
"""

from __future__ import annotations

import re

from ..core.errors import EnvFileError

__all__ = ["EnvFileError", "parse_env_file"]

_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def parse_env_file(text: str) -> dict[str, str]:
    """Return the variables of a dotenv file, in file order."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "\0" in line:
            raise EnvFileError(
                "contains a NUL character, which no environment variable can hold",
                line=number,
                fix="remove the NUL character (a text editor may show it as ^@)",
            )
        match = _LINE.fullmatch(line)
        if match is None:
            raise EnvFileError(
                "expected KEY=VALUE",
                line=number,
                fix="write one variable per line as KEY=VALUE, or start the line with # for a comment",
            )
        key, rest = match.groups()
        values[key] = _value(rest, number)
    return values


def _value(rest: str, number: int) -> str:
    if rest[:1] in ("'", '"'):
        quote = rest[0]
        end = _closing_quote(rest, quote)
        if end is None:
            raise EnvFileError(
                f"the value's {quote} is never closed",
                line=number,
                fix="close the quote on the same line (a value cannot span lines)",
            )
        trailing = rest[end + 1 :].strip()
        if trailing and not trailing.startswith("#"):
            raise EnvFileError(
                "text after the closing quote",
                line=number,
                fix="quote the whole value, or start a comment with #",
            )
        body = rest[1:end]
        return body if quote == "'" else _unescape(body)
    # Unquoted: a " #" starts a comment; "a#b" keeps its "#" (URLs with fragments, passwords).
    comment = re.search(r"\s#", rest)
    return (rest[: comment.start()] if comment else rest).strip()


def _closing_quote(rest: str, quote: str) -> int | None:
    index = 1
    while index < len(rest):
        char = rest[index]
        if char == "\\" and quote == '"':
            index += 2
            continue
        if char == quote:
            return index
        index += 1
    return None


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)
