"""Server-supplied text made safe to place in Python source: comments, docstrings and string literals.

Descriptions and names come from servers and are untrusted. Whatever they contain (newlines, ``\"\"\"``,
backslashes, NUL, lone surrogates), the generated source must still parse, and no text may end a comment
or a string early: that would let a description inject code into the stub an LLM reads and a worker may
execute.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["clip", "comment_text", "docstring_text", "py_string"]

# Characters that would end a line, break compile() (NUL, lone surrogates) or reorder text for a reader
# (bidirectional overrides).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"})
_SPACES = re.compile(r"\s+")
# A double quote that another one follows (or that ends the text) could help form a closing `"""`.
_RISKY_QUOTE = re.compile(r'"(?="|$)')


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 3, 0)].rstrip() + "..."


def _clean(text: str, keep_newlines: bool) -> str:
    """Replace unsafe characters by spaces; keep line breaks (normalised to LF) if asked."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for char in text:
        if (char == "\n" and keep_newlines) or char == "\t":
            out.append(char)
        elif unicodedata.category(char) in _UNSAFE_CATEGORIES:
            out.append(" ")
        else:
            out.append(char)
    return "".join(out)


def comment_text(text: str, limit: int = 400) -> str:
    """One line of text for a ``#`` comment: whitespace collapsed, nothing that could end the line."""
    return clip(_SPACES.sub(" ", _clean(text, keep_newlines=False)).strip(), limit)


def docstring_text(text: str, limit: int = 4000) -> str:
    """Text for the inside of a ``\"\"\"`` docstring: backslashes and risky quotes escaped.

    Lines keep their breaks (tool descriptions are often written as paragraphs) but lose trailing
    spaces, and runs of blank lines shrink to one.
    """
    cleaned = clip(_clean(text, keep_newlines=True).strip(), limit)
    lines = [line.rstrip() for line in cleaned.split("\n")]
    compact: list[str] = []
    for line in lines:
        if line or (compact and compact[-1]):
            compact.append(line)
    body = "\n".join(compact).replace("\\", "\\\\")
    return _RISKY_QUOTE.sub('\\\\"', body)


def py_string(value: str) -> str:
    """A Python string literal for ``value``, in double quotes where that needs no escaping.

    Built on ``repr``, which escapes everything non-printable (line separators, surrogates, NUL), so
    the literal is valid source and round-trips to exactly ``value``.
    """
    literal = repr(value)
    if literal.startswith("'") and '"' not in value:
        literal = '"' + literal[1:-1] + '"'
    return literal
