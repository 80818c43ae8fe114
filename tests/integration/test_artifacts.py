"""Artifacts end to end: programs in real workers store and read them through the kernel's real store."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from codemode_kernel import ArtifactStore, Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor

pytestmark = pytest.mark.integration

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
BIG_LINE = "one line of a large file\n"
BIG_TEXT = BIG_LINE * 12_000  # 300 KB: far above the 64 KiB threshold


def write_config(path: Path, code_mode: dict[str, object] | None = None, *, weather: bool = True) -> Path:
    servers = {
        "workspace": {
            "command": sys.executable,
            "args": ["-m", "codemode_kernel.servers.workspace", "--root", str(path)],
        },
    }
    if weather:
        servers["weather"] = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    config: dict[str, object] = {"mcpServers": servers, "workspace": str(path)}
    if code_mode is not None:
        config["defaults"] = {"codeMode": code_mode}
    (path / "big.txt").write_text(BIG_TEXT)
    (path / "small.txt").write_text("x" * 3000)
    (path / "codemode.json").write_text(json.dumps(config))
    return path / "codemode.json"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ws")
    write_config(path)
    return path


@pytest.fixture(scope="module")
def executor(workspace: Path):
    with Toolbox(load_config(workspace / "codemode.json")) as tb, Executor(tb, grace=1.0) as ex:
        yield ex


STORE_PROGRAM = """
import pandas as pd
from tools import store_artifact as keep
summary = store_artifact({"cities": 3, "warmest": "Cairo"}, name="summary", description="the weather")
note = keep("plain text ✓", name="note")
image = store_artifact(png, name="chart")
table = store_artifact(pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [3.5, 19.0]}), name="temps")
back = get_artifact("summary")
frame = get_artifact(table)
names = [a["name"] for a in list_artifacts()]
[back, get_artifact(note), get_artifact("chart") == png, frame["temp"].tolist(), names[:4], summary]
"""


def test_a_program_stores_reads_and_lists_artifacts(executor: Executor) -> None:
    result = executor.run(STORE_PROGRAM, inputs={"png": PNG})
    assert result.status == "ok", result.error
    assert result.value is not None
    back, note, same_png, temps, names, summary_id = result.value["data"]
    assert back == {"cities": 3, "warmest": "Cairo"}
    assert note == "plain text ✓" and same_png is True and temps == [3.5, 19.0]
    assert names == ["temps", "chart", "note", "summary"]  # newest first
    # The execution's record lists what it stored, in order, tagged with its id.
    assert [(a["name"], a["type"]) for a in result.artifacts] == [
        ("summary", "application/json"),
        ("note", "text/plain"),
        ("chart", "image/png"),
        ("temps", "text/csv"),
    ]
    assert result.artifacts[0]["id"] == summary_id and result.artifacts[0]["description"] == "the weather"
    assert {a["execution_id"] for a in result.artifacts} == {result.execution_id}
    assert json.loads(json.dumps(result.to_dict()))["artifacts"] == result.artifacts
    # The kernel reads the same store.
    assert executor.artifacts.load("summary") == {"cities": 3, "warmest": "Cairo"}
    assert executor.artifacts.read_bytes("chart") == PNG
    pd.testing.assert_frame_equal(
        executor.artifacts.load("temps"), pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [3.5, 19.0]})
    )
    assert executor.artifacts.path == executor.toolbox.config.workspace / ".codemode" / "artifacts.db"


def test_a_run_that_stores_nothing_lists_nothing(executor: Executor) -> None:
    result = executor.run('get_weather(city="Oslo", unit="celsius").temperature')
    assert result.status == "ok" and result.artifacts == []


def test_the_worker_cannot_open_the_store_itself(executor: Executor) -> None:
    executor.run('store_artifact("x", name="exists")')
    result = executor.run('open(".codemode/artifacts.db", "rb").read(16)')
    assert result.status == "error" and result.error is not None
    assert result.error["type"] in ("PermissionError", "FileNotFoundError")


def test_an_unknown_artifact_is_an_error_at_the_calling_line(executor: Executor) -> None:
    executor.run('store_artifact([1, 2, 3], name="numbers")')
    result = executor.run('x = 1\ny = get_artifact("numbers")\nz = get_artifact("nunbers")\n"unreachable"')
    assert result.status == "error" and result.error is not None
    assert result.error["type"] == "ArtifactNotFoundError"
    assert result.error["line"] == 3 and result.error["source_line"] == 'z = get_artifact("nunbers")'
    assert "'nunbers'" in result.error["message"] and "did you mean 'numbers'?" in result.error["message"]
    caught = executor.run(
        'try:\n    get_artifact("nope")\nexcept ArtifactNotFoundError:\n    out = "caught"\nout'
    )
    assert caught.value == {"kind": "text", "text": "caught"}


def test_values_that_cannot_be_stored_fail_at_the_calling_line(executor: Executor) -> None:
    result = executor.run("ok = 1\nstore_artifact(object())")
    assert result.status == "error" and result.error is not None
    assert result.error["type"] == "TypeError" and result.error["line"] == 2
    assert "cannot store a object as an artifact" in result.error["message"]
    labelled = executor.run('store_artifact({"a": 1}, type="text/html")')
    assert labelled.error is not None and labelled.error["type"] == "ArtifactError"
    assert "pass str or bytes" in labelled.error["message"]
    html = executor.run('get_artifact(store_artifact("<b>hi</b>", type="text/html"))')
    assert html.value == {"kind": "text", "text": "<b>hi</b>"} and html.artifacts[0]["type"] == "text/html"


def test_a_large_tool_result_becomes_an_artifact_with_a_preview(executor: Executor) -> None:
    result = executor.run('text = read_file(path="big.txt")\nsmall = read_file(path="small.txt")\nlen(text)')
    assert result.status == "ok", result.error
    assert result.value == {"kind": "json", "data": len(BIG_TEXT)}  # the program got all of it
    big, small = result.tool_calls
    assert big["artifact_id"] is not None and small["artifact_id"] is None
    assert small["result"]["content"][0]["text"] == "x" * 3000  # small results stay in the record
    assert set(big["result"]) == {"preview", "bytes"}
    assert big["result"]["preview"].startswith(BIG_LINE * 3) and len(big["result"]["preview"]) <= 2001
    assert big["result"]["bytes"] > len(BIG_TEXT)
    assert len(json.dumps(result.to_dict())) < 20_000  # the record stays small
    [artifact] = result.artifacts
    assert artifact["id"] == big["artifact_id"] and artifact["name"] == "read_file result"
    assert artifact["type"] == "application/json" and artifact["execution_id"] == result.execution_id
    whole = executor.artifacts.load(big["artifact_id"])
    assert whole["content"][0]["text"] == BIG_TEXT
    record = executor.toolbox.hub.call_log.get(big["id"])
    assert record is not None and executor.toolbox.hub.call_log.full_result(record) == whole
    # A later program can read the stored result by its id.
    again = executor.run(f'get_artifact("{big["artifact_id"]}")["content"][0]["text"].count("\\n")')
    assert again.value == {"kind": "json", "data": 12_000}


def test_replay_gives_the_program_the_whole_of_a_stored_result(executor: Executor) -> None:
    program = 'len(read_file(path="big.txt"))'
    first = executor.run(program)
    replayed = executor.run(program, replay=first.tool_calls)
    assert replayed.status == "ok", replayed.error
    assert replayed.value == {"kind": "json", "data": len(BIG_TEXT)}


def test_artifacts_survive_a_new_toolbox_and_executor(tmp_path: Path) -> None:
    config = write_config(tmp_path, weather=False)
    with Toolbox(load_config(config)) as tb, Executor(tb) as ex:
        stored = ex.run('store_artifact({"kept": [1, 2]}, name="state")')
        assert stored.status == "ok", stored.error
    with Toolbox(load_config(config)) as tb, Executor(tb) as ex:
        result = ex.run('get_artifact("state")["kept"]')
        assert result.value == {"kind": "json", "data": [1, 2]}, result.error
    with ArtifactStore.for_workspace(tmp_path) as store:
        assert store.load("state") == {"kept": [1, 2]} and store.journal_mode == "wal"


def test_the_threshold_comes_from_the_config(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"artifactThresholdBytes": 1000}, weather=False)
    with Toolbox(load_config(config)) as tb, Executor(tb) as ex:
        assert ex.settings.artifact_threshold_bytes == 1000
        result = ex.run('len(read_file(path="small.txt"))')
        assert result.value == {"kind": "json", "data": 3000}
        assert result.tool_calls[0]["artifact_id"] is not None
    write_config(tmp_path, {"artifactThresholdBytes": None}, weather=False)
    with Toolbox(load_config(config)) as tb, Executor(tb) as ex:
        result = ex.run('len(read_file(path="big.txt"))')
        assert result.tool_calls[0]["artifact_id"] is None
        assert result.tool_calls[0]["result"]["content"][0]["text"] == BIG_TEXT


HOSTILE_REQUESTS = """
import gc
channel = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")
requests = [
    ("store", {"value": {"kind": "pickle", "data": "gASV"}}),
    ("store", {"value": {"kind": "repr", "repr": "x", "type": "os.system"}}),
    ("store", {"value": {"kind": "text", "text": "x"}, "name": 123}),
    ("store", {"value": {"kind": "text", "text": "x"}, "mime_type": "../../etc"}),
    ("get", {"key": {"$ne": None}}),
]
outcomes = []
for op, fields in requests:  # raw frames, as a program writing to its socket could send them
    frame = lambda request_id: {"type": "artifact", "id": request_id, "op": op,
                                "name": None, "description": None, "mime_type": None, **fields}
    try:
        channel.request(frame).result()
        outcomes.append("accepted")
    except Exception as exc:
        outcomes.append(type(exc).__name__)
outcomes
"""

UNKNOWN_ARTIFACT_OP = """
import gc
channel = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")
channel.request(lambda request_id: {"type": "artifact", "id": request_id, "op": "delete", "key": "x"})
import time; time.sleep(5)
"""


def test_malformed_artifact_requests_are_refused_and_the_kernel_carries_on(executor: Executor) -> None:
    before = len(executor.artifacts)
    result = executor.run(HOSTILE_REQUESTS)
    assert result.status == "ok", result.error
    assert result.value == {"kind": "json", "data": ["ArtifactError"] * 4 + ["ArtifactNotFoundError"]}
    assert len(executor.artifacts) == before and result.artifacts == []
    # A request no worker sends (an unknown op) breaks the channel: the run ends, nothing is stored.
    unknown = executor.run(UNKNOWN_ARTIFACT_OP)
    assert unknown.status == "crashed" and unknown.error is not None
    assert "unknown artifact request" in unknown.error["message"]
    assert len(executor.artifacts) == before
    assert executor.run("2 * 21").value == {"kind": "json", "data": 42}
