"""What a tool function returns for each kind of MCP result."""

from __future__ import annotations

import base64
import json

import pytest

from codemode_kernel.core.errors import ToolError
from codemode_kernel.core.results import Audio, Image, Resource, ResourceLink, ToolResult, decode_result

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def test_structured_content_answers_attribute_and_key_access() -> None:
    r = decode_result(
        {"content": [text("ignored")], "structuredContent": {"temperature": 21.5, "where": {"city": "Oslo"}}},
        tool="get_weather",
    )
    assert r.temperature == r["temperature"] == 21.5
    assert r.where.city == "Oslo"
    assert isinstance(r, dict) and json.loads(json.dumps(r)) == {
        "temperature": 21.5,
        "where": {"city": "Oslo"},
    }
    with pytest.raises(AttributeError, match="temperature, where"):
        _ = r.humidity
    assert "temperature" in dir(r)


def test_json_text_becomes_an_object_and_plain_text_stays_str() -> None:
    assert decode_result({"content": [text('{"a": [1, {"b": 2}]}')]}, tool="t").a[1].b == 2
    assert decode_result({"content": [text("[1, 2]")]}, tool="t") == [1, 2]
    plain = decode_result({"content": [text("New York\nChicago")]}, tool="read_file")
    assert plain == "New York\nChicago" and type(plain) is str
    assert decode_result({"content": [text("{not json")]}, tool="t") == "{not json"
    assert decode_result({"content": [text("a"), text("b")]}, tool="t") == "a\nb"
    assert decode_result({"content": []}, tool="t") is None


def test_is_error_raises_tool_error_with_the_servers_message() -> None:
    with pytest.raises(ToolError, match="unknown city 'Atlantis'") as info:
        decode_result(
            {"content": [text("unknown city 'Atlantis'")], "isError": True}, tool="get_weather", server="w"
        )
    assert info.value.tool == "get_weather" and info.value.server == "w"


def test_media_and_resources() -> None:
    image = decode_result(
        {"content": [{"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}]},
        tool="t",
    )
    assert isinstance(image, Image) and image.data == PNG
    bundle = image._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"]) == PNG
    audio = decode_result({"content": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]}, tool="t")
    assert isinstance(audio, Audio) and "<audio" in audio._repr_html_()
    mixed = decode_result(
        {
            "content": [
                text("caption"),
                {"type": "resource_link", "uri": "file:///a", "name": "a"},
                {"type": "resource", "resource": {"uri": "mem://x", "text": "hi"}},
            ]
        },
        tool="t",
    )
    assert mixed[0] == "caption"
    assert isinstance(mixed[1], ResourceLink) and mixed[1].uri == "file:///a"
    assert isinstance(mixed[2], Resource) and mixed[2].text == "hi"
    assert isinstance(decode_result({"content": [], "structuredContent": {}}, tool="t"), ToolResult)


def test_a_deeply_nested_json_result_decodes_without_recursion_error() -> None:
    """A hostile server's 900-deep JSON text (as deep as json.loads goes) still decodes."""
    depth = 900
    text = '{"a": ' * depth + "[1, 2]" + "}" * depth
    value = decode_result({"content": [{"type": "text", "text": text}]}, tool="deep")
    for _ in range(depth):
        assert isinstance(value, ToolResult)
        value = value.a
    assert value == [1, 2]


def test_wrapping_keeps_order_and_types() -> None:
    wrapped = decode_result(
        {"content": [], "structuredContent": {"b": [{"x": 1}, 2, [3, {"y": None}]], "a": "s"}}, tool="t"
    )
    assert list(wrapped) == ["b", "a"]
    assert wrapped.b[0].x == 1 and wrapped.b[1] == 2 and wrapped.b[2][1].y is None
    assert isinstance(wrapped.b[2][1], ToolResult) and type(wrapped.b[2]) is list
