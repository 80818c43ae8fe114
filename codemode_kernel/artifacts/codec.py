"""How a Python value becomes stored bytes with a MIME type, and how stored bytes become a value again.

- ``str``: UTF-8, ``text/plain``; comes back as ``str``.
- ``bytes``: as is, ``image/png`` (or JPEG, GIF, WebP) when the magic number says so
  (``worker.values.sniff_image``, shared with the worker), else ``application/octet-stream``; comes back
  as ``bytes``.
- None, bool, numbers, lists and dicts: ``application/json``; comes back as the JSON value.
- a pandas DataFrame: ``text/csv`` (an index that carries information becomes a column); comes back as a
  DataFrame, or as a list of dicts of strings where pandas is not installed.
- an image (``Image``, or an object with ``_repr_png_``): its bytes and type; comes back as ``bytes``.

An explicit ``type`` labels ``str`` and ``bytes`` as given (``store(html, type="text/html")``); for other
values it must be the type they are stored as anyway. Decoding follows the stored type: JSON types are
parsed, ``text/csv`` becomes a table, other ``text/*`` a string, anything else bytes.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import re
import sys
from typing import Any

from ..core.errors import ArtifactError
from ..worker.values import sniff_image

__all__ = ["BINARY", "CSV", "JSON", "TEXT", "check_type", "decode", "encode"]

JSON, TEXT, CSV, BINARY = "application/json", "text/plain", "text/csv", "application/octet-stream"
_MIME = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")
_SUPPORTED = (
    "str, bytes, JSON values (None, bool, numbers, str, lists and dicts with str keys), "
    "pandas DataFrames and images"
)


def check_type(mime_type: str) -> str:
    """A MIME type as stored (lower case); an ArtifactError for anything that is not ``type/subtype``."""
    if not isinstance(mime_type, str) or not _MIME.fullmatch(mime_type.lower()):
        raise ArtifactError(
            f"artifact type {mime_type!r} is not a MIME type; write it as type/subtype, e.g. 'text/csv'"
        )
    return mime_type.lower()


def encode(value: Any, mime_type: str | None = None) -> tuple[bytes, str]:
    """The bytes to store for ``value`` and their MIME type.

    Raises:
        ArtifactError: the value cannot be stored, or ``mime_type`` does not fit it.
    """
    wanted = check_type(mime_type) if mime_type is not None else None
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass"), wanted or TEXT
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        return data, wanted or sniff_image(data) or BINARY
    data, natural = _encode_other(value)
    if wanted is not None and wanted != natural:
        raise ArtifactError(
            f"a {_type_name(value)} is stored as {natural}, not {wanted}; "
            f"pass str or bytes to store data labelled {wanted}"
        )
    return data, natural


def decode(data: bytes, mime_type: str) -> Any:
    """The value stored bytes stand for, by their MIME type."""
    if mime_type == JSON or mime_type.endswith("+json"):
        return json.loads(data)
    if mime_type == CSV:
        return _read_csv(data)
    if mime_type.startswith("text/"):
        return data.decode("utf-8", "replace")
    return data


def _encode_other(value: Any) -> tuple[bytes, str]:
    kind = type(value)
    module = kind.__module__ if isinstance(kind.__module__, str) else ""
    if module.partition(".")[0] == "pandas" and kind.__name__ == "DataFrame":
        return _write_csv(value), CSV
    image = _image(value)
    if image is not None:
        return image
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=_numpy_default)
    except ValueError as exc:  # NaN or infinity, or a container that refers to itself
        raise ArtifactError(f"cannot store this {_type_name(value)} as JSON: {exc}") from None
    except TypeError:
        raise ArtifactError(f"cannot store a {_type_name(value)}; supported: {_SUPPORTED}") from None
    return text.encode("utf-8"), JSON


def _numpy_default(value: Any) -> Any:
    """The numpy scalars and arrays inside JSON data, as their plain Python values."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(type(value).__name__)


def _image(value: Any) -> tuple[bytes, str] | None:
    """An image object's bytes and type: ``Image`` (``data`` + ``mime_type``) or ``_repr_png_``."""
    data, mime_type = getattr(value, "data", None), getattr(value, "mime_type", None)
    if type(data) is bytes and isinstance(mime_type, str) and mime_type.startswith("image/"):
        return data, check_type(mime_type)
    render = getattr(type(value), "_repr_png_", None)
    if callable(render):
        out = render(value)
        if type(out) is bytes and out:
            return out, "image/png"
    return None


def _write_csv(frame: Any) -> bytes:
    """CSV of a DataFrame; an index that carries information (named, or not 0..n-1) becomes a column."""
    pandas = sys.modules["pandas"]
    index = frame.index
    plain = isinstance(index, pandas.RangeIndex) and index.start == 0 and index.step == 1
    if not plain or index.name is not None:
        frame = frame.reset_index()
    text: str = frame.to_csv(index=False)
    return text.encode("utf-8")


def _read_csv(data: bytes) -> Any:
    try:
        pandas = importlib.import_module("pandas")
    except ImportError:
        rows = csv.DictReader(io.StringIO(data.decode("utf-8", "replace")))
        return [dict(row) for row in rows]
    try:
        return pandas.read_csv(io.BytesIO(data))
    except pandas.errors.EmptyDataError:  # a frame without columns is written as an empty line
        return pandas.DataFrame()


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
