"""Bytes are recognised as an image in one place (worker.values.sniff_image): values and artifacts agree."""

from __future__ import annotations

import base64

import pytest

from codemode_kernel.artifacts import codec
from codemode_kernel.worker.values import IMAGE_TYPES, decode_value, encode_value, sniff_image

# The first bytes of a real file of each type (a RIFF chunk's size sits between "RIFF" and "WEBP").
HEADS = {
    "image/png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "image/jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00",
    "image/gif": b"GIF89a\x01\x00\x01\x00",
    "image/webp": b"RIFF\x24\x00\x00\x00WEBPVP8 ",
}
NOT_IMAGES = [
    b"",
    b"RIFF\x24\x00\x00\x00WAVEfmt ",
    b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    b"\x89PN",
    b"GIF",
]


def test_every_image_type_is_recognised() -> None:
    assert sorted(HEADS) == sorted(IMAGE_TYPES)
    assert {mime: sniff_image(head) for mime, head in HEADS.items()} == {mime: mime for mime in HEADS}


@pytest.mark.parametrize("data", [*HEADS.values(), *NOT_IMAGES])
def test_a_program_s_bytes_and_a_stored_artifact_get_the_same_type(data: bytes) -> None:
    envelope = encode_value(data)
    assert envelope["kind"] == "bytes" and envelope.get("mime_type") == sniff_image(data)
    assert decode_value(envelope) == data
    assert base64.b64decode(envelope["data"]) == data
    stored, mime_type = codec.encode(data)
    assert stored == data and mime_type == (sniff_image(data) or codec.BINARY)


def test_an_explicit_type_still_wins() -> None:
    webp = HEADS["image/webp"]
    assert codec.encode(webp, "application/x-riff") == (webp, "application/x-riff")
