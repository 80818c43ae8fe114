"""MessageReader answers every line a server may write: a message, an error for its call, or nothing.

Whatever JSON an answer holds, parsing it never raises (an exception here used to end the reading of the
server's stdout for good); the real-server cases are in tests/integration/test_stdio_transport.py.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from hypothesis import example, given, settings
from hypothesis import strategies as st

from codemode_kernel.hub.stdio_reader import REFUSED_BY_TRANSPORT, MessageReader, StdoutNoise

# Keys this reader looks at, beside any text; strings may hold lone surrogates (json.dumps escapes them).
KEYS = st.sampled_from(["_meta", "codemode-kernel/transport-warnings", "content", "id", "method"]) | st.text()
TEXT = st.text(st.characters(blacklist_categories=()), max_size=8)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=30,
)


def reader_waiting_for(request_id: int) -> MessageReader:
    reader = MessageReader("faults", 1_000_000, StdoutNoise())
    params = {"name": "tool", "arguments": {}}
    reader.sent(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call", params=params))
    return reader


@settings(max_examples=400, deadline=None)
@given(result=st.dictionaries(KEYS, JSON, max_size=5), request_id=st.integers(0, 5), ascii_only=st.booleans())
@example(result={"_meta": "\ud800"}, request_id=0, ascii_only=False)  # a high surrogate, raw in the line
def test_any_answer_to_a_waiting_call_is_delivered_or_fails_that_call(
    result: dict[str, Any], request_id: int, ascii_only: bool
) -> None:
    text = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, ensure_ascii=ascii_only)
    # Unescaped, a lone surrogate becomes bytes that are not UTF-8, as a broken server would write them.
    line = text.encode("utf-8", "surrogatepass")
    message = reader_waiting_for(request_id).parse(line)
    assert message is not None
    answer = message.message
    assert isinstance(answer, types.JSONRPCResponse | types.JSONRPCError)
    assert answer.id == request_id
    if isinstance(answer, types.JSONRPCError):
        assert answer.error.data == REFUSED_BY_TRANSPORT


@settings(max_examples=200, deadline=None)
@given(value=JSON)
def test_any_line_of_json_is_a_message_or_skipped(value: Any) -> None:
    reader_waiting_for(1).parse(json.dumps(value).encode())
