"""Server-supplied text made safe to place in Python source: comments, docstrings and string literals.

Descriptions and names come from servers and are untrusted. Whatever they contain (newlines, ``\"\"\"``,
backslashes, NUL, lone surrogates), the generated source must still parse, and no text may end a comment
or a string early: that would let a description inject code into the stub an LLM reads and a worker may
execute.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["clip", "comment_text", "docstring_text", "py_string", "summary"]

# Characters that would end a line, break compile() (NUL, lone surrogates) or reorder text for a reader
# (bidirectional overrides).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"})
_SPACES = re.compile(r"\s+")
# A line that starts a list item or a heading: a description's first paragraph has ended before it.
_LIST_OR_HEADING = re.compile(r"[ \t]*(?:[-*+•]|\d+[.)]|#+)\s")
# The end of a sentence: ., ! or ? before a space and a word that does not start in lower case ("e.g. the").
_SENTENCE_END = re.compile(r"[.!?](?=\s+[^\sa-z])")
_ABBREVIATIONS = frozenset({"approx", "cf", "eg", "etc", "ie", "incl", "vs"})
_INITIALS = re.compile(r"(?:[a-z]\.)+[a-z]")  # "e.g", "i.e", "u.s"
# A double quote that another one follows (or that ends the text) could help form a closing `"""`.
_RISKY_QUOTE = re.compile(r'"(?="|$)')


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 3, 0)].rstrip() + "..."


def summary(text: str, limit: int) -> str:
    """The first sentences of ``text`` that fit on one line of at most ``limit`` characters.

    Servers hard-wrap their descriptions, so a first line often stops mid-sentence: lines are joined
    until one ends a sentence. Whole sentences of that text are taken while they fit (a second one often
    says when not to use the tool); only a first sentence longer than ``limit`` is cut, at a word, with
    an ellipsis.
    """
    rest = _SPACES.sub(" ", " ".join(_first_lines(text))).strip()
    taken = ""
    while rest:
        end = _sentence_end(rest)
        sentence, rest = rest[:end], rest[end:].lstrip()
        joined = f"{taken} {sentence}" if taken else sentence
        if len(joined) > limit:
            return taken or _cut(sentence, limit)
        taken = joined
    return taken


def _first_lines(text: str) -> list[str]:
    """The lines of ``text`` up to the first that ends a sentence, a blank line, or a list or heading."""
    lines: list[str] = []
    for line in _clean(text, keep_newlines=True).strip().split("\n"):
        if not line.strip() or (lines and _LIST_OR_HEADING.match(line)):
            break
        lines.append(line.strip())
        if _ends_sentence(lines[-1]):
            break
    return lines


def _cut(sentence: str, limit: int) -> str:
    """``sentence`` cut to ``limit`` characters at a word, with an ellipsis."""
    cut = sentence[: max(limit - 1, 0)]
    word_end = cut.rfind(" ")
    if word_end > limit // 2:  # a word boundary not too far back; else cut the (very long) word itself
        cut = cut[:word_end]
    return cut.rstrip(" ,;:") + "…"


def _sentence_end(text: str) -> int:
    """Where the first sentence of one-line ``text`` ends (its length when it is one sentence).

    That is after the first ``.``, ``!`` or ``?`` before a word not in lower case, unless the period
    ends an abbreviation ("e.g. Oslo").
    """
    for end in _SENTENCE_END.finditer(text):
        if end.group() == "." and _abbreviation(text[: end.start()]):
            continue
        return end.end()
    return len(text)


def _ends_sentence(line: str) -> bool:
    """Whether ``line`` ends a sentence (or with a colon, before a list): a hard wrap stops there."""
    return line[-1:] in ("!", "?", ":") or (line[-1:] == "." and not _abbreviation(line[:-1]))


def _abbreviation(before: str) -> bool:
    """Whether the word that ends ``before`` is an abbreviation when a period follows ("e.g", "etc")."""
    word = before.rsplit(" ", 1)[-1].lstrip("([{\"'`").lower()
    return word in _ABBREVIATIONS or _INITIALS.fullmatch(word) is not None


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
