"""Values cross the worker boundary as data, never as pickles.

Unpickling what a sandboxed worker sends would hand it code execution in the kernel, where the
credentials live. So a value travels as a JSON envelope ``{"kind": ..., ...}`` and is rebuilt from
data alone:

- ``json``: None, bools, numbers, strings, lists and dicts (``data``); non-finite floats travel as
  ``"NaN"``/``"Infinity"``/``"-Infinity"`` with their paths in ``nonfinite``; numpy values add ``dtype``
  (and ``shape`` for arrays) and come back as numpy values where numpy is installed.
- ``text``: a string at top level, so that a string and a list are never confused.
- ``bytes``: base64 ``data`` and ``size`` (``mime_type`` when the bytes are a known image format).
- ``image``: a PNG, JPEG, GIF or WebP image, base64 ``data`` with its ``mime_type``.
- ``table``: ``columns``, ``rows``, ``row_count``; from a pandas DataFrame (``origin: dataframe``, with
  ``dtypes``) or a list of dicts with the same keys (``origin: records``, which comes back as such).
- ``repr``: anything else, as its (clipped) ``repr`` and qualified ``type``.

A value larger than ``max_bytes`` is cut, and the envelope says ``"truncated": true`` (with the original
``size`` in bytes, or ``row_count``/``length`` for tables and lists). Decoding validates everything,
because the envelope comes from untrusted code.
"""

from __future__ import annotations

import importlib
import keyword
import math
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from ..core.records import (
    BytesEnvelope,
    ImageEnvelope,
    JsonEnvelope,
    ReprEnvelope,
    TableEnvelope,
    TextEnvelope,
    ValueEnvelope,
)
from ..core.results import Image

__all__ = [
    "IMAGE_TYPES",
    "ReprValue",
    "decode_inputs",
    "decode_value",
    "encode_artifact",
    "encode_inputs",
    "encode_value",
    "sniff_image",
]

_MAX_DEPTH = 100  # nesting the encoder follows; deeper values travel as their repr
_DECODE_DEPTH = 2 * _MAX_DEPTH + 10  # tables add a level; anything deeper was not made by us
_INT_BITS = 14_000  # Python refuses to print ints beyond about 4,300 digits, so JSON cannot carry them
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The types a value or an artifact is an image of: only formats a browser shows as inert pixels (SVG can
carry script, so it is never an "image" here). ``sniff_image`` recognises each by its first bytes."""
_ARRAY_KINDS = "biufU"  # numpy dtype kinds whose tolist() is JSON: bool, ints, floats, str
_DTYPE = re.compile(r"[<>|=]?[a-zA-Z]+[0-9]*")
_TABLE_DTYPE = re.compile(
    r"(u?int|float|bool|boolean|string|str|object|category|datetime64|timedelta64)[\w\[\], :/+-]*"
)
_SUPPORTED_INPUTS = (
    "JSON values (None, bool, int, float, str, and lists, tuples and dicts with str keys of them), "
    "bytes, pandas DataFrames and numpy arrays of bools, numbers or strings"
)
_SUPPORTED_ARTIFACTS = _SUPPORTED_INPUTS + ", and images (PNG, JPEG, GIF, WebP; objects with _repr_png_)"


@dataclass(frozen=True)
class ReprValue:
    """A value that crossed the boundary only as its ``repr``: it shows as the original did."""

    text: str
    type_name: str
    truncated: bool = False

    def __repr__(self) -> str:
        return self.text


class _NotData(Exception):
    """The value holds something an envelope cannot carry as data; the message says what and where."""


# --- JSON conversion -------------------------------------------------------------------------------


class _Converter:
    """Turns a Python value into JSON data, within a byte budget.

    ``exact`` (inputs) refuses what would not come back equal, such as non-str dict keys; otherwise
    keys become strings. ``cells`` (table cells) also turns dates into ISO text and missing values into
    None, and, when not ``exact``, anything else into its repr.
    """

    def __init__(self, *, budget: int | None, exact: bool = False, cells: bool = False):
        self.budget = budget
        self.exact = exact
        self.cells = cells
        self.used = 0
        self.truncated = False
        self.nonfinite: list[list[str | int]] = []
        self._path: list[str | int] = []
        self._open: set[int] = set()  # containers being converted: meeting one again is a cycle

    @property
    def full(self) -> bool:
        """Whether the budget is spent; containers then stop taking items."""
        return self.budget is not None and self.used >= self.budget

    def convert(self, value: Any) -> Any:
        """The JSON form of ``value``.

        Raises:
            _NotData: the value (or something inside it) is not JSON data.
        """
        kind = type(value)
        if value is None or kind is bool:
            self.used += 5
            return value
        if issubclass(kind, str):
            return self._string(str.__str__(value))
        if issubclass(kind, int):
            return self._int(int.__int__(value))
        if issubclass(kind, float):
            return self._float(float.__float__(value))
        if issubclass(kind, (list, tuple, dict)):
            return self._container(value)
        if kind.__module__ == "numpy" and hasattr(kind, "item"):  # a numpy scalar in a list or a cell
            return self.convert(value.item())
        if self.cells:
            return self._cell(value)
        raise _NotData(f"{_type_name(value)} at {self.where()} is not JSON data")

    def row(self, cells: list[Any]) -> list[Any]:
        """A table row: every cell is kept (a long one is clipped), so rows always fit the columns."""
        result = []
        for index, cell in enumerate(cells):
            with self.step(index):
                result.append(self.convert(cell))
        return result

    def where(self) -> str:
        """The current path, as code that would reach it (``value[2]['name']``)."""
        return "value" + "".join(f"[{step!r}]" for step in self._path)

    def _string(self, text: str) -> str:
        size = (len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))) + 2
        if self.budget is not None and self.used + size > self.budget:
            self.truncated = True
            text = text[: max(self.budget - self.used, 0)]
            size = self.budget - self.used
        self.used += size
        return text

    def _int(self, number: int) -> int:
        if number.bit_length() > _INT_BITS:
            raise _NotData(f"the int at {self.where()} has too many digits for JSON")
        self.used += number.bit_length() // 3 + 1
        return number

    def _float(self, number: float) -> float | str:
        self.used += 8
        if math.isfinite(number):
            return number
        self.nonfinite.append(list(self._path))
        return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")

    def _container(self, value: Any) -> Any:
        if id(value) in self._open:
            raise _NotData(f"the value refers to itself at {self.where()}")
        if len(self._path) >= _MAX_DEPTH:
            raise _NotData(f"the value is nested more than {_MAX_DEPTH} levels deep")
        self._open.add(id(value))
        try:
            if isinstance(value, dict):
                return self._dict(value)
            items = list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value)
            return self._items(enumerate(items))
        finally:
            self._open.discard(id(value))

    def _items(self, items: Iterator[tuple[int, Any]]) -> list[Any]:
        result = []
        for index, item in items:
            if self.full:
                self.truncated = True
                break
            with self.step(index):
                result.append(self.convert(item))
        self.used += 2
        return result

    def _dict(self, value: dict[Any, Any]) -> dict[str, Any]:
        result = {}
        for key, item in dict.items(value):
            if self.full:
                self.truncated = True
                break
            name = self._key(key)
            with self.step(name):
                result[name] = self.convert(item)
        self.used += 2
        return result

    def _key(self, key: Any) -> str:
        """A dict key as JSON text: str as is; otherwise (not for inputs) as ``json.dumps`` or repr would."""
        if issubclass(type(key), str):
            return self._string(str.__str__(key))
        if self.exact:
            raise _NotData(f"the dict at {self.where()} has a {_type_name(key)} key; keys must be str")
        if key is None or type(key) is bool:
            return "null" if key is None else str(key).lower()
        if type(key) in (int, float):
            return self._string(repr(key))
        return self._string(_safe_repr(key, 200))

    def _cell(self, value: Any) -> Any:
        """A table cell that is not plain JSON: dates as ISO text, NaT/NA as None, else (lenient) repr."""
        if type(value).__name__ in ("NaTType", "NAType"):  # pandas' missing values (NaT is a datetime)
            return None
        # A date exists only once its module is loaded: a worker does not load it for every program.
        datetime = sys.modules.get("datetime")
        if datetime is not None and isinstance(value, datetime.date | datetime.time):
            return self._string(value.isoformat())
        if datetime is not None and isinstance(value, datetime.timedelta):
            return self._string(str(value))
        if self.exact:
            raise _NotData(f"the {_type_name(value)} at {self.where()} is not table data")
        return self._string(_safe_repr(value, 200))

    @contextmanager
    def step(self, step: str | int) -> Iterator[None]:
        self._path.append(step)
        try:
            yield
        finally:
            self._path.pop()


# --- encoding values -------------------------------------------------------------------------------


def encode_value(value: Any, *, max_bytes: int = 1_000_000) -> ValueEnvelope:
    """The envelope of a program's value, at most about ``max_bytes`` of data; never raises.

    A value whose ``repr`` fails, that refers to itself or that is nested too deeply still gives an
    envelope (``repr``). Only KeyboardInterrupt passes through: it is how a timeout stops the worker.
    """
    try:
        return _encode(value, max_bytes)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a hostile value may raise anything, even SystemExit, from a dunder
        return _repr_envelope(value, max_bytes)


def _encode(value: Any, max_bytes: int) -> ValueEnvelope:
    """Pick the envelope kind: text, bytes, table or JSON for data; then numpy, pandas, images; repr."""
    envelope: ValueEnvelope | None
    kind = type(value)
    if issubclass(kind, str):
        return _text_envelope(str.__str__(value), max_bytes)
    if issubclass(kind, bytes | bytearray | memoryview):
        return _bytes_envelope(bytes(value), max_bytes)
    module = _module_name(kind)
    if module == "numpy":  # before the JSON types: numpy.float64 is a float, but has a dtype to keep
        envelope = _numpy_envelope(value, max_bytes, exact=False)
    elif module.partition(".")[0] == "pandas" and kind.__name__ in ("DataFrame", "Series"):
        envelope = _dataframe_envelope(value, max_bytes, exact=False)
    elif value is None or issubclass(kind, bool | int | float | list | tuple | dict):
        envelope = _records_envelope(value, max_bytes) or _json_envelope(value, max_bytes)
    else:
        envelope = _image_envelope(value, max_bytes)
    return envelope or _repr_envelope(value, max_bytes)


def _text_envelope(text: str, max_bytes: int) -> TextEnvelope:
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return {"kind": "text", "text": text}
    clipped = encoded[:max_bytes].decode("utf-8", "ignore")  # drops a character cut in half
    return {"kind": "text", "text": clipped, "truncated": True, "size": len(encoded)}


def sniff_image(data: bytes) -> str | None:
    """The image type (one of ``IMAGE_TYPES``) whose magic number ``data`` starts with, or None.

    The one place bytes are recognised as an image: a program's bytes value here, the kernel's artifact
    store (``artifacts.codec``) when it labels stored bytes.
    """
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"GIF8"):
        return "image/gif"
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":  # RIFF, the chunk's size, then the form type
        return "image/webp"
    return None


def _bytes_envelope(data: bytes, max_bytes: int | None) -> BytesEnvelope:
    envelope: BytesEnvelope = {"kind": "bytes", "data": "", "size": len(data)}
    mime_type = sniff_image(data)
    if mime_type:
        envelope["mime_type"] = mime_type
    if max_bytes is not None and len(data) > max_bytes:
        data = data[:max_bytes]
        envelope["truncated"] = True
    envelope["data"] = _b64encode(data)
    return envelope


def _json_envelope(value: Any, max_bytes: int | None, *, exact: bool = False) -> JsonEnvelope | None:
    """A ``json`` envelope, or None when the value is not JSON data (then it travels as repr)."""
    converter = _Converter(budget=max_bytes, exact=exact)
    try:
        data = converter.convert(value)
    except _NotData:
        if exact:
            raise
        return None
    envelope: JsonEnvelope = {"kind": "json", "data": data}
    if converter.nonfinite:
        envelope["nonfinite"] = converter.nonfinite
    if converter.truncated:
        envelope.update({"truncated": True, "length": _length(value)})
    return envelope


def _length(value: Any) -> int:
    """The number of items of a list, tuple or dict, without trusting a subclass's ``__len__``."""
    if isinstance(value, list):
        return list.__len__(value)
    if isinstance(value, tuple):
        return tuple.__len__(value)
    return dict.__len__(value) if isinstance(value, dict) else 1


def _records_envelope(value: Any, max_bytes: int) -> TableEnvelope | None:
    """A list of dicts with the same str keys, in the same order, is a table (``origin: records``).

    Only the list and dict methods of the base types are used: subclasses may override them.
    """
    if not issubclass(type(value), list) or not list.__len__(value):
        return None
    first = list.__getitem__(value, 0)
    if not issubclass(type(first), dict) or not dict.__len__(first):
        return None
    columns = list(dict.keys(first))
    if not all(type(column) is str for column in columns):
        return None
    # The same keys in the same order, so that the rows come back exactly as they were.
    if not all(
        issubclass(type(row), dict) and list(dict.keys(row)) == columns for row in list.__iter__(value)
    ):
        return None
    rows = ([dict.__getitem__(row, c) for c in columns] for row in list.__iter__(value))
    return _table_envelope(columns, rows, list.__len__(value), max_bytes, exact=False, origin="records")


def _table_envelope(
    columns: list[str], rows: Iterator[list[Any]], row_count: int, max_bytes: int | None, *, exact: bool,
    origin: Literal["records", "dataframe"],
) -> TableEnvelope | None:  # fmt: skip
    """Convert rows of cells within the budget; None when a cell is not table data (not for inputs)."""
    converter = _Converter(budget=max_bytes, exact=exact, cells=origin == "dataframe")
    converted = []
    try:
        for index, row in enumerate(rows):
            if converter.full:
                break
            with converter.step(index):
                converted.append(converter.row(row))
    except _NotData:
        if exact:
            raise
        return None
    envelope: TableEnvelope = {"kind": "table", "origin": origin, "columns": columns, "rows": converted,
                                "row_count": row_count, "truncated": len(converted) < row_count}  # fmt: skip
    if converter.truncated:  # a long cell was cut
        envelope["truncated"] = True
    if converter.nonfinite:
        envelope["nonfinite"] = converter.nonfinite
    return envelope


def _dataframe_envelope(frame: Any, max_bytes: int | None, *, exact: bool) -> TableEnvelope | None:
    """A pandas DataFrame (or Series) as a table; a meaningful index travels as leading columns."""
    pandas = sys.modules["pandas"]  # loaded: the value is a pandas object
    if isinstance(frame, pandas.Series):
        frame = frame.to_frame()
    index = frame.index
    default = isinstance(index, pandas.RangeIndex) and index.start == 0 and index.step == 1
    if not default or index.name is not None:
        try:
            frame = frame.reset_index()
        except ValueError:
            raise _NotData("its index has the name of a column") from None
    columns = [str(column) for column in frame.columns]
    rows = (list(row) for row in frame.itertuples(index=False, name=None))
    envelope = _table_envelope(columns, rows, len(frame), max_bytes, exact=exact, origin="dataframe")
    if envelope is not None:
        envelope["dtypes"] = [str(dtype) for dtype in frame.dtypes]
    return envelope


def _numpy_envelope(value: Any, max_bytes: int | None, *, exact: bool) -> JsonEnvelope | None:
    """A numpy scalar or array of bools, numbers or strings as JSON with its dtype (arrays: shape)."""
    numpy = sys.modules["numpy"]  # loaded: the value is a numpy object
    if isinstance(value, numpy.generic):
        if value.dtype.kind not in _ARRAY_KINDS:
            return None
        envelope = _json_envelope(value.item(), max_bytes, exact=exact)
        return envelope and {**envelope, "dtype": str(value.dtype)}
    if type(value) is not numpy.ndarray or value.dtype.kind not in _ARRAY_KINDS:
        return None
    if max_bytes is not None and value.nbytes > max_bytes:
        return None  # its repr is numpy's summary with "..."
    envelope = _json_envelope(value.tolist(), max_bytes, exact=exact)
    if envelope is None or envelope.get("truncated"):
        return None
    return {**envelope, "dtype": str(value.dtype), "shape": list(value.shape)}


def _image_envelope(value: Any, max_bytes: int) -> ImageEnvelope | ReprEnvelope | None:
    """An image object (``data`` and ``mime_type``, or ``_repr_png_``/``_repr_jpeg_``), or None."""
    found = _image_data(value)
    if found is None:
        return None
    data, mime_type = found
    if len(data) > max_bytes:
        text = f"<{mime_type} image of {len(data)} bytes, larger than the {max_bytes}-byte limit>"
        return {"kind": "repr", "repr": text, "type": _type_name(value), "truncated": True, "size": len(data)}
    return {"kind": "image", "mime_type": mime_type, "data": _b64encode(data)}


def _image_data(value: Any) -> tuple[bytes, str] | None:
    """The bytes and MIME type of an image-like object; methods are looked up on the type only."""
    data, mime_type = getattr(value, "data", None), getattr(value, "mime_type", None)
    if type(data) is bytes and mime_type in IMAGE_TYPES:
        return data, str(mime_type)
    for method, mime in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg")):
        render = getattr(type(value), method, None)
        if not callable(render):
            continue
        out = render(value)
        out = out[0] if type(out) is tuple and out else out
        if type(out) is str:  # IPython's convention: text output of an image method is base64
            out = _b64decode(out, validate=False)
        if type(out) is bytes and out:
            return out, mime
    return None


def _repr_envelope(value: Any, max_bytes: int) -> ReprEnvelope:
    """The last resort: the value's repr (or a note that it has none), clipped, and its type."""
    try:
        text = _safe_repr(value, None)
        envelope = _text_envelope(text, max_bytes)
        result: ReprEnvelope = {"kind": "repr", "repr": envelope["text"], "type": _type_name(value)}
        if envelope.get("truncated"):
            result.update({"truncated": True, "size": envelope["size"]})
        return result
    except KeyboardInterrupt:
        raise
    except BaseException:  # e.g. MemoryError while clipping: still an envelope
        return {"kind": "repr", "repr": "<unrepresentable value>", "type": "object"}


def _safe_repr(value: Any, limit: int | None) -> str:
    """``repr(value)``, or a note naming the failure when the repr raises (or recurses forever)."""
    try:
        text = repr(value)
        if type(text) is not str:
            raise TypeError("__repr__ returned a non-string")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit from a hostile __repr__ must not end the worker here
        text = f"<{_type_name(value)} object; repr() failed with {type(exc).__name__}>"
    return text if limit is None or len(text) <= limit else text[:limit] + "..."


def _type_name(value: Any) -> str:
    """The qualified name of the value's real type (``type()``, never the ``__class__`` it claims)."""
    kind = type(value)
    try:
        name = str(kind.__qualname__)
        module = _module_name(kind)
    except Exception:
        return "object"
    return name if module == "builtins" else f"{module}.{name}"


def _module_name(kind: type) -> str:
    module = kind.__module__
    return module if type(module) is str else ""


# --- decoding --------------------------------------------------------------------------------------


def decode_value(envelope: Any) -> Any:
    """Rebuild a value from its envelope, checking every field: the envelope comes from untrusted code.

    Raises:
        ValueError: the envelope is malformed; the message names the field.
    """
    if not isinstance(envelope, dict):
        raise ValueError(f"value envelope: expected a JSON object, got {_type_name(envelope)}")
    kind = envelope.get("kind")
    decoder = _DECODERS.get(kind) if type(kind) is str else None
    if decoder is None:
        raise ValueError(f"value envelope: unknown kind {_clip(kind)}; expected one of {sorted(_DECODERS)}")
    return decoder(envelope)


def _decode_json(envelope: dict[str, Any]) -> Any:
    data = _with_nonfinite(_checked_json(_require(envelope, "data"), "data", 0), envelope, "data")
    dtype = envelope.get("dtype")
    if dtype is None:
        return data
    numpy = _optional_module("numpy")
    return data if numpy is None else _numpy_value(numpy, data, dtype, envelope.get("shape"))


def _decode_text(envelope: dict[str, Any]) -> str:
    return str(_typed(envelope, "text", str))


def _decode_bytes(envelope: dict[str, Any]) -> bytes:
    return _base64(envelope)


def _decode_image(envelope: dict[str, Any]) -> Image:
    mime_type = _typed(envelope, "mime_type", str)
    if mime_type not in IMAGE_TYPES:
        raise ValueError(f"image envelope: mime_type {_clip(mime_type)} is not one of {list(IMAGE_TYPES)}")
    return Image(_base64(envelope), mime_type)


def _decode_repr(envelope: dict[str, Any]) -> ReprValue:
    truncated = envelope.get("truncated", False)
    return ReprValue(_typed(envelope, "repr", str), str(envelope.get("type", "object")), truncated is True)


def _decode_table(envelope: dict[str, Any]) -> Any:
    columns = _typed(envelope, "columns", list)
    if not all(type(column) is str for column in columns):
        raise ValueError("table envelope: columns must be strings")
    rows = _checked_json(_typed(envelope, "rows", list), "rows", 0)
    if not all(type(row) is list and len(row) == len(columns) for row in rows):
        raise ValueError(f"table envelope: every row must be a list of {len(columns)} cells")
    rows = _with_nonfinite(rows, envelope, "rows")
    origin = envelope.get("origin", "records")
    if origin not in ("records", "dataframe"):
        raise ValueError(f"table envelope: origin {_clip(origin)} is not 'records' or 'dataframe'")
    pandas = _optional_module("pandas") if origin == "dataframe" else None
    if pandas is None:
        return [dict(zip(columns, row, strict=True)) for row in rows]
    return _dataframe(pandas, columns, rows, envelope.get("dtypes"))


_DECODERS = {
    "json": _decode_json,
    "text": _decode_text,
    "bytes": _decode_bytes,
    "image": _decode_image,
    "table": _decode_table,
    "repr": _decode_repr,
}


def _require(envelope: dict[str, Any], field: str) -> Any:
    if field not in envelope:
        raise ValueError(f"{envelope['kind']} envelope: the field {field!r} is missing")
    return envelope[field]


def _typed(envelope: dict[str, Any], field: str, kind: type[Any]) -> Any:
    value = _require(envelope, field)
    if type(value) is not kind:
        raise ValueError(
            f"{envelope['kind']} envelope: {field!r} must be a {kind.__name__}, got {_type_name(value)}"
        )
    return value


def _base64(envelope: dict[str, Any]) -> bytes:
    data = _typed(envelope, "data", str)
    try:
        return _b64decode(data, validate=True)
    except ValueError as exc:  # binascii.Error
        raise ValueError(f"{envelope['kind']} envelope: 'data' is not base64 ({exc})") from None


def _b64encode(data: bytes) -> str:
    import base64  # here: only the programs that pass bytes or images load it

    return base64.b64encode(data).decode("ascii")


def _b64decode(text: str, *, validate: bool) -> bytes:
    import base64

    return base64.b64decode(text, validate=validate)


def _checked_json(value: Any, where: str, depth: int) -> Any:
    """A fresh copy of JSON data, refusing anything else (and non-finite floats, which travel as text)."""
    if depth > _DECODE_DEPTH:
        raise ValueError(f"{where}: nested more than {_DECODE_DEPTH} levels deep")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        if not math.isfinite(value):
            raise ValueError(f"{where}: non-finite float {value!r}; send it as text listed in 'nonfinite'")
        return value
    if kind is list:
        return [_checked_json(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
    if kind is dict:
        if not all(type(key) is str for key in value):
            raise ValueError(f"{where}: object keys must be strings")
        return {key: _checked_json(item, f"{where}[{key!r}]", depth + 1) for key, item in value.items()}
    raise ValueError(f"{where}: {_type_name(value)} is not JSON data")


def _with_nonfinite(data: Any, envelope: dict[str, Any], field: str) -> Any:
    """Put back the NaN and infinities that travelled as text at the paths listed in ``nonfinite``."""
    paths = envelope.get("nonfinite", [])
    if type(paths) is not list:
        raise ValueError(f"{envelope['kind']} envelope: 'nonfinite' must be a list of paths")
    for path in paths:
        if type(path) is not list or not all(type(step) in (str, int) for step in path):
            raise ValueError(f"{envelope['kind']} envelope: a 'nonfinite' path must be a list of keys")
        if not path:
            data = _nonfinite(data, field)
            continue
        parent = data
        try:
            for step in path[:-1]:
                parent = parent[step]
            parent[path[-1]] = _nonfinite(parent[path[-1]], f"{field} at {path}")
        except (KeyError, IndexError, TypeError):
            raise ValueError(
                f"{envelope['kind']} envelope: 'nonfinite' path {path} is not in {field}"
            ) from None
    return data


def _nonfinite(text: Any, where: str) -> float:
    if type(text) is not str or text not in _NONFINITE:
        raise ValueError(f"{where}: a 'nonfinite' entry must be 'NaN', 'Infinity' or '-Infinity'")
    return _NONFINITE[text]


def _numpy_value(numpy: ModuleType, data: Any, dtype: Any, shape: Any) -> Any:
    """A numpy scalar (no shape) or array, from data checked against its dtype and shape."""
    if type(dtype) is not str or not _DTYPE.fullmatch(dtype):
        raise ValueError(f"json envelope: dtype {_clip(dtype)} is not a numpy dtype name")
    try:
        resolved = numpy.dtype(dtype)
    except TypeError:
        raise ValueError(f"json envelope: dtype {dtype!r} is not a numpy dtype") from None
    if resolved.kind not in _ARRAY_KINDS:
        raise ValueError(f"json envelope: dtype {dtype!r} is not a bool, number or str dtype")
    if shape is not None and (
        type(shape) is not list or len(shape) > 32 or not all(type(n) is int and n >= 0 for n in shape)
    ):
        raise ValueError("json envelope: shape must be a list of at most 32 non-negative ints")
    try:
        return resolved.type(data) if shape is None else numpy.array(data, dtype=resolved).reshape(shape)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(
            f"json envelope: data does not fit dtype {dtype!r} and shape {shape}: {exc}"
        ) from None


def _dataframe(pandas: ModuleType, columns: list[str], rows: list[list[Any]], dtypes: Any) -> Any:
    """A DataFrame with the column dtypes restored where the envelope names ones pandas can apply."""
    frame = pandas.DataFrame(rows, columns=columns)
    if type(dtypes) is not list or len(dtypes) != len(columns):
        return frame
    for position, dtype in enumerate(dtypes):
        if type(dtype) is not str or not _TABLE_DTYPE.fullmatch(dtype):
            continue
        column = frame.iloc[:, position]
        try:
            if dtype.startswith("datetime64"):  # ISO text, with or without fractions of a second
                column = pandas.to_datetime(column, format="ISO8601")
            frame[frame.columns[position]] = column.astype(dtype)
        except (TypeError, ValueError):
            continue  # the cells stay as they came: the data is kept, only the dtype is lost
    return frame


def _optional_module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _clip(value: Any) -> str:
    return _safe_repr(value, 80)


# --- inputs ----------------------------------------------------------------------------------------


def encode_inputs(inputs: Mapping[str, Any]) -> dict[str, ValueEnvelope]:
    """Envelopes for the values a program gets as globals (``run(code, inputs={"df": df})``).

    Inputs travel whole and exactly: JSON values, bytes, pandas DataFrames and numpy arrays.

    Raises:
        ValueError: a name is not usable as a global variable.
        TypeError: a value cannot be sent; the message names the input, its type and what is supported.
    """
    envelopes: dict[str, ValueEnvelope] = {}
    for name, value in inputs.items():
        _check_input_name(name)
        try:
            envelopes[name] = _encode_input(value)
        except _NotData as exc:
            raise TypeError(
                f"input {name!r}: cannot send a {_type_name(value)} to the worker ({exc}); "
                f"supported: {_SUPPORTED_INPUTS}"
            ) from None
    return envelopes


def decode_inputs(envelopes: Mapping[str, Any]) -> dict[str, Any]:
    """The globals a program starts with, rebuilt from ``encode_inputs`` envelopes.

    Raises:
        ValueError: a name or an envelope is malformed.
    """
    if not isinstance(envelopes, Mapping):
        raise ValueError(f"inputs: expected a mapping of names to envelopes, got {_type_name(envelopes)}")
    values = {}
    for name, envelope in envelopes.items():
        _check_input_name(name)
        try:
            values[name] = decode_value(envelope)
        except ValueError as exc:
            raise ValueError(f"input {name!r}: {exc}") from None
    return values


def _check_input_name(name: Any) -> None:
    """Inputs become globals, so a name must be an identifier, not a keyword, and not ``__special``."""
    if type(name) is not str or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__"):
        raise ValueError(
            f"input name {_clip(name)} cannot be a global variable: use a Python identifier that is not "
            "a keyword and does not start with '__'"
        )


def _encode_input(value: Any) -> ValueEnvelope:
    """The exact envelope of one input; raises _NotData for what cannot travel exactly."""
    envelope: ValueEnvelope | None
    kind = type(value)
    module = _module_name(kind)
    if issubclass(kind, str):
        return {"kind": "text", "text": str.__str__(value)}
    if issubclass(kind, bytes | bytearray | memoryview):
        return _bytes_envelope(bytes(value), None)
    if module == "numpy":
        envelope = _numpy_envelope(value, None, exact=True)
    elif module.partition(".")[0] == "pandas" and kind.__name__ == "DataFrame":
        envelope = _dataframe_envelope(value, None, exact=True)
    elif value is None or issubclass(kind, bool | int | float | list | tuple | dict):
        envelope = _json_envelope(value, None, exact=True)
    else:
        envelope = None
    if envelope is None:
        raise _NotData("not a supported kind of value")
    return envelope


# --- artifacts -------------------------------------------------------------------------------------


def encode_artifact(value: Any) -> ValueEnvelope:
    """The exact envelope of an artifact's value, on its way to the store or back to a program.

    What an input may be, plus images.

    Raises:
        TypeError: the value cannot be stored; the message names its type and what is supported.
    """
    try:
        return _encode_input(value)
    except _NotData as exc:
        reason = str(exc)
    found = _image_data(value)
    if found is not None:
        data, mime_type = found
        return {"kind": "image", "mime_type": mime_type, "data": _b64encode(data)}
    raise TypeError(
        f"cannot store a {_type_name(value)} as an artifact ({reason}); supported: {_SUPPORTED_ARTIFACTS}"
    )
