"""Questions a server asks the person during a tool call (MCP ``elicitation/create``), and their answers.

A server may ask, while one of its tools runs, for a few values (form mode: a flat JSON schema of fields)
or for the person to visit a page (URL mode). The hub turns the request into a ``Question`` and hands it to
an ``Elicitor``, the one interface every front door implements, like the ``Approver`` of approvals.py:
the kernel asks one input request per field, ``codemode serve`` forwards the question to its own client,
``codemode run`` asks on its terminal. With nobody to ask the question is declined, naming the server.

The schema is hostile input: ``parse_question`` reads only what the spec allows (top-level properties of
type string, number, integer, boolean, or an enum, and arrays of enum values), within size limits, and
refuses anything else with a message naming the field; it never recurses into what it does not read.
Fields left empty take the schema's default (SEP-1034), and every answer is checked against the fields
before it is sent back (``check_content``).
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .core.errors import QuestionRefused

__all__ = [
    "MAX_FIELDS",
    "Answer",
    "Elicitor",
    "FieldSpec",
    "LineElicitor",
    "OptionStyle",
    "Question",
    "QuestionRefused",
    "check_content",
    "clean_schema",
    "field_prompt",
    "fill_defaults",
    "nobody",
    "parse_question",
    "read_value",
    "url_prompt",
]

MAX_FIELDS = 32
"""Fields one question may have; a longer form is refused (nobody answers 33 prompts in a row)."""
_MAX_OPTIONS = 100
_MAX_TEXT = 2000
"""Characters of a message, title or description kept for display (the rest is cut, and says so)."""
_MAX_NAME = 64
_MAX_URL = 4000
_TYPES = ("string", "number", "integer", "boolean")
_FORMATS = {
    "email": re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$"),
    "uri": re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "date-time": re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$"),
}


OptionStyle = Literal["enum", "enumNames", "oneOf", "anyOf"]
"""How a schema lists a field's choices (SEP-1330)."""


@dataclass(frozen=True)
class FieldSpec:
    """One field of a form question, as the schema describes it (only what is shown and checked)."""

    name: str
    type: Literal["string", "number", "integer", "boolean"]
    title: str = ""
    description: str = ""
    required: bool = False
    has_default: bool = False
    default: Any = None
    options: tuple[str, ...] = ()
    """The allowed values of an enum (single choice, or each item of a multiple choice)."""
    option_titles: tuple[str, ...] = ()
    option_style: OptionStyle = "enum"
    """How the schema listed the choices (SEP-1330): kept when the question is forwarded."""
    multiple: bool = False
    """An array of enum values: the answer lists several, comma-separated on a line."""
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None

    @property
    def kind(self) -> str:
        """The type as shown: ``string``, ``integer``, ``boolean``, ``one of a, b``, ``any of a, b``."""
        if self.options:
            return f"{'any' if self.multiple else 'one'} of {', '.join(self.options)}"
        return self.type if self.format is None else f"{self.type} ({self.format})"

    def to_json(self) -> dict[str, Any]:
        """What the call's record keeps of the field."""
        data: dict[str, Any] = {"name": self.name, "type": self.kind, "required": self.required}
        if self.has_default:
            data["default"] = self.default
        return data


@dataclass(frozen=True)
class Question:
    """A server's question, during one of its tool calls, as a front door shows it."""

    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    fields: tuple[FieldSpec, ...] = ()
    url: str | None = None
    """URL mode: the page the person is asked to visit (shown as a link, never opened by itself)."""
    elicitation_id: str | None = None
    tool: str | None = None
    """The tool whose call the server asks during, when the hub knows it."""
    schema: dict[str, Any] = field(default_factory=dict)
    """Form mode: the requested schema as read (only the parts described by ``fields``), for forwarding."""

    @property
    def about(self) -> str:
        """``server/tool``, or the server alone."""
        return f"{self.server}/{self.tool}" if self.tool else self.server

    def to_json(self) -> dict[str, Any]:
        """What the call's record keeps of the question."""
        data: dict[str, Any] = {"server": self.server, "mode": self.mode, "message": self.message}
        if self.mode == "url":
            data["url"] = self.url
        else:
            data["fields"] = [f.to_json() for f in self.fields]
        return data


@dataclass(frozen=True)
class Answer:
    """The person's answer: ``accept`` (with ``content`` in form mode), ``decline`` or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None
    by: str = "the user"
    """Who answered: ``the user``, ``the client``, ``nobody`` (declined: nobody could be asked)."""
    note: str = ""
    """Why it was declined when nobody answered, naming the server and the fix."""

    def to_json(self) -> dict[str, Any]:
        """What the call's record keeps of the answer."""
        data: dict[str, Any] = {"action": self.action, "by": self.by}
        if self.content is not None:
            data["content"] = self.content
        if self.note:
            data["note"] = self.note
        return data


Elicitor = Callable[[Question], Awaitable[Answer]]
"""``await elicitor(question)``: ask the person where they are; may take as long as the call allows."""


def nobody(question: Question) -> Answer:
    """The answer when nobody can be asked: declined, saying which server asked and how to answer it."""
    return Answer(
        "decline",
        by="nobody",
        note=(
            f"server {question.server!r} asked a question ({_cut(question.message, 120)!r}) and nobody can "
            "be asked here, so it was declined. Fix: call the tool where a person can answer (the kernel, "
            "codemode run on a terminal, a codemode serve client with elicitation)"
        ),
    )


def parse_question(server: str, params: Mapping[str, Any], *, tool: str | None = None) -> Question:
    """The question of an ``elicitation/create`` request's params (wire form: camelCase keys).

    Raises:
        QuestionRefused: the schema is outside the spec's restricted subset, or too large; the message
            names the field and what is wrong.
    """
    message = _cut(_text(params.get("message")), _MAX_TEXT)
    mode = params.get("mode") or "form"
    if mode == "url":
        url = params.get("url")
        if not isinstance(url, str) or not url or len(url) > _MAX_URL:
            raise QuestionRefused("URL mode needs a url (a string of at most 4000 characters)")
        # Printable only: a control or bidi character (U+202E) could make the link read as another one.
        if not re.match(r"^https?://", url, re.IGNORECASE) or not url.isprintable() or not _host(url):
            raise QuestionRefused(f"URL mode: only printable http(s) links are shown, not {_cut(url, 60)!r}")
        elicitation_id = params.get("elicitationId")
        return Question(
            server,
            message,
            "url",
            url=url,
            elicitation_id=elicitation_id if isinstance(elicitation_id, str) else None,
            tool=tool,
        )
    if mode != "form":
        raise QuestionRefused(f"unknown elicitation mode {_cut(str(mode), 40)!r} (form and url are known)")
    schema = params.get("requestedSchema")
    if not isinstance(schema, Mapping):
        raise QuestionRefused("form mode needs requestedSchema, a JSON object")
    if schema.get("type", "object") != "object":
        raise QuestionRefused('requestedSchema must have "type": "object"')
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise QuestionRefused("requestedSchema.properties must be an object")
    if len(properties) > MAX_FIELDS:
        raise QuestionRefused(f"the form has {len(properties)} fields; at most {MAX_FIELDS} are asked")
    required = schema.get("required", [])
    if not isinstance(required, list):
        required = []
    fields = tuple(_field(name, prop, name in required) for name, prop in properties.items())
    kept = {
        "type": "object",
        "properties": {f.name: properties[f.name] for f in fields},
        "required": [f.name for f in fields if f.required],
    }
    return Question(server, message, "form", fields, tool=tool, schema=kept)


def _field(name: Any, prop: Any, required: bool) -> FieldSpec:
    if not isinstance(name, str) or not name or len(name) > _MAX_NAME or not name.isprintable():
        raise QuestionRefused(f"field name {_cut(repr(name), 40)} is not a short printable name")
    if not isinstance(prop, Mapping):
        raise QuestionRefused(f"field {name!r}: its schema must be an object")
    kind = prop.get("type")
    options: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()
    style: OptionStyle = "enum"
    multiple = False
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping):
            raise QuestionRefused(f"field {name!r}: an array must list its choices in items.enum or anyOf")
        options, titles, style = _options(name, items)
        if not options:
            keys = ", ".join(str(key)[:20] for key in list(items)[:5])
            raise QuestionRefused(
                f"field {name!r}: only arrays of enum values are asked, not items with {keys}"
            )
        multiple, kind = True, "string"
    elif kind == "string" and ("enum" in prop or "oneOf" in prop or "anyOf" in prop):
        options, titles, style = _options(name, prop)
    if kind not in _TYPES:
        shown = _cut(repr(kind), 40)
        raise QuestionRefused(
            f"field {name!r} has type {shown}; a question's fields are string, number, integer, boolean or "
            "an enum (MCP elicitation allows no nesting)"
        )
    has_default = "default" in prop
    default = prop.get("default")
    spec = FieldSpec(
        name=name,
        type=kind,
        title=_cut(_text(prop.get("title")), 200),
        description=_cut(_text(prop.get("description")), _MAX_TEXT),
        required=required,
        options=options,
        option_titles=titles,
        option_style=style,
        multiple=multiple,
        minimum=_number(prop.get("minimum")),
        maximum=_number(prop.get("maximum")),
        min_length=_count(prop.get("minLength", prop.get("minItems"))),
        max_length=_count(prop.get("maxLength", prop.get("maxItems"))),
        format=_format(prop.get("format")),
    )
    if has_default:
        problem = _check_value(spec, default)
        if problem is not None:  # a default that does not fit its own field is ignored, not offered
            return spec
        spec = replace(spec, has_default=True, default=default)
    return spec


def _options(name: str, schema: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...], OptionStyle]:
    """An enum's values, their titles and the style (``enum`` [+ ``enumNames``], ``oneOf``/``anyOf``)."""
    values: list[str] = []
    titles: list[str] = []
    style: OptionStyle = "enum"
    if isinstance(schema.get("enum"), list):
        values = list(schema["enum"])
        names = schema.get("enumNames")
        if isinstance(names, list) and len(names) == len(values):
            titles, style = [_text(n) for n in names], "enumNames"
    else:
        for key in ("oneOf", "anyOf"):
            choices = schema.get(key)
            if isinstance(choices, list):
                style = "oneOf" if key == "oneOf" else "anyOf"
                for choice in choices:
                    if isinstance(choice, Mapping) and "const" in choice:
                        values.append(choice["const"])
                        titles.append(_text(choice.get("title")))
                break
    if len(values) > _MAX_OPTIONS:
        raise QuestionRefused(f"field {name!r} has {len(values)} choices; at most {_MAX_OPTIONS} are asked")
    for value in values:
        if not isinstance(value, str) or len(value) > 200 or not value.isprintable():
            raise QuestionRefused(f"field {name!r}: each choice must be a short printable string")
    return tuple(values), tuple(_cut(t, 200) for t in titles) if titles else (), style


def clean_schema(question: Question) -> dict[str, Any]:
    """The form's schema rebuilt from what was read (texts cut, nothing else kept): safe to forward."""
    properties: dict[str, Any] = {}
    for spec in question.fields:
        prop: dict[str, Any] = {"type": spec.type}
        if spec.options:
            prop = _choices(spec)
        for key, value in (
            ("title", spec.title or None),
            ("description", spec.description or None),
            ("format", spec.format),
            ("minimum", spec.minimum),
            ("maximum", spec.maximum),
        ):
            if value is not None:
                prop[key] = value
        if spec.min_length is not None:
            prop["minItems" if spec.multiple else "minLength"] = spec.min_length
        if spec.max_length is not None:
            prop["maxItems" if spec.multiple else "maxLength"] = spec.max_length
        if spec.has_default:
            prop["default"] = spec.default
        properties[spec.name] = prop
    required = [spec.name for spec in question.fields if spec.required]
    return {"type": "object", "properties": properties, **({"required": required} if required else {})}


def _choices(spec: FieldSpec) -> dict[str, Any]:
    """A choice field's schema in the style the server wrote it (SEP-1330: enum, enumNames, oneOf, anyOf)."""
    choice: dict[str, Any] = {"type": "string", "enum": list(spec.options)}
    titles = spec.option_titles or spec.options
    if spec.option_style == "enumNames":
        choice["enumNames"] = list(titles)
    elif spec.option_style in ("oneOf", "anyOf"):
        listed = [{"const": v, "title": t or v} for v, t in zip(spec.options, titles, strict=True)]
        choice = {"type": "string", spec.option_style: listed}
    if not spec.multiple:
        return choice
    items = {key: value for key, value in choice.items() if key != "type"} if "enum" not in choice else choice
    return {"type": "array", "items": items}


def fill_defaults(question: Question, content: Mapping[str, Any]) -> dict[str, Any]:
    """``content`` with every field left out (or empty) given its schema default (SEP-1034)."""
    filled = {k: v for k, v in content.items() if v is not None}
    for spec in question.fields:
        if spec.name not in filled and spec.has_default:
            filled[spec.name] = spec.default
    return filled


def check_content(question: Question, content: Any) -> dict[str, Any]:
    """The answer's content, checked against the question's fields (an unknown key is an error too).

    Raises:
        QuestionRefused: a value does not fit its field, a required one is missing; the message names it.
    """
    if not isinstance(content, Mapping):
        raise QuestionRefused("the answer must be an object of field values")
    names = {spec.name for spec in question.fields}
    for key in content:
        if key not in names:
            raise QuestionRefused(f"the answer has {_cut(str(key), 40)!r}, which the question did not ask")
    checked: dict[str, Any] = {}
    for spec in question.fields:
        if spec.name not in content or content[spec.name] is None:
            if spec.required:
                raise QuestionRefused(f"{spec.name!r} is required")
            continue
        problem = _check_value(spec, content[spec.name])
        if problem is not None:
            raise QuestionRefused(f"{spec.name!r}: {problem}")
        checked[spec.name] = content[spec.name]
    return checked


def _check_value(spec: FieldSpec, value: Any) -> str | None:
    """Why ``value`` does not fit ``spec``, or None."""
    if spec.multiple:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "a list of choices is expected"
        bad = [v for v in value if v not in spec.options]
        if bad:
            return f"{_cut(bad[0], 40)!r} is not one of {', '.join(spec.options)}"
        if spec.min_length is not None and len(value) < spec.min_length:
            return f"choose at least {spec.min_length}"
        if spec.max_length is not None and len(value) > spec.max_length:
            return f"choose at most {spec.max_length}"
        return None
    if spec.type == "boolean":
        return None if isinstance(value, bool) else "true or false is expected"
    if spec.type in ("number", "integer"):
        if _number(value) is None:
            return f"a{'n integer' if spec.type == 'integer' else ' number'} is expected"
        if spec.type == "integer" and not float(value).is_integer():
            return "an integer is expected"
        if spec.minimum is not None and value < spec.minimum:
            return f"at least {spec.minimum:g} is expected"
        if spec.maximum is not None and value > spec.maximum:
            return f"at most {spec.maximum:g} is expected"
        return None
    if not isinstance(value, str):
        return "text is expected"
    if spec.options and value not in spec.options:
        return f"one of {', '.join(spec.options)} is expected"
    if spec.min_length is not None and len(value) < spec.min_length:
        return f"at least {spec.min_length} characters are expected"
    if spec.max_length is not None and len(value) > spec.max_length:
        return f"at most {spec.max_length} characters are expected"
    if spec.format is not None and not _FORMATS[spec.format].match(value):
        return f"{spec.format} format is expected"
    return None


def read_value(spec: FieldSpec, text: str) -> Any:
    """The value a line typed for ``spec`` means; an empty line is None (the default, or left out).

    Raises:
        QuestionRefused: the text does not fit the field (the message says what is expected).
    """
    text = text.strip()
    if not text:
        return None
    value: Any = text
    if spec.multiple:
        value = [part.strip() for part in text.split(",") if part.strip()]
    elif spec.type == "boolean":
        lowered = text.lower()
        if lowered not in ("y", "yes", "true", "n", "no", "false"):
            raise QuestionRefused("answer y or n")
        value = lowered in ("y", "yes", "true")
    elif spec.type in ("number", "integer"):
        try:
            value = int(text) if spec.type == "integer" else float(text)
        except ValueError:
            raise QuestionRefused(
                f"a{'n integer' if spec.type == 'integer' else ' number'} is expected"
            ) from None
        if spec.type == "number" and float(value).is_integer() and "." not in text:
            value = int(value)
    problem = _check_value(spec, value)
    if problem is not None:
        raise QuestionRefused(problem)
    return value


def field_prompt(question: Question, spec: FieldSpec, index: int) -> str:
    """One field's prompt: the server and its message (on the first field), the field, type and default."""
    head = ""
    if index == 0:
        head = f"codemode: server {question.about} asks: {_quoted(question.message)}\n"
    label = spec.title or spec.name
    required = ", required" if spec.required else ""
    default = (
        f", Enter = {_shown(spec.default)}"
        if spec.has_default
        else (", Enter = leave empty" if not spec.required else "")
    )
    about = f"\n    {spec.description}" if spec.description else ""
    return f"{head}  {label} [{spec.name}: {spec.kind}{required}{default}]{about}: "


def url_prompt(question: Question) -> str:
    """URL mode's prompt: the message and the link (never opened by itself), and the answers."""
    return (
        f"codemode: server {question.about} asks you to open a page: {_quoted(question.message)}\n"
        f"  {question.url}\n"
        f"  (it goes to {_host(question.url or '')}; open it yourself if you trust it: nothing is opened "
        "for you)\n"
        "  y = I opened it / will, n = decline (default): "
    )


class LineElicitor:
    """Asks a question one line per field, through ``ask(prompt) -> line``: the kernel and the terminal.

    A field's answer that does not fit is asked again (twice at most, then the question is cancelled).
    ``ask`` raising ``EOFError`` (nobody can answer) declines the question. The first line of a form may
    be ``decline`` (or ``cancel``) instead of an answer. Questions are asked one at a time.
    """

    def __init__(
        self,
        ask: Callable[[str], Awaitable[str]],
        *,
        who: str = "the user",
        lock: Callable[[], asyncio.Lock] | None = None,
    ) -> None:
        self.ask = ask
        self.who = who
        self._one_at_a_time: asyncio.Lock | None = None
        self._shared_lock = lock
        """The lock of the approver asking on the same prompt: one question at a time across both."""

    async def __call__(self, question: Question) -> Answer:
        """Ask, one line per field; the answer with defaults filled in, or declined."""
        if self._shared_lock is not None:
            lock = self._shared_lock()
        else:
            if self._one_at_a_time is None:
                self._one_at_a_time = asyncio.Lock()
            lock = self._one_at_a_time
        async with lock:
            try:
                if question.mode == "url":
                    line = (await self.ask(url_prompt(question))).strip().lower()
                    return Answer("accept" if line in ("y", "yes") else "decline", by=self.who)
                return await self._form(question)
            except EOFError:
                return nobody(question)

    async def _form(self, question: Question) -> Answer:
        content: dict[str, Any] = {}
        if not question.fields:
            line = (
                (
                    await self.ask(
                        f"codemode: server {question.about} asks: {_quoted(question.message)}\n"
                        "  y = accept, n = decline (default): "
                    )
                )
                .strip()
                .lower()
            )
            return (
                Answer("accept", {}, by=self.who) if line in ("y", "yes") else Answer("decline", by=self.who)
            )
        for index, spec in enumerate(question.fields):
            prompt = field_prompt(question, spec, index)
            for attempt in range(3):
                line = await self.ask(prompt)
                if index == 0 and line.strip().lower() in ("decline", "cancel"):
                    return Answer("decline" if line.strip().lower() == "decline" else "cancel", by=self.who)
                try:
                    value = read_value(spec, line)
                except QuestionRefused as exc:
                    if attempt == 2:
                        return Answer("cancel", by=self.who, note=f"{spec.name}: {exc}")
                    prompt = f"  ({exc}) {field_prompt(question, spec, 1).lstrip()}"
                    continue
                if value is None and spec.required and not spec.has_default:
                    if attempt == 2:
                        return Answer("cancel", by=self.who, note=f"{spec.name} is required")
                    prompt = f"  (required) {field_prompt(question, spec, 1).lstrip()}"
                    continue
                if value is not None:
                    content[spec.name] = value
                break
        return Answer("accept", fill_defaults(question, content), by=self.who)


def _quoted(message: str) -> str:
    """The server's message with every further line marked as its (``| ``): it cannot pass for ours."""
    return message.replace("\n", "\n    | ")


def _host(url: str) -> str:
    """The link's host as ASCII (an internationalized name as punycode: a look-alike shows as xn--...)."""
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname or ""
        return host.encode("idna").decode("ascii")
    except (ValueError, UnicodeError):
        return ""


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return _cut(str(value), 80)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    # Control characters (a terminal's escape sequences) are not shown as they are.
    return "".join(ch if ch.isprintable() or ch == "\n" else "?" for ch in value)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 12] + " ...(cut)"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)  # an integer too large for a float raises OverflowError
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _format(value: Any) -> str | None:
    return value if isinstance(value, str) and value in _FORMATS else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
