"""JSON with comments and trailing commas (JSONC), the dialect VS Code writes ``.vscode/mcp.json`` in.

Comments and trailing commas are replaced by spaces rather than removed, so every other character keeps its
line and column and a JSON error still points at the right place in the user's file.
"""

from __future__ import annotations

__all__ = ["strip_jsonc"]


def strip_jsonc(text: str) -> str:
    """``text`` with ``//`` and ``/* */`` comments and trailing commas blanked out (strings untouched)."""
    chars = list(text)
    commas: list[int] = []
    index, in_string = 0, False
    while index < len(chars):
        char = chars[index]
        if in_string:
            if char == "\\":
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == ",":
            commas.append(index)
        elif text.startswith("//", index):
            end = text.find("\n", index)
            index = _blank(chars, index, len(text) if end == -1 else end)
            continue
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            # An unclosed comment is left in place: the JSON parser then reports where it starts.
            if end != -1:
                index = _blank(chars, index, end + 2)
                continue
        index += 1
    for comma in commas:
        after = comma + 1
        while after < len(chars) and chars[after].isspace():
            after += 1
        if after < len(chars) and chars[after] in "}]":
            chars[comma] = " "
    return "".join(chars)


def _blank(chars: list[str], start: int, end: int) -> int:
    """Replace ``chars[start:end]`` by spaces, keeping line breaks so line numbers stay right; returns end."""
    for position in range(start, end):
        if chars[position] not in "\r\n":
            chars[position] = " "
    return end
