"""JSON text as users hand it to us: parsed with a nesting limit, and with duplicate keys found.

Python's ``json`` parser recurses once per level, so ``[[[[...]]]]`` a hundred thousand levels deep ends in
a RecursionError, not a message; and it keeps the last of two equal keys without a word, so the first
``"github"`` server of a file silently disappears. Both are found here on the text itself, with the line
and column, before and after the standard parser does the actual parsing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

__all__ = ["MAX_DEPTH", "DuplicateKey", "duplicate_keys", "parse_json"]

MAX_DEPTH = 100
"""Nesting levels of objects and lists a file may have; real config files and tool listings stay far below."""

# A complete string (so brackets inside it do not count), or a bracket.
_BRACKETS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
# The same, plus the punctuation that tells keys from values and counts list items.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]', re.DOTALL)


@dataclass(frozen=True)
class DuplicateKey:
    """A key written a second (or later) time in one object: ``parts`` is its JSON path, key included."""

    parts: tuple[str | int, ...]
    line: int
    column: int


def parse_json(text: str, *, file: str, fix: str, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``text``; a ConfigError naming ``file`` for nesting deeper than ``max_depth`` or bad JSON.

    ``fix`` is the advice for a syntax error (callers know whether comments were allowed).
    """
    too_deep = _first_too_deep(text, max_depth)
    if too_deep is not None:
        line, column = _line_column(text, too_deep)
        raise ConfigError(
            f"nested too deeply: more than {max_depth} levels of objects and lists "
            f"(at line {line}, column {column})",
            file=file,
            fix=f"keep the nesting within {max_depth} levels; no config or tool listing needs more",
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=file, fix=fix
        ) from None


def duplicate_keys(text: str) -> list[DuplicateKey]:
    """Every key that repeats a key of the same object, in file order; ``text`` must be valid JSON."""
    found: list[DuplicateKey] = []
    stack: list[_Container] = []
    key_token: re.Match[str] | None = None
    for token in _TOKENS.finditer(text):
        char = token.group()[0]
        if char == '"':
            key_token = token
            continue
        if char == ":" and key_token is not None:
            top = stack[-1]
            key = json.loads(key_token.group())
            if key in top.seen:
                line, column = _line_column(text, key_token.start())
                found.append(DuplicateKey((*top.parts, key), line, column))
            top.seen.add(key)
            top.key = key
        elif char in "{[":
            parts = stack[-1].child_parts() if stack else ()
            stack.append(_Container(is_object=char == "{", parts=parts))
        elif char in "}]":
            stack.pop()
        elif char == "," and not stack[-1].is_object:
            stack[-1].index += 1
        key_token = None
    return found


@dataclass
class _Container:
    """An object or list being read: where it is, and what it holds so far."""

    is_object: bool
    parts: tuple[str | int, ...]
    seen: set[str] = field(default_factory=set)
    key: str = ""
    index: int = 0

    def child_parts(self) -> tuple[str | int, ...]:
        return (*self.parts, self.key if self.is_object else self.index)


def _first_too_deep(text: str, max_depth: int) -> int | None:
    """The offset of the first bracket that opens level ``max_depth + 1``, or None."""
    depth = 0
    for token in _BRACKETS.finditer(text):
        char = token.group()
        if char in "{[":
            depth += 1
            if depth > max_depth:
                return token.start()
        elif char in "}]":
            depth -= 1
    return None


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
