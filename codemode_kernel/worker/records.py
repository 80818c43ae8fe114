"""The records that cross the process boundary inside frames: value envelopes, error records, artifacts.

Each is a ``TypedDict``: plain JSON on the wire, checked by mypy where it is built. A worker makes value
envelopes (``values.py``) and error records (``source.py``); the kernel makes the errors of the requests
it answers and the artifacts' metadata. The values, errors and artifacts are ``core/records.py``'s (the
one definition a run's record, a trace and the JupyterLab extension share); the request records are
defined here. docs/protocol.md lists them (``scripts/protocol_doc.py``
writes that table from these classes).

This module does not use ``from __future__ import annotations``: ``NotRequired`` must be evaluated when
the class is made, or ``__required_keys__`` (which the docs table and its test read) would be wrong.
"""

from typing import NotRequired, TypedDict

from ..core.records import (
    ArtifactMetadata,
    BytesEnvelope,
    ErrorRecord,
    ImageEnvelope,
    JsonEnvelope,
    ReprEnvelope,
    TableEnvelope,
    TextEnvelope,
    ValueEnvelope,
)

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
