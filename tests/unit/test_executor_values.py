"""Values cross the worker boundary as JSON envelopes, never pickles, and come back as they were."""

from __future__ import annotations

import base64
import json
import math
import subprocess
import sys
from collections import namedtuple
from typing import Any

import numpy
import pandas
import pytest
from hypothesis import given
from hypothesis import strategies as st

from codemode_kernel.core.results import Image, ToolResult
from codemode_kernel.worker.values import (
    ReprValue,
    decode_inputs,
    decode_value,
    encode_inputs,
    encode_value,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16


def envelope_of(value: Any, **options: Any) -> dict[str, Any]:
    """The envelope of a value, after the trip through JSON text it makes between processes."""
    envelope = encode_value(value, **options)
    return json.loads(json.dumps(envelope, allow_nan=False))  # type: ignore[no-any-return]


def round_trip(value: Any, **options: Any) -> Any:
    return decode_value(envelope_of(value, **options))


# --- json and text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [None, True, False, 0, -7, 2**80, 1.5, -0.0, [], {}, [1, "a", None], {"a": {"b": [1.5]}}]
)
def test_json_values_round_trip(value: Any) -> None:
    envelope = envelope_of(value)
    assert envelope == {"kind": "json", "data": value}
    back = decode_value(envelope)
    assert repr(back) == repr(value)


def test_a_string_is_text_and_a_list_of_strings_is_json() -> None:
    assert envelope_of("abc") == {"kind": "text", "text": "abc"}
    assert envelope_of(["abc"]) == {"kind": "json", "data": ["abc"]}
    assert decode_value({"kind": "text", "text": "[1, 2]"}) == "[1, 2]"


def test_non_finite_floats_travel_as_text_with_their_paths() -> None:
    value = {"a": [1.0, math.nan], "b": math.inf, "c": "NaN", "d": -math.inf}
    envelope = envelope_of(value)
    assert envelope["data"] == {"a": [1.0, "NaN"], "b": "Infinity", "c": "NaN", "d": "-Infinity"}
    assert envelope["nonfinite"] == [["a", 1], ["b"], ["d"]]
    back = decode_value(envelope)
    assert math.isnan(back["a"][1]) and back["b"] == math.inf and back["d"] == -math.inf
    assert back["c"] == "NaN"  # a string that says NaN stays a string
    top = decode_value(envelope_of(math.nan))
    assert math.isnan(top)


def test_tuples_and_subclasses_become_plain_json() -> None:
    Point = namedtuple("Point", "x y")
    assert envelope_of((1, (2, 3))) == {"kind": "json", "data": [1, [2, 3]]}
    assert envelope_of(Point(1, 2)) == {"kind": "json", "data": [1, 2]}
    back = round_trip(ToolResult(city="Paris", temperature=21.5))
    assert back == {"city": "Paris", "temperature": 21.5}
    assert type(back) is dict


def test_non_str_keys_become_text() -> None:
    data = envelope_of({1: "a", 2.5: "b", None: "c", (1, 2): "e"})["data"]
    assert data == {"1": "a", "2.5": "b", "null": "c", "(1, 2)": "e"}
    assert envelope_of({True: "d"})["data"] == {"true": "d"}


def test_json_too_large_is_cut_and_says_so() -> None:
    envelope = envelope_of(list(range(100_000)), max_bytes=1000)
    assert envelope["kind"] == "json"
    assert envelope["truncated"] is True
    assert envelope["length"] == 100_000
    assert 0 < len(envelope["data"]) < 1000
    assert envelope["data"][:3] == [0, 1, 2]


def test_a_long_string_inside_json_is_clipped() -> None:
    envelope = envelope_of({"log": "x" * 10_000}, max_bytes=500)
    assert envelope["truncated"] is True
    assert len(envelope["data"]["log"]) <= 500


def test_a_huge_string_is_truncated_with_its_size() -> None:
    envelope = envelope_of("é" * 1_000_000, max_bytes=1001)
    assert envelope["kind"] == "text"
    assert envelope["truncated"] is True
    assert envelope["size"] == 2_000_000
    assert envelope["text"] == "é" * 500  # a character cut in half is dropped, not mangled


def test_a_string_with_a_lone_surrogate_is_still_json() -> None:
    assert round_trip("a\ud800b") == "a\ud800b"


# --- bytes and images ------------------------------------------------------------------------------


def test_bytes_round_trip() -> None:
    envelope = envelope_of(b"\x00\x01binary")
    assert envelope == {"kind": "bytes", "data": base64.b64encode(b"\x00\x01binary").decode(), "size": 8}
    assert decode_value(envelope) == b"\x00\x01binary"
    assert round_trip(bytearray(b"ab")) == b"ab"
    assert round_trip(memoryview(b"cd")) == b"cd"


def test_bytes_of_an_image_stay_bytes_with_a_hint() -> None:
    envelope = envelope_of(PNG)
    assert (envelope["kind"], envelope["mime_type"]) == ("bytes", "image/png")
    assert decode_value(envelope) == PNG


def test_big_bytes_are_truncated_with_their_size() -> None:
    envelope = envelope_of(b"z" * 5000, max_bytes=100)
    assert (envelope["size"], envelope["truncated"]) == (5000, True)
    assert decode_value(envelope) == b"z" * 100


def test_an_image_result_round_trips_and_displays() -> None:
    envelope = envelope_of(Image(PNG, "image/png"))
    assert envelope == {"kind": "image", "mime_type": "image/png", "data": base64.b64encode(PNG).decode()}
    back = decode_value(envelope)
    assert back == Image(PNG, "image/png")
    assert "image/png" in back._repr_mimebundle_()


class PngFigure:
    def _repr_png_(self) -> bytes:
        return PNG


class JpegWithMetadata:
    def _repr_jpeg_(self) -> tuple[str, dict[str, int]]:
        return base64.b64encode(JPEG).decode(), {"width": 1}


def test_objects_that_render_as_png_or_jpeg_are_images() -> None:
    assert round_trip(PngFigure()) == Image(PNG, "image/png")
    assert round_trip(JpegWithMetadata()) == Image(JPEG, "image/jpeg")


def test_an_image_with_a_dangerous_mime_type_is_not_an_image() -> None:
    class Svg:
        data = b"<svg onload='alert(1)'/>"
        mime_type = "image/svg+xml"

    assert envelope_of(Svg())["kind"] == "repr"


def test_an_image_over_the_limit_is_described_not_sent() -> None:
    envelope = envelope_of(Image(PNG * 100, "image/png"), max_bytes=100)
    assert envelope["kind"] == "repr"
    assert envelope["truncated"] is True
    assert envelope["size"] == len(PNG) * 100
    assert "image/png" in envelope["repr"]


# --- tables ----------------------------------------------------------------------------------------


def test_a_list_of_dicts_with_the_same_keys_is_a_table_that_comes_back_as_a_list() -> None:
    rows = [{"city": "Paris", "temp": 21.5}, {"city": "Oslo", "temp": math.nan}]
    envelope = envelope_of(rows)
    assert envelope == {
        "kind": "table",
        "origin": "records",
        "columns": ["city", "temp"],
        "rows": [["Paris", 21.5], ["Oslo", "NaN"]],
        "row_count": 2,
        "truncated": False,
        "nonfinite": [[1, 1]],
    }
    back = decode_value(envelope)
    assert back[0] == rows[0] and math.isnan(back[1]["temp"])


def test_dicts_with_other_keys_or_order_are_json() -> None:
    assert envelope_of([{"a": 1}, {"b": 2}])["kind"] == "json"
    assert envelope_of([{"a": 1, "b": 2}, {"b": 2, "a": 1}])["kind"] == "json"
    assert envelope_of([{1: "a"}])["kind"] == "json"
    assert envelope_of([{"a": object()}])["kind"] == "repr"


def test_a_long_table_is_cut_and_keeps_its_row_count() -> None:
    rows = [{"i": i, "text": "row"} for i in range(10_000)]
    envelope = envelope_of(rows, max_bytes=2000)
    assert envelope["truncated"] is True
    assert envelope["row_count"] == 10_000
    assert 0 < len(envelope["rows"]) < 10_000


def test_a_dataframe_is_a_table_that_comes_back_as_a_dataframe() -> None:
    frame = pandas.DataFrame(
        {
            "n": [1, 2, 3],
            "x": [0.5, math.nan, 2.0],
            "when": pandas.to_datetime(["2024-01-01", None, "2024-03-01 12:30:00.25"], format="ISO8601"),
            "flag": [True, False, True],
            "name": ["a", "b", None],
        }
    )
    envelope = envelope_of(frame)
    assert envelope["kind"] == "table"
    assert envelope["origin"] == "dataframe"
    assert envelope["columns"] == ["n", "x", "when", "flag", "name"]
    assert envelope["rows"][0] == [1, 0.5, "2024-01-01T00:00:00", True, "a"]
    assert envelope["rows"][1][2] is None  # NaT
    back = decode_value(envelope)
    assert isinstance(back, pandas.DataFrame)
    pandas.testing.assert_frame_equal(back, frame)


def test_a_dataframe_index_travels_as_leading_columns() -> None:
    frame = pandas.DataFrame({"city": ["Paris", "Oslo"], "temp": [21, 9]}).set_index("city")
    envelope = envelope_of(frame)
    assert envelope["columns"] == ["city", "temp"]
    assert envelope["rows"] == [["Paris", 21], ["Oslo", 9]]


def test_a_series_is_a_one_column_table() -> None:
    envelope = envelope_of(pandas.Series([3, 4], name="count"))
    assert (envelope["columns"], envelope["rows"]) == (["count"], [[3], [4]])


def test_a_big_dataframe_is_cut() -> None:
    frame = pandas.DataFrame({"i": range(100_000)})
    envelope = envelope_of(frame, max_bytes=1000)
    assert envelope["truncated"] is True and envelope["row_count"] == 100_000
    assert len(decode_value(envelope)) == len(envelope["rows"])


def test_a_dataframe_with_odd_cells_shows_them_as_text() -> None:
    frame = pandas.DataFrame({"obj": [object(), {1, 2}]})
    envelope = envelope_of(frame)
    assert envelope["kind"] == "table"
    assert envelope["rows"][1] == ["{1, 2}"]


# --- numpy -----------------------------------------------------------------------------------------


def test_numpy_arrays_and_scalars_keep_their_dtype_and_shape() -> None:
    array = numpy.arange(6, dtype=numpy.int32).reshape(2, 3)
    envelope = envelope_of(array)
    assert envelope == {"kind": "json", "data": [[0, 1, 2], [3, 4, 5]], "dtype": "int32", "shape": [2, 3]}
    back = decode_value(envelope)
    assert back.dtype == numpy.int32 and back.shape == (2, 3)
    numpy.testing.assert_array_equal(back, array)
    scalar = decode_value(envelope_of(numpy.float32(1.5)))
    assert type(scalar) is numpy.float32 and scalar == 1.5


@pytest.mark.parametrize(
    "array",
    [
        numpy.array([1.0, numpy.nan, -numpy.inf]),
        numpy.array([[True, False]]),
        numpy.array(["ab", "c"]),
        numpy.zeros((0, 3)),
        numpy.array(7, dtype=numpy.uint8),
    ],
)
def test_numpy_arrays_round_trip(array: Any) -> None:
    back = round_trip(array)
    assert back.dtype == array.dtype and back.shape == array.shape
    numpy.testing.assert_array_equal(back, array)


def test_numpy_values_inside_lists_become_plain_numbers() -> None:
    assert envelope_of([numpy.int64(3), numpy.float64(0.5)]) == {"kind": "json", "data": [3, 0.5]}


def test_a_big_or_complex_array_travels_as_its_repr() -> None:
    big = envelope_of(numpy.zeros(10_000), max_bytes=1000)
    assert big["kind"] == "repr" and "..." in big["repr"]
    assert envelope_of(numpy.array([1j]))["kind"] == "repr"


def test_encoding_plain_values_imports_neither_pandas_nor_numpy() -> None:
    code = (
        "import sys\n"
        "from codemode_kernel.worker.values import encode_value, decode_value\n"
        "for v in ([{'a': 1}], {'b': 2.5}, 'x', b'y', object()):\n"
        "    decode_value(encode_value(v))\n"
        "assert 'pandas' not in sys.modules and 'numpy' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- repr and hostile values -----------------------------------------------------------------------


def test_anything_else_travels_as_its_repr_and_type() -> None:
    class Thing:
        def __repr__(self) -> str:
            return "Thing(42)"

    envelope = envelope_of(Thing())
    assert envelope == {"kind": "repr", "repr": "Thing(42)", "type": f"{__name__}.{Thing.__qualname__}"}
    back = decode_value(envelope)
    assert isinstance(back, ReprValue)
    assert repr(back) == "Thing(42)"
    assert envelope_of({1, 2})["kind"] == "repr"


def test_a_repr_that_raises() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    envelope = envelope_of(Broken())
    assert envelope["kind"] == "repr"
    assert "repr() failed with RuntimeError" in envelope["repr"]


def test_a_repr_that_exits_or_returns_garbage() -> None:
    class Exits:
        def __repr__(self) -> str:
            raise SystemExit(1)

    class NotText:
        def __repr__(self) -> Any:
            return 42

    assert envelope_of(Exits())["kind"] == "repr"
    assert "repr() failed" in envelope_of(NotText())["repr"]


def test_self_referential_values() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    envelope = envelope_of(loop)
    assert envelope == {"kind": "repr", "repr": "[1, [...]]", "type": "list"}
    cycle: dict[str, Any] = {}
    cycle["me"] = cycle
    assert envelope_of(cycle)["repr"] == "{'me': {...}}"


def test_a_shared_but_acyclic_value_is_json() -> None:
    shared = [1]
    assert envelope_of([shared, shared])["data"] == [[1], [1]]


def test_very_deep_nesting() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    envelope = envelope_of(deep)
    assert envelope["kind"] == "repr"


def test_an_object_lying_about_its_class() -> None:
    class Liar:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return dict

        def __repr__(self) -> str:
            return "Liar()"

    liar = Liar()
    assert isinstance(liar, dict)  # isinstance believes it...
    envelope = envelope_of(liar)  # ...the encoder does not
    assert envelope["kind"] == "repr"
    assert envelope["type"].endswith("Liar")


def test_an_object_that_answers_every_attribute() -> None:
    class Everything:
        def __getattr__(self, name: str) -> Any:
            return lambda *args: b"\x89PNG"

        def __repr__(self) -> str:
            return "Everything()"

    envelope = envelope_of(Everything())
    assert envelope == {
        "kind": "repr",
        "repr": "Everything()",
        "type": f"{__name__}.{Everything.__qualname__}",
    }


def test_subclasses_with_hostile_methods_are_read_as_their_base_type() -> None:
    class SneakyList(list[Any]):
        def __iter__(self) -> Any:
            raise RuntimeError("no")

        def __len__(self) -> int:
            raise RuntimeError("no")

    class SneakyStr(str):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert envelope_of(SneakyList([1, 2])) == {"kind": "json", "data": [1, 2]}
    assert envelope_of(SneakyStr("hi")) == {"kind": "text", "text": "hi"}


def test_an_int_too_long_for_json() -> None:
    envelope = envelope_of(10**20_000)
    assert envelope["kind"] == "repr"


# --- decoding untrusted envelopes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("envelope", "message"),
    [
        ([1], "expected a JSON object"),
        ({}, "unknown kind"),
        ({"kind": "pickle", "data": "gASV"}, "unknown kind 'pickle'"),
        ({"kind": "json"}, "'data' is missing"),
        ({"kind": "json", "data": {1: 2}}, "keys must be strings"),
        ({"kind": "json", "data": [math.nan]}, "non-finite float"),
        ({"kind": "json", "data": [object()]}, "is not JSON data"),
        ({"kind": "json", "data": [1], "nonfinite": [[0]]}, "must be 'NaN'"),
        ({"kind": "json", "data": [1], "nonfinite": [[5]]}, "path [5] is not in data"),
        ({"kind": "json", "data": [1], "nonfinite": "all"}, "list of paths"),
        ({"kind": "json", "data": [1], "nonfinite": [[1.5]]}, "list of keys"),
        ({"kind": "text", "text": 5}, "'text' must be a str"),
        ({"kind": "bytes", "data": "***"}, "not base64"),
        ({"kind": "image", "mime_type": "text/html", "data": ""}, "is not one of"),
        ({"kind": "image", "mime_type": "image/svg+xml", "data": ""}, "is not one of"),
        ({"kind": "table", "columns": ["a"], "rows": [[1, 2]]}, "every row must be a list of 1 cells"),
        ({"kind": "table", "columns": [1], "rows": []}, "columns must be strings"),
        ({"kind": "table", "columns": [], "rows": [], "origin": "sql"}, "origin 'sql'"),
        ({"kind": "repr"}, "'repr' is missing"),
        ({"kind": "json", "data": [1], "dtype": "object"}, "not a bool, number or str dtype"),
        ({"kind": "json", "data": [1], "dtype": "os.system('x')"}, "not a numpy dtype name"),
        ({"kind": "json", "data": [1], "dtype": "nosuchtype"}, "is not a numpy dtype"),
        ({"kind": "json", "data": [1, 2, 3], "dtype": "int8", "shape": [2]}, "does not fit"),
        ({"kind": "json", "data": [1], "dtype": "int8", "shape": [-1]}, "non-negative"),
        ({"kind": "json", "data": ["x"], "dtype": "int8", "shape": [1]}, "does not fit"),
    ],
)
def test_a_malformed_envelope_is_refused_with_the_reason(envelope: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^.*" + __import__("re").escape(message)):
        decode_value(envelope)


def test_an_envelope_nested_too_deeply_is_refused() -> None:
    data: list[Any] = []
    for _ in range(300):
        data = [data]
    with pytest.raises(ValueError, match="levels deep"):
        decode_value({"kind": "json", "data": data})


def test_decoding_does_not_change_the_envelope() -> None:
    envelope = {"kind": "json", "data": ["NaN"], "nonfinite": [[0]]}
    decode_value(envelope)
    assert envelope["data"] == ["NaN"]


def test_unknown_extra_fields_are_ignored() -> None:
    assert decode_value({"kind": "text", "text": "a", "future": 1}) == "a"


# --- inputs ----------------------------------------------------------------------------------------


def test_inputs_round_trip() -> None:
    frame = pandas.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    array = numpy.linspace(0, 1, 6).reshape(3, 2)
    inputs = {
        "n": 3,
        "name": "Paris",
        "config": {"retries": 2, "ratio": math.inf, "tags": ("a", "b")},
        "blob": b"\x00\xff",
        "df": frame,
        "grid": array,
        "scale": numpy.float64(2.5),
        "nothing": None,
    }
    envelopes = json.loads(json.dumps(encode_inputs(inputs), allow_nan=False))
    values = decode_inputs(envelopes)
    assert values["n"] == 3 and values["name"] == "Paris" and values["blob"] == b"\x00\xff"
    assert values["config"] == {"retries": 2, "ratio": math.inf, "tags": ["a", "b"]}
    assert values["nothing"] is None
    pandas.testing.assert_frame_equal(values["df"], frame)
    numpy.testing.assert_array_equal(values["grid"], array)
    assert values["grid"].dtype == array.dtype
    assert type(values["scale"]) is numpy.float64


def test_big_inputs_are_never_truncated() -> None:
    text = "x" * 3_000_000
    assert decode_inputs(encode_inputs({"text": text}))["text"] == text


@pytest.mark.parametrize("name", ["", "1x", "a-b", "class", "__builtins__", "__out", 5])
def test_input_names_must_be_usable_globals(name: Any) -> None:
    with pytest.raises(ValueError, match="cannot be a global variable"):
        encode_inputs({name: 1})
    with pytest.raises(ValueError, match="cannot be a global variable"):
        decode_inputs({name: {"kind": "json", "data": 1}})


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        (object(), "a object to the worker"),
        ({1, 2}, "a set to the worker"),
        ({"k": {1: "a"}}, "has a int key"),
        ([1, object()], "object at value[1] is not JSON data"),
        (pandas.Series([1]), "a pandas.Series"),
        (pandas.DataFrame({"o": [object()]}), "is not table data"),
        (numpy.array([1j]), "numpy.ndarray"),
    ],
)
def test_an_input_that_cannot_travel_names_itself_its_type_and_what_is_supported(
    value: Any, detail: str
) -> None:
    with pytest.raises(TypeError) as caught:
        encode_inputs({"thing": value})
    message = str(caught.value)
    assert message.startswith("input 'thing': cannot send a ")
    assert detail in message
    assert "supported: JSON values" in message and "DataFrames" in message


def test_a_bad_input_envelope_names_the_input() -> None:
    with pytest.raises(ValueError, match="input 'df': table envelope"):
        decode_inputs({"df": {"kind": "table", "columns": "a", "rows": []}})
    with pytest.raises(ValueError, match="expected a mapping"):
        decode_inputs([("a", 1)])  # type: ignore[arg-type]


# --- properties ------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=5), children, max_size=5)
    ),
    max_leaves=30,
)


@given(json_values)
def test_any_json_value_round_trips_exactly(value: Any) -> None:
    # repr tells 1 from 1.0 and True, and -0.0 from 0.0; nan prints the same on both sides.
    envelope = encode_value(value)
    assert envelope["kind"] in ("json", "text", "table")
    assert repr(decode_value(json.loads(json.dumps(envelope, allow_nan=False)))) == repr(value)


@given(json_values)
def test_any_json_input_round_trips_exactly(value: Any) -> None:
    envelopes = json.loads(json.dumps(encode_inputs({"v": value}), allow_nan=False))
    assert repr(decode_inputs(envelopes)["v"]) == repr(value)


@given(json_values, st.integers(min_value=0, max_value=200))
def test_every_envelope_is_json_even_when_cut(value: Any, max_bytes: int) -> None:
    envelope = encode_value(value, max_bytes=max_bytes)
    json.dumps(envelope, allow_nan=False)
    decode_value(envelope)
