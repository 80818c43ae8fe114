"""Tool and property names to Python identifiers, and the collision check over all tools.

MCP tool names are free text (``get-weather``, ``files.read``, ``getHTTPResponse``, ``天气``); code mode
needs one snake_case function name per tool that an LLM can guess and that Python can parse. Property names
are kept when they already are identifiers (the wire name is what the tool's documentation uses) and are
converted by the same rules only when Python could not accept them.
"""

from __future__ import annotations

import builtins
import keyword
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence

from ..core.errors import ToolNameCollisionError
from ..core.toolspec import ToolSpec

__all__ = [
    "assign_function_names",
    "assign_parameter_names",
    "function_name",
    "parameter_name",
    "type_name",
]

# A tool called ``list`` or ``help`` must not shadow the builtin in a notebook, so lowercase builtins are
# protected like keywords. Soft keywords (``match``, ``case``) are legal names and stay as they are.
_PROTECTED = frozenset(name for name in dir(builtins) if name.islower() and not name.startswith("_"))

# Names a generated class must not take: they would shadow what the stub imports or uses.
RESERVED_TYPE_NAMES = frozenset(
    {"Any", "Literal", "NotRequired", "Required", "TypedDict"}
    | {name for name in dir(builtins) if not name.startswith("_")}
    | set(keyword.kwlist)
)


def _is_word_char(char: str) -> bool:
    """Whether ``char`` may appear inside an identifier (underscore counts as a separator here)."""
    return char != "_" and ("a" + char).isidentifier()


def _strip_marks(text: str) -> str:
    """Decompose (NFKD) and drop non-spacing marks: ``café`` -> ``cafe``, ``①`` -> ``1``.

    Variation selectors are non-spacing marks too, so an emoji leaves nothing behind.
    """
    return "".join(
        c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) not in ("Mn", "Me")
    )


def _words(text: str) -> list[str]:
    """Split ``text`` into lowercase words at separators and case changes.

    ``getHTTPResponse`` gives ``get``, ``http``, ``response``: an upper-case letter starts a word after a
    lower-case letter or digit, and the last capital of an acronym starts a word when a lower-case letter
    follows it.
    """
    chars = _strip_marks(text)
    words: list[str] = []
    current: list[str] = []
    for i, char in enumerate(chars):
        if not _is_word_char(char):
            if current:
                words.append("".join(current))
                current = []
            continue
        if current and char.isupper():
            prev = chars[i - 1]
            nxt = chars[i + 1] if i + 1 < len(chars) else ""
            if prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower()):
                words.append("".join(current))
                current = []
        current.append(char)
    if current:
        words.append("".join(current))
    # Lower-casing can add marks again ("İ" -> "i̇"); NFKC makes the name the one Python's parser sees.
    cleaned = (unicodedata.normalize("NFKC", _strip_marks(word.lower())) for word in words)
    return [word for word in ("".join(c for c in w if _is_word_char(c)) for w in cleaned) if word]


def _digest(text: str) -> str:
    """A short stable hash, for names that have nothing left after cleaning (``🌤️``)."""
    import hashlib  # here: it loads OpenSSL (megabytes), which a worker process otherwise never needs

    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _finish(name: str, *, fallback: str, digit_prefix: str, protect: Collection[str] = ()) -> str:
    """Make a joined snake_case name a usable identifier: non-empty, no leading digit, no keyword."""
    if not name:
        return fallback
    if not name[0].isidentifier():
        name = digit_prefix + name
    if keyword.iskeyword(name) or name in protect:
        name += "_"
    return name


def function_name(tool_name: str, prefix: str = "") -> str:
    """The snake_case Python function name for a tool, with an optional per-server prefix.

    The prefix (``gh_`` or ``gh``) is converted like the name and joined with one underscore, so
    ``prefix="gh_"`` and ``"getIssue"`` give ``gh_get_issue``. Keywords and builtins get a trailing
    underscore (``class_``, ``list_``), a leading digit a ``t_`` prefix, and a name with nothing usable left
    becomes ``tool_<hash>``.
    """
    words = _words(prefix)
    name_words = _words(tool_name)
    if not name_words:
        name_words = [f"tool_{_digest(tool_name)}"]
    return _finish("_".join(words + name_words), fallback="", digit_prefix="t_", protect=_PROTECTED)


def parameter_name(property_name: str, index: int = 0) -> str:
    """The Python parameter name for a property: itself when it is an identifier, else converted.

    ``userId`` stays ``userId`` (the wire name is what the tool documents); ``user-id`` becomes
    ``user_id``, ``class`` ``class_``, ``2fa`` ``p_2fa``, and an unusable name ``arg<index + 1>``.
    """
    nfkc = unicodedata.normalize("NFKC", property_name)
    if property_name.isidentifier() and nfkc == property_name:
        return property_name + "_" if keyword.iskeyword(property_name) else property_name
    return _finish("_".join(_words(property_name)), fallback=f"arg{index + 1}", digit_prefix="p_")


def assign_parameter_names(wire_names: Sequence[str], taken: Collection[str] = ()) -> dict[str, str]:
    """Map each property (wire) name to a unique Python parameter name.

    Names that are usable as they are claim themselves first, so a property literally called ``user_id``
    keeps its name and ``user-id`` becomes ``user_id_2``. ``taken`` holds names already in use.
    """
    used = set(taken)
    result: dict[str, str] = {}
    candidates = {wire: parameter_name(wire, i) for i, wire in enumerate(wire_names)}
    ordered = [w for w in wire_names if candidates[w] == w] + [w for w in wire_names if candidates[w] != w]
    for wire in ordered:
        if wire in result:
            continue
        name = candidates[wire]
        base, n = name, 2
        while name in used:
            name = f"{base}_{n}"
            n += 1
        used.add(name)
        result[wire] = name
    return {wire: result[wire] for wire in wire_names}


def type_name(name: str) -> str:
    """PascalCase class-name stem: ``get_weather`` -> ``GetWeather``, ``2fa`` -> ``T2fa``."""
    words = _words(name)
    joined = "".join(word[:1].upper() + word[1:] for word in words)
    if not joined:
        return "Type"
    return joined if joined[0].isidentifier() else "T" + joined


def assign_function_names(
    specs: Iterable[ToolSpec],
    *,
    prefixes: Mapping[str, str] | None = None,
    reserved: Collection[str] = (),
) -> dict[tuple[str, str], str]:
    """Give every tool a function name, keyed by ``(server, tool name)``; refuse any collision.

    ``prefixes`` maps a server to its configured prefix; ``reserved`` holds names code mode defines itself
    (``tools``, ``atools``, ``parallel``, ``llm``...). Like a keyword, a reserved name gets a trailing
    underscore (a tool ``parallel`` is ``parallel_()``), so it never shadows what code mode defines, nor is
    shadowed by it (``build_tool_models`` says so in the model's warnings). All collisions between tools
    are reported at once, each with the original ``server/tool`` names, so one start-up shows the user
    everything to fix.

    Raises:
        ToolNameCollisionError: two tools map to one name.
    """
    prefixes = prefixes or {}
    reserved_set = set(reserved)
    names: dict[tuple[str, str], str] = {}
    owners: dict[str, list[str]] = {}
    for spec in specs:
        name = function_name(spec.name, prefixes.get(spec.server, ""))
        if name in reserved_set:
            name += "_"
        names[(spec.server, spec.name)] = name
        owners.setdefault(name, []).append(spec.qualified_name)
    problems: list[str] = []
    involved: list[str] = []
    for name, tools in owners.items():
        if len(tools) > 1:
            problems.append(f"{name}() would be the name of {' and '.join(tools)}")
        else:
            continue
        involved.extend(tools)
    if problems:
        count = f"{len(problems)} tool name collision{'s' if len(problems) > 1 else ''}"
        raise ToolNameCollisionError(
            f"{count} in code mode:\n"
            + "".join(f"  - {problem}\n" for problem in problems)
            + "Fix: add one of the tools to `excludedTools` in the config (it stays available as a classic "
            'tool), or give its server a `prefix` (for example "prefix": "gh_").',
            tools=involved,
            collisions={name: tools for name, tools in owners.items() if len(tools) > 1},
        )
    return names
