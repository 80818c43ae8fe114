"""read_lines cuts a byte stream into lines whatever the chunks, and never holds a line over the limit."""

from __future__ import annotations

import itertools

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from codemode_kernel.hub.stdio_lines import Oversized, read_lines

LIMIT = 64


class ChunkStream(anyio.abc.ByteReceiveStream):
    """Bytes as a pipe delivers them: these chunks, then the end of the stream."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        return self._chunks.pop(0)

    async def aclose(self) -> None:
        self._chunks = []


def read_all(chunks: list[bytes]) -> list[bytes | Oversized]:
    async def main() -> list[bytes | Oversized]:
        return [line async for line in read_lines(ChunkStream(chunks), LIMIT)]

    return anyio.run(main)


def cut(data: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    return [data[start:end] for start, end in itertools.pairwise(edges) if end > start]


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    crlf=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=30),
)
def test_the_lines_are_the_same_whatever_the_chunks(lines: list[bytes], crlf: bool, cuts: list[int]) -> None:
    raw = [line + b"\r" if crlf else line for line in lines]  # what stands before each \n
    got = read_all(cut(b"".join(r + b"\n" for r in raw), cuts))
    assert [g.size if isinstance(g, Oversized) else g for g in got] == [
        len(r) if len(r) > LIMIT else r.removesuffix(b"\r") for r in raw
    ]


def test_an_oversized_line_keeps_its_two_ends_and_what_follows_is_read() -> None:
    line = b'{"jsonrpc": "2.0", "id": 7, "result": "' + b"x" * 10_000 + b'"}'
    big, after = read_all([*cut(line, list(range(100, len(line), 100))), b"\nnext\n"])
    assert isinstance(big, Oversized) and big.size == len(line)
    assert big.head == line[:4096] and big.tail == line[-4096:]
    assert after == b"next"


def test_a_last_line_without_a_line_break_is_dropped_as_the_sdk_does() -> None:
    assert read_all([b"one\ntw", b"o"]) == [b"one"]
