"""The scripted model server on its own: wire formats, recording, script files and the CLI (plain HTTP)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from codemode_kernel.llm.scripted import (
    ScriptedModelServer,
    ScriptedToolCall,
    ScriptedTurn,
    count_tokens,
    load_script,
)
from codemode_kernel.llm.scripted.cli import main


def post(
    url: str, path: str, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    finally:
        conn.close()


def get(url: str, path: str) -> Any:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request("GET", path)
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def sse(text: str) -> list[tuple[str | None, str]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines.get("event"), lines["data"]))
    return events


CALL = ScriptedToolCall("get_weather", {"city": "Paris"}, id="call_a")
ASKED = {"model": "m1", "messages": [{"role": "user", "content": "hi"}]}


def test_openai_non_streaming_answer() -> None:
    with ScriptedModelServer([ScriptedTurn(text="Hi there", tool_calls=[CALL])]) as server:
        status, _, body = post(server.url, "/v1/chat/completions", ASKED)
    answer = json.loads(body)
    assert status == 200 and answer["object"] == "chat.completion" and answer["model"] == "m1"
    message = answer["choices"][0]["message"]
    assert message["content"] == "Hi there"
    assert message["tool_calls"] == [
        {
            "id": "call_a",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert answer["choices"][0]["finish_reason"] == "tool_calls"
    usage = answer["usage"]
    assert usage["prompt_tokens"] == count_tokens({"messages": ASKED["messages"]})
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_openai_stream_ends_with_usage_and_done() -> None:
    with ScriptedModelServer([ScriptedTurn(text="a b", tool_calls=[CALL])]) as server:
        body = {**ASKED, "stream": True, "stream_options": {"include_usage": True}}
        status, headers, text = post(server.url, "/v1/chat/completions", body)
    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = sse(text)
    assert events[-1] == (None, "[DONE]")
    chunks = [json.loads(data) for _, data in events[:-1]]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1]]
    assert "".join(d.get("content") or "" for d in deltas) == "a b"
    arguments = "".join(
        call["function"]["arguments"]
        for d in deltas
        for call in d.get("tool_calls", [])
        if "function" in call
    )
    assert json.loads(arguments) == {"city": "Paris"}
    assert len([d for d in deltas if "tool_calls" in d]) == 3  # the head, then the arguments in two pieces


def test_anthropic_stream_event_sequence() -> None:
    with ScriptedModelServer([ScriptedTurn(text="a b", tool_calls=[CALL])]) as server:
        status, _, text = post(server.url, "/v1/messages", {**ASKED, "max_tokens": 10, "stream": True})
    assert status == 200
    names = [event for event, _ in sse(text)]
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    data = [json.loads(d) for _, d in sse(text)]
    assert data[5]["content_block"] == {
        "type": "tool_use",
        "id": "call_a",
        "name": "get_weather",
        "input": {},
    }
    assert data[9]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_non_streaming_answer_and_error_format() -> None:
    turns = [ScriptedTurn(text="Hi", tool_calls=[CALL]), ScriptedTurn(status=404, error="no such model")]
    with ScriptedModelServer(turns) as server:
        _, _, body = post(server.url, "/v1/messages", ASKED)
        status, headers, error = post(server.url, "/v1/messages", ASKED)
    assert json.loads(body)["content"] == [
        {"type": "text", "text": "Hi"},
        {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    assert status == 404 and headers["x-should-retry"] == "false"
    assert json.loads(error) == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "no such model"},
    }


def test_rate_limit_tells_clients_when_to_retry() -> None:
    with ScriptedModelServer([ScriptedTurn(status=429, retry_after=0.25)]) as server:
        status, headers, body = post(server.url, "/v1/chat/completions", ASKED)
    assert status == 429 and headers["retry-after-ms"] == "250"
    assert json.loads(body)["error"]["code"] == "rate_limit_exceeded"


def test_requests_are_recorded_and_served_as_json() -> None:
    with ScriptedModelServer(["one"], models=["m1", "m2"]) as server:
        post(server.url, "/v1/chat/completions", ASKED, {"Authorization": "Bearer k"})
        status, _, body = post(server.url, "/v1/chat/completions", ASKED)
        models = get(server.url, "/v1/models")
        recorded = get(server.url, "/_requests")
    assert status == 400 and "no turn left for request #2 (1 played)" in body
    assert [m["id"] for m in models["data"]] == ["m1", "m2"]
    assert [(r["method"], r["path"], r["status"]) for r in recorded] == [
        ("POST", "/v1/chat/completions", 200),
        ("POST", "/v1/chat/completions", 400),
        ("GET", "/v1/models", 200),
    ]
    assert recorded[0]["body"] == ASKED and recorded[0]["headers"]["authorization"] == "Bearer k"
    assert [r.to_json() for r in server.requests] == recorded


def test_unknown_routes_and_a_failing_responder_are_reported() -> None:
    def broken(request: object) -> str:
        raise KeyError("oops")

    with ScriptedModelServer(broken) as server:
        missing, _, _ = post(server.url, "/v1/completions", ASKED)
        status, headers, body = post(server.url, "/v1/chat/completions", ASKED)
    assert missing == 404
    assert status == 500 and headers["x-should-retry"] == "false" and "KeyError('oops')" in body


def test_script_files_and_their_spellings(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    "Hello!",
                    {"text": ["a", "b"], "toolCalls": [{"name": "f", "arguments": {"x": 1}, "id": "c9"}]},
                    {"status": 429, "retryAfter": 0.5},
                    {"tool_calls": [{"name": "g", "arguments": "{broken"}], "stop_reason": "length"},
                ]
            }
        )
    )
    turns = load_script(script)
    assert turns[0] == ScriptedTurn(text="Hello!")
    assert turns[1].pieces == ["a", "b"] and turns[1].tool_calls == (ScriptedToolCall("f", {"x": 1}, "c9"),)
    assert (turns[2].status, turns[2].retry_after) == (429, 0.5)
    assert turns[3].tool_calls[0].arguments_json == "{broken" and turns[3].stop_reason == "length"
    script.write_text('[{"txt": "typo"}]')
    with pytest.raises(ValueError, match="unknown turn keys: txt"):
        load_script(script)


def test_text_is_streamed_word_by_word() -> None:
    assert ScriptedTurn(text="It is  18 C.\n").pieces == ["It ", "is  ", "18 ", "C.\n"]
    assert ScriptedTurn(text="").pieces == []
    assert count_tokens("abcde") == 2 and count_tokens({"a": 1}) == count_tokens('{"a":1}')


def test_cli_prints_the_base_url_and_serves_the_script(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text('["from the CLI"]')
    proc = subprocess.Popen(
        [sys.executable, "-m", "codemode_kernel.llm.scripted", "--script", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        _, _, body = post(base_url, "/v1/chat/completions", ASKED)
        assert json.loads(body)["choices"][0]["message"]["content"] == "from the CLI"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_cli_reports_a_bad_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "turns.json"
    script.write_text('{"turns": 3}')
    assert main(["--script", str(script)]) == 2
    assert "expected a list of turns" in capsys.readouterr().err


DOCS = Path(__file__).resolve().parents[2] / "docs" / "llm.md"


def json_block_after(heading: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    return text.split(heading, 1)[1].split("```json\n", 1)[1].split("```", 1)[0]


def test_the_documented_script_loads(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json_block_after("### The script format"))
    turns = load_script(script)
    assert [t.status for t in turns] == [None, None, 429, None, None, 404]
    assert turns[4].tool_calls[0].arguments_json == '{"city": "Par'


def test_the_documented_models_open(tmp_path: Path) -> None:
    from codemode_kernel.config import load_config
    from codemode_kernel.llm import open_model

    path = tmp_path / "codemode.json"
    path.write_text(json_block_after("## Configuring models"))
    config = load_config(path)
    opened = {m.ref: open_model(config, m.ref) for m in config.models}
    assert {ref: model.provider for ref, model in opened.items()} == {
        "gpt": "openai",
        "sonnet": "anthropic",
        "ollama": "openai",
        "vllm": "openai",
        "llamacpp": "openai",
        "lmstudio": "openai",
        "openrouter": "openai",
    }
