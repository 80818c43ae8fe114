"""The records that cross the process boundary inside frames: value envelopes, error records, artifacts.

Each is a ``TypedDict``: plain JSON on the wire, checked by mypy where it is built. A worker makes value
envelopes (``values.py``) and error records (``source.py``); the kernel makes the errors of the requests
it answers and the artifacts' metadata. docs/protocol.md lists them (``scripts/protocol_doc.py``
writes that table from these classes).

This module does not use ``from __future__ import annotations``: ``NotRequired`` must be evaluated when
the class is made, or ``__required_keys__`` (which the docs table and its test read) would be wrong.
"""

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "RECORDS",
    "ArtifactMetadata",
    "BytesEnvelope",
    "ErrorRecord",
    "ImageEnvelope",
    "JsonEnvelope",
    "LLMRequest",
    "ReprEnvelope",
    "RequestError",
    "TableEnvelope",
    "TextEnvelope",
    "ValueEnvelope",
]

NonfinitePath = list[str | int]
"""Where a NaN or an infinity sits in ``data`` (or ``rows``): keys and indexes from the top."""


class JsonEnvelope(TypedDict):
    """JSON data; numpy values add ``dtype`` (and ``shape`` for arrays)."""

    kind: Literal["json"]
    data: Any
    nonfinite: NotRequired[list[NonfinitePath]]
    """Paths of the floats that travel as ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``."""
    truncated: NotRequired[bool]
    length: NotRequired[int]
    """With ``truncated``: the number of items of the list or dict that was cut."""
    dtype: NotRequired[str]
    shape: NotRequired[list[int]]


class TextEnvelope(TypedDict):
    """A str at top level (so a string and a list are never confused)."""

    kind: Literal["text"]
    text: str
    truncated: NotRequired[bool]
    size: NotRequired[int]
    """With ``truncated``: the UTF-8 size of the whole text."""


class BytesEnvelope(TypedDict):
    """Bytes as base64 ``data``; ``size`` is the length of the whole value."""

    kind: Literal["bytes"]
    data: str
    size: int
    mime_type: NotRequired[str]
    """When the bytes are a known image format."""
    truncated: NotRequired[bool]


class ImageEnvelope(TypedDict):
    """A PNG, JPEG, GIF or WebP image as base64 ``data``."""

    kind: Literal["image"]
    mime_type: str
    data: str


class TableEnvelope(TypedDict):
    """A pandas DataFrame (``origin: dataframe``) or a list of dicts with the same keys (``records``)."""

    kind: Literal["table"]
    origin: Literal["records", "dataframe"]
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    nonfinite: NotRequired[list[NonfinitePath]]
    dtypes: NotRequired[list[str]]
    """A DataFrame's column dtypes, in the order of ``columns``."""


class ReprEnvelope(TypedDict):
    """Anything else: its (clipped) ``repr`` and the qualified name of its type."""

    kind: Literal["repr"]
    repr: str
    type: str
    truncated: NotRequired[bool]
    size: NotRequired[int]


ValueEnvelope = JsonEnvelope | TextEnvelope | BytesEnvelope | ImageEnvelope | TableEnvelope | ReprEnvelope
"""A value as data, never a pickle: ``{"kind": ..., ...}`` (worker/values.py makes and checks them)."""


class ErrorRecord(TypedDict):
    """Why a program failed: ``type`` and ``message``; a worker's record also says where."""

    type: str
    """The exception's qualified type name (``ZeroDivisionError``, ``tools.ToolError``...)."""
    message: str
    line: NotRequired[int | None]
    """1-based, in the code as written (Markdown fences and ``%%codemode`` lines count)."""
    column: NotRequired[int | None]
    source_line: NotRequired[str | None]
    traceback: NotRequired[str]
    """The program's own frames only, as Python prints a traceback."""


class RequestError(TypedDict):
    """Why the kernel refused a tool call or an artifact request; the worker raises it by ``type``."""

    type: str
    """An error class the worker knows (``ToolError``, ``ArtifactNotFoundError``...); others: ServerError."""
    message: str
    tool: NotRequired[str]
    server: NotRequired[str | None]
    field: NotRequired[str | None]
    """ToolArgumentError: the argument at fault."""
    timeout: NotRequired[float]
    """ToolTimeoutError: the call's timeout, in seconds."""
    key: NotRequired[str | None]
    """ArtifactNotFoundError: the id or name that was not found."""


class LLMRequest(TypedDict):
    """The ``arguments`` of a program's ``llm()``: a ``tool_call`` of the pseudo tool codemode/llm."""

    prompt: str
    system: NotRequired[str]
    max_tokens: NotRequired[int]


class ArtifactMetadata(TypedDict):
    """One stored artifact, without its data (``Artifact.to_dict()``)."""

    id: str
    name: str | None
    type: str
    """Its MIME type."""
    description: str
    size: int
    created: str
    """UTC, ISO 8601."""
    sha256: str
    execution_id: str | None


RECORDS: tuple[type, ...] = (
    JsonEnvelope,
    TextEnvelope,
    BytesEnvelope,
    ImageEnvelope,
    TableEnvelope,
    ReprEnvelope,
    ErrorRecord,
    RequestError,
    LLMRequest,
    ArtifactMetadata,
)
"""Every record type, in the order docs/protocol.md lists them."""
