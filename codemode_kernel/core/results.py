"""What a tool call returns in Python: the wire CallToolResult turned into values people use.

- ``structuredContent``, or text that is a JSON object or array, becomes a ``ToolResult`` (a dict that
  also answers attribute access: ``r.temperature`` and ``r["temperature"]``) or a list of them. A field
  named like a dict method, a keyword or a ``__`` name is only ``r["name"]`` (``attribute_field``).
- Plain text stays ``str``; several text blocks are joined with newlines.
- Images and audio become ``Image`` / ``Audio`` objects that display in a notebook; embedded resources
  and resource links become ``Resource`` / ``ResourceLink``. Mixed content comes back as a list.
- ``isError`` raises ``ToolError`` carrying the server's message.
"""

from __future__ import annotations

import json
import keyword
import unicodedata
from dataclasses import dataclass
from typing import Any, NoReturn

from .errors import ToolError

__all__ = [
    "DICT_METHODS",
    "Audio",
    "Image",
    "Resource",
    "ResourceLink",
    "ToolResult",
    "attribute_field",
    "decode_result",
    "error_message",
    "subscript_note",
]


DICT_METHODS = tuple(sorted(name for name in vars(dict) if not name.startswith("__")))
"""The dict methods a result answers by attribute even when it has a field of the same name."""


def attribute_field(name: str) -> bool:
    """Whether a program reads the field ``name`` as ``r.name`` (else only as ``r["name"]``).

    The one rule the stubs, the docstrings, the ``execute_python`` description and ``ToolResult`` follow:
    a plain identifier (NFKC would turn ``r.\ufb01eld`` into ``r.field``), no keyword, no ``__`` name
    (those are Python's protocol lookups, and mangled in class bodies), no dict method.
    """
    return (
        name.isidentifier()
        and unicodedata.normalize("NFKC", name) == name
        and not keyword.iskeyword(name)
        and not name.startswith("__")
        and name not in DICT_METHODS
    )


def subscript_note(name: str, text: str = "") -> str:
    """A field's description ``text`` for stubs and docstrings, after the note ``read as r["name"]``.

    The note is for a field that looks like an attribute and is not one; it comes first, so that no
    clipping of a long description drops it.
    """
    if not name.isidentifier() or attribute_field(name):
        return text
    note = f'read as r["{name}"]' + (f": r.{name} is the dict method" if name in DICT_METHODS else "")
    return f"{note}. {text}" if text.strip() else note


class ToolResult(dict[str, Any]):
    """A JSON object from a tool: a plain dict that also answers ``r.field``.

    Which fields are attributes is ``attribute_field``'s rule. Dict methods win over fields of the same
    name (``r.items`` is the method; the field is ``r["items"]``), and such a method, taken for the field
    (iterated, indexed), says so. Nested objects are ToolResults too, so ``r.location.city`` works.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and IPython look these up: never a field
            hint = f': read the field as r["{name}"]' if name in self else ""
            raise AttributeError(f"result has no attribute {name!r}{hint}")
        try:
            return self[name]
        except KeyError:
            fields = ", ".join(sorted(self)) or "none"
            raise AttributeError(f"result has no field {name!r} (fields: {fields})") from None

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *(k for k in self if attribute_field(k))})


class _DictMethod:
    """A dict method on ToolResult: wrapped as ``_ShadowedMethod`` when the result has a field of its name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.method = vars(dict)[name]

    def __get__(self, instance: ToolResult | None, owner: type | None = None) -> Any:
        bound = self.method.__get__(instance, owner)
        if instance is None or not dict.__contains__(instance, self.name):
            return bound
        return _ShadowedMethod(bound, self.name)


class _ShadowedMethod:
    """A dict method whose name is also a field: calling it is the method, using it as data explains.

    ``for row in r.values`` would otherwise fail with "'builtin_function_or_method' object is not
    iterable", which does not tell a program (or the model that wrote it) to write ``r["values"]``.
    """

    __slots__ = ("_method", "_name")

    def __init__(self, method: Any, name: str) -> None:
        self._method = method
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._method(*args, **kwargs)

    def _hint(self) -> str:
        name = self._name
        return f'r.{name} is the dict method {name}(), not the field: read the field as r["{name}"]'

    def _misread(self, *args: Any) -> NoReturn:
        raise TypeError(self._hint())

    __iter__ = __getitem__ = __len__ = __contains__ = _misread

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(self._method, name)
        except AttributeError:
            raise AttributeError(f"{name!r}: {self._hint()}") from None

    def __repr__(self) -> str:
        return f"<{self._hint()}>"


for _name in DICT_METHODS:
    setattr(ToolResult, _name, _DictMethod(_name))


def wrap_json(value: Any) -> Any:
    """Turn every JSON object inside ``value`` into a ToolResult (lists and scalars keep their type).

    Iterative, not recursive: a server's result nested as deep as ``json.loads`` accepts must not fail
    the call with a RecursionError.
    """
    if not isinstance(value, dict | list):
        return value
    root: Any = ToolResult() if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            child = item
            if isinstance(item, dict | list):
                child = ToolResult() if isinstance(item, dict) else []
                stack.append((item, child))
            if isinstance(target, dict):
                target[key] = child
            else:
                target.append(child)
    return root


@dataclass(frozen=True)
class _Media:
    """Bytes with their MIME type, as a tool returned them."""

    data: bytes
    mime_type: str

    def save(self, path: str) -> None:
        """Write the bytes to ``path``."""
        with open(path, "wb") as out:
            out.write(self.data)


@dataclass(frozen=True)
class Image(_Media):
    """An image a tool returned; shows itself in Jupyter and can be saved."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        import base64  # here: a worker loads it only for a program that shows media

        return {self.mime_type: base64.b64encode(self.data).decode(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        return f"<Image {self.mime_type}, {len(self.data)} bytes>"


@dataclass(frozen=True)
class Audio(_Media):
    """An audio clip a tool returned; plays in Jupyter."""

    def _repr_html_(self) -> str:
        import base64

        encoded = base64.b64encode(self.data).decode()
        mime = self.mime_type.replace('"', "")
        return f'<audio controls src="data:{mime};base64,{encoded}"></audio>'

    def __repr__(self) -> str:
        return f"<Audio {self.mime_type}, {len(self.data)} bytes>"


@dataclass(frozen=True)
class Resource:
    """A resource embedded in a tool result: text or bytes, with its URI."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: bytes | None = None


@dataclass(frozen=True)
class ResourceLink:
    """A link to a resource the server offers (not its content)."""

    uri: str
    name: str | None = None
    mime_type: str | None = None
    description: str | None = None


def error_message(result: dict[str, Any]) -> str:
    """The text of an isError result, as the server wrote it."""
    texts = [b.get("text", "") for b in result.get("content") or [] if b.get("type") == "text"]
    return "\n".join(t for t in texts if t) or "the tool reported an error without a message"


def decode_result(
    result: dict[str, Any], *, tool: str, server: str | None = None, unwrap: bool = False
) -> Any:
    """Turn a wire CallToolResult into the Python value a tool function returns.

    ``unwrap``: the structured content is ``{"result": value}`` (see ``ToolSpec.wraps_result``): return
    the value.

    Raises:
        ToolError: the result has ``isError`` set.
    """
    if result.get("isError"):
        raise ToolError(error_message(result), tool=tool, server=server, content=result.get("content"))
    structured = result.get("structuredContent")
    if structured is not None:
        if unwrap and isinstance(structured, dict) and list(structured) == ["result"]:
            return wrap_json(structured["result"])
        return wrap_json(structured)
    parts = [_decode_block(block) for block in result.get("content") or []]
    if not parts:
        return None
    if all(isinstance(p, str) for p in parts):
        text = "\n".join(parts)
        return _maybe_json(text)
    if len(parts) == 1:
        return parts[0]
    return parts


def _maybe_json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return wrap_json(json.loads(stripped))
        except ValueError:
            pass
    return text


def _b64decode(data: Any) -> bytes:
    import base64  # here: a worker loads it only for a result that carries bytes

    return base64.b64decode(data)


def _decode_block(block: dict[str, Any]) -> Any:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "image":
        return Image(_b64decode(block.get("data", "")), block.get("mimeType", "image/png"))
    if kind == "audio":
        return Audio(_b64decode(block.get("data", "")), block.get("mimeType", "audio/wav"))
    if kind == "resource":
        res = block.get("resource") or {}
        blob = res.get("blob")
        return Resource(
            uri=str(res.get("uri", "")),
            mime_type=res.get("mimeType"),
            text=res.get("text"),
            blob=_b64decode(blob) if isinstance(blob, str) else None,
        )
    if kind == "resource_link":
        return ResourceLink(
            uri=str(block.get("uri", "")),
            name=block.get("name"),
            mime_type=block.get("mimeType"),
            description=block.get("description"),
        )
    return wrap_json(block)
