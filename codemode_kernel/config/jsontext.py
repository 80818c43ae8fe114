"""JSON text as users hand it to us: decoded, parsed with a nesting limit, and with duplicate keys found.

Python's ``json`` parser recurses once per level, so ``[[[[...]]]]`` a hundred thousand levels deep ends in
a RecursionError, not a message; and it keeps the last of two equal keys without a word, so the first
``"github"`` server of a file silently disappears. Both are found here by one scan of the text itself,
with the line and column, before the standard parser does the actual parsing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import ConfigError
from .jsonc import strip_jsonc

__all__ = ["MAX_DEPTH", "DuplicateKey", "JsonDocument", "load_json_bytes"]

MAX_DEPTH = 100
"""Nesting levels of objects and lists a file may have; real config files and tool listings stay far below."""

# A complete string (so brackets inside it do not count), a bracket, or the punctuation that tells keys
# from values and counts list items.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]', re.DOTALL)


@dataclass(frozen=True)
class DuplicateKey:
    """A key written a second (or later) time in one object: ``parts`` is its JSON path, key included."""

    parts: tuple[str | int, ...]
    line: int
    column: int


@dataclass(frozen=True)
class JsonDocument:
    """A JSON file as read: its value, and the keys it writes twice (JSON keeps the last one silently)."""

    data: Any
    duplicates: tuple[DuplicateKey, ...] = ()


def load_json_bytes(
    content: bytes, *, file: str, fix: str, empty_fix: str | None = None, comments: bool = False
) -> JsonDocument:
    """Decode and parse a JSON file's bytes; every way this fails is a ConfigError naming ``file``.

    UTF-8 with or without a byte order mark; with ``comments``, JSONC (comments and trailing commas).
    ``fix`` is the advice for a syntax error, ``empty_fix`` for a file with nothing in it (default ``fix``).
    """
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"is not UTF-8 text (byte {exc.start})", file=file, fix="save the file as UTF-8"
        ) from None
    if not text.strip():
        raise ConfigError("is empty", file=file, fix=empty_fix or fix)
    if comments:
        text = strip_jsonc(text)
    too_deep, duplicates = _scan(text, MAX_DEPTH)
    if too_deep is not None:
        line, column = _line_column(text, too_deep)
        raise ConfigError(
            f"nested too deeply: more than {MAX_DEPTH} levels of objects and lists "
            f"(at line {line}, column {column})",
            file=file,
            fix=f"keep the nesting within {MAX_DEPTH} levels; no config or tool listing needs more",
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=file, fix=fix
        ) from None
    return JsonDocument(data, tuple(duplicates))


def _scan(text: str, max_depth: int) -> tuple[int | None, list[DuplicateKey]]:
    """Where the text first nests too deeply, and every key that repeats a key of the same object.

    The offset is that of the first bracket opening level ``max_depth + 1`` (the scan stops there), or
    None; the keys are in file order. Text that is not valid JSON gives a list that means nothing, but
    no error: the parser reports it.
    """
    found: list[DuplicateKey] = []
    stack: list[_Container] = []
    key_token: re.Match[str] | None = None
    for token in _TOKENS.finditer(text):
        char = token.group()[0]
        if char == '"':
            key_token = token
            continue
        top = stack[-1] if stack else None
        if char == ":" and key_token is not None and top is not None and top.is_object:
            key = _key(key_token.group())
            if key in top.seen:
                line, column = _line_column(text, key_token.start())
                found.append(DuplicateKey((*top.parts, key), line, column))
            top.seen.add(key)
            top.key = key
        elif char in "{[":
            if len(stack) == max_depth:
                return token.start(), found
            stack.append(_Container(is_object=char == "{", parts=top.child_parts() if top else ()))
        elif char in "}]" and stack:
            stack.pop()
        elif char == "," and top is not None and not top.is_object:
            top.index += 1
        key_token = None
    return None, found


def _key(token: str) -> str:
    """A key token's text as a string (itself when it is no valid JSON string: the parser reports that)."""
    try:
        key = json.loads(token)
    except ValueError:
        return token
    return key if isinstance(key, str) else token


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


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
