"""Result shapes inferred from real third-party servers' results (codemode_kernel/shapes.py).

PyPI mcp-server-git publishes no outputSchema: after one call a tool's stub, signature and docstring show
the result type its results had, marked inferred, and a new Toolbox in the workspace starts with it.
npm server-memory and server-filesystem (2026.8.31) publish outputSchemas: their results never replace them.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import AgentOptions, build_toolset
from codemode_kernel.calllog import CallRecord
from codemode_kernel.config import CodeModeSettings, load_config, resolve_code_mode
from codemode_kernel.core.results import decode_result
from codemode_kernel.shapes import ShapeStore
from codemode_kernel.typegen.infer import InferredShape
from tests.conftest import NODE_BIN, require_executable, run_cli

pytestmark = pytest.mark.integration


def make_repo(path: Path) -> Path:
    """A real git repository with one commit and one untracked file."""
    path.mkdir()
    git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=path, check=True)
    (path / "README.md").write_text("# demo\n")
    subprocess.run([*git, "add", "README.md"], cwd=path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], cwd=path, check=True)
    (path / "notes.txt").write_text("untracked\n")
    return path


def write_config(workspace: Path) -> Path:
    git_bin = require_executable(Path(sys.executable).parent / "mcp-server-git")
    servers = {
        "git": {"command": git_bin, "args": ["--repository", str(workspace / "repo")]},
        "memory": {
            "command": require_executable(NODE_BIN / "mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": str(workspace / "memory.jsonl")},
        },
        "filesystem": {
            "command": require_executable(NODE_BIN / "mcp-server-filesystem"),
            "args": [str(workspace)],
        },
    }
    path = workspace / "codemode.json"
    path.write_text(json.dumps({"mcpServers": servers, "workspace": str(workspace)}))
    return path


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    make_repo(tmp_path / "repo")
    write_config(tmp_path)
    return tmp_path


@pytest.fixture()
def toolbox(workspace: Path) -> Iterator[Toolbox]:
    with Toolbox(load_config(workspace / "codemode.json")) as tb:
        tb.wait_for_servers()
        yield tb


def stub_of(toolbox: Toolbox, function: str) -> str:
    """The stub's lines from ``def function(`` to the end of its docstring."""
    stubs = toolbox.stubs()
    start = stubs.index(f"def {function}(")
    return stubs[start : stubs.index("...", start)]


def test_git_tools_are_typed_from_one_call_each_and_the_result_is_unchanged(toolbox: Toolbox) -> None:
    repo = str(toolbox.config.workspace / "repo")
    assert "-> Any:" in stub_of(toolbox, "git_status")
    status = toolbox.tools.git_status(repo_path=repo)
    log = toolbox.tools.git_log(repo_path=repo)
    assert isinstance(status, str) and "notes.txt" in status
    assert "first commit" in log
    toolbox.refresh()
    assert "-> str:  # result inferred from 1 call" in stub_of(toolbox, "git_status")
    assert "-> str:  # result inferred from 1 call" in stub_of(toolbox, "git_log")
    assert "-> Any:" in stub_of(toolbox, "git_diff")  # never called: nothing known
    assert "inferred was read from the results seen so far" in toolbox.stubs()
    function = toolbox.tools.git_status
    assert inspect.signature(function).return_annotation is str
    assert "str, inferred from 1 call (no outputSchema)" in (function.__doc__ or "")
    # The call itself is as before: same value, same type.
    again = function(repo_path=repo)
    assert again == status and type(again) is str
    stored = json.loads((toolbox.config.workspace / ".codemode" / "shapes.json").read_text())
    by_tool = {(e["server"], e["tool"]): e for e in stored["tools"]}
    assert by_tool[("git", "git_status")]["schema"] == {"type": "string"}
    assert by_tool[("git", "git_log")]["calls"] == 1


def test_published_output_schemas_of_memory_and_filesystem_are_kept(toolbox: Toolbox) -> None:
    before = {name: stub_of(toolbox, name) for name in ("read_graph", "create_entities", "list_directory")}
    toolbox.tools.create_entities(entities=[{"name": "Oslo", "entityType": "city", "observations": ["cold"]}])
    graph = toolbox.tools.read_graph()
    listing = toolbox.tools.list_directory(path=str(toolbox.config.workspace))
    assert graph.entities[0].name == "Oslo" and "repo" in listing.content
    toolbox.refresh()
    assert {name: stub_of(toolbox, name) for name in before} == before
    assert "inferred" not in "".join(before.values())
    assert toolbox.shapes.get("memory", "read_graph") is None
    assert toolbox.shapes.get("filesystem", "list_directory") is None


def test_a_new_toolbox_in_the_workspace_starts_with_the_shapes(workspace: Path) -> None:
    config = load_config(workspace / "codemode.json")
    with Toolbox(config) as first:
        first.wait_for_servers()
        first.tools.git_status(repo_path=str(workspace / "repo"))
        first.tools.git_status(repo_path=str(workspace / "repo"))
    with Toolbox(config) as second:
        second.wait_for_servers()
        assert "-> str:  # result inferred from 2 calls" in stub_of(second, "git_status")
        toolset = build_toolset(second.models, second.hub.tool_specs(), CodeModeSettings(), AgentOptions())
        description = json.dumps([d.description for d in toolset.definitions])
        assert "git_status(repo_path: str) -> str:  # result inferred from 2 calls" in description


def test_the_agent_description_follows_the_shapes_without_a_rebuild_per_call(toolbox: Toolbox) -> None:
    settings = resolve_code_mode(toolbox.config, None)
    models = toolbox.models_for(settings)
    assert toolbox.models_for(settings) is models  # nothing changed: nothing rebuilt
    toolbox.tools.git_log(repo_path=str(toolbox.config.workspace / "repo"))
    toolbox.shapes.settle()
    changed = toolbox.models_for(settings)
    assert changed is not models
    assert next(m for m in changed if m.function_name == "git_log").inferred_calls == 1
    toolbox.tools.git_log(repo_path=str(toolbox.config.workspace / "repo"))  # same shape again
    toolbox.shapes.settle()
    assert toolbox.models_for(settings) is changed


def test_a_hostile_result_neither_fails_nor_stalls_the_call(tmp_path: Path) -> None:
    """Results built to hurt inference: 100,000 keys, 900 levels deep, a huge text; each is read in time.

    (900 levels: about as deep as ``json.loads`` goes; decoding one once failed with RecursionError.)
    """
    store = ShapeStore(tmp_path / "shapes.json")
    wide = {"content": [{"type": "text", "text": json.dumps({f"k{i}": i for i in range(10_000)})}]}
    wider = {"content": [{"type": "text", "text": json.dumps({f"k{i}": i for i in range(100_000)})}]}
    deep_value: Any = 1
    for _ in range(900):
        deep_value = {"a": deep_value}
    deep = {"content": [{"type": "text", "text": json.dumps(deep_value)}]}
    huge = {"content": [{"type": "text", "text": "[" + ",".join(["1"] * 200_000) + "]"}]}
    for name, result in (("wide", wide), ("wider", wider), ("deep", deep), ("huge", huge)):
        began = time.perf_counter()
        store.record("hostile", name, result)
        assert time.perf_counter() - began < 1.0, name
        assert decode_result(result, tool=name) is not None  # what the call returns is untouched
    assert store.get("hostile", "wide").schema == {"type": "object"}  # type: ignore[union-attr]
    assert store.get("hostile", "huge") is None  # over MAX_RESULT_CHARS: skipped
    assert store.get("hostile", "wider") is None
    assert len(json.dumps(store.get("hostile", "deep").schema)) < 500  # type: ignore[union-attr]
    store.close()
    assert ShapeStore(tmp_path / "shapes.json").get("hostile", "deep") is not None


_BAD_TYPE_ENTRY = {"server": "git", "tool": "git_log", "calls": 1, "schema": {"type": ["string", ["x"]]}}
DAMAGED_FILES = {
    "truncated": '{"format": 1, "tools": [{"server": "git"',
    "a list inside type": json.dumps({"format": 1, "tools": [_BAD_TYPE_ENTRY]}),
    "nested 200,000 deep": '{"format": 1, "tools": ' + "[" * 200_000 + "]" * 200_000 + "}",
}


def ok_call(tool: str, value: Any) -> CallRecord:
    """A finished call's record, as the call log gives it to the store."""
    result = {"content": [{"type": "text", "text": json.dumps(value)}]}
    return CallRecord(id=tool, server="srv", tool=tool, arguments={}, started=0.0, status="ok", result=result)


@pytest.mark.parametrize("damage", DAMAGED_FILES)
def test_a_damaged_shapes_file_is_reported_ignored_and_replaced(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "shapes.json"
    path.write_text(DAMAGED_FILES[damage])
    store = ShapeStore(path)  # never raises: the file is reported and ignored
    assert store.problem is not None and str(path) in store.problem and str(path) in caplog.text
    assert store.shapes() == {}
    store.observe(ok_call("list", [{"id": 1}]))
    assert store.settle()
    store.close()
    assert store.problem is None  # a good file replaced the damaged one
    again = ShapeStore(path)
    assert again.problem is None and again.get("srv", "list") is not None


def test_damaged_entries_are_skipped_and_the_good_ones_kept(tmp_path: Path) -> None:
    path = tmp_path / "shapes.json"
    good = {"server": "srv", "tool": "ok", "calls": 4, "schema": {"type": "string"}}
    deep_type: Any = ["x"]
    for _ in range(50):
        deep_type = [deep_type]
    entries = ["x", _BAD_TYPE_ENTRY, {**_BAD_TYPE_ENTRY, "schema": {"anyOf": [{"type": [{"a": 1}]}]}}, good]
    entries.append({**_BAD_TYPE_ENTRY, "schema": {"type": deep_type}})
    path.write_text(json.dumps({"format": 1, "tools": entries}))
    store = ShapeStore(path)
    assert store.problem == f"{path}: 4 entries ignored (not a shape)"
    assert store.get("srv", "ok") == InferredShape({"type": "string"}, 4)


def test_a_file_damaged_while_the_store_runs_does_not_stop_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The shapes thread reads the file at each write: a bad file then is reported, not fatal."""
    path = tmp_path / "shapes.json"
    store = ShapeStore(path)  # no file yet: all is well
    path.write_text(json.dumps({"format": 1, "tools": [_BAD_TYPE_ENTRY]}))
    store.observe(ok_call("first", "text"))  # a new shape: written at once, reading the damaged file
    assert store.settle()
    store.observe(ok_call("second", [1, 2]))  # the thread goes on
    assert store.settle()
    assert store.get("srv", "second") == InferredShape({"type": "array", "items": {"type": "integer"}})
    store.close()
    assert str(path) in caplog.text and "1 entry ignored" in caplog.text
    written = json.loads(path.read_text())
    assert {e["tool"] for e in written["tools"]} == {"first", "second"}
    assert store.problem is None  # the good write replaced the damaged file


def test_a_call_ending_while_the_store_closes_is_not_left_waiting(tmp_path: Path) -> None:
    """``close()`` between ``observe``'s checks and its queueing: the result is dropped, never stranded."""
    store: ShapeStore

    def accept(server: str, tool: str) -> bool:
        if tool == "late":
            store.close()  # the Toolbox closes on another thread just as this call ends
        return True

    store = ShapeStore(tmp_path / "shapes.json", accept=accept)
    store.observe(ok_call("early", 1))
    assert store.settle()
    store.observe(ok_call("late", 2))
    assert store.settle(0.5)
    assert store.get("srv", "late") is None


@pytest.mark.parametrize("damage", ["truncated", "a list inside type"])
def test_a_corrupt_shapes_file_is_reported_and_ignored(
    workspace: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    shapes = workspace / ".codemode" / "shapes.json"
    shapes.parent.mkdir()
    shapes.write_text(DAMAGED_FILES[damage])
    with Toolbox(load_config(workspace / "codemode.json")) as tb:
        tb.wait_for_servers()
        assert tb.shapes.problem is not None and str(shapes) in tb.shapes.problem
        assert str(shapes) in caplog.text
        assert tb.tools.git_status(repo_path=str(workspace / "repo"))
        tb.refresh()
        assert "inferred from 1 call" in stub_of(tb, "git_status")
    assert json.loads(shapes.read_text())["tools"][0]["tool"] == "git_status"  # replaced by a good file
    assert tb.shapes.problem is None  # and the problem with it


def test_codemode_tools_infer_lists_what_is_known(tmp_path: Path) -> None:
    """``codemode tools --tools-json FILE --infer``: the workspace's shapes on saved tools, offline."""
    store = ShapeStore.for_workspace(tmp_path)
    rows = [{"id": 1, "title": "Fix it", "labels": ["bug"]}, {"id": 2, "title": "Docs", "assignee": None}]
    store.record("tracker", "list_issues", {"content": [{"type": "text", "text": json.dumps(rows)}]})
    store.close()
    saved = tmp_path / "tracker.json"
    tools = [
        {"name": "list_issues", "inputSchema": {"type": "object"}},
        {"name": "close_issue", "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        {"name": "count", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}},
    ]
    saved.write_text(json.dumps({"tools": tools}))
    done = run_cli("tools", "--tools-json", str(saved), "--infer", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "#   tracker/list_issues: inferred from 1 call" in out
    assert "#   tracker/close_issue: no result seen yet (-> Any)" in out
    assert "#   tracker/count: has an outputSchema (nothing inferred)" in out
    assert "def list_issues() -> list[ListIssuesOutputItem]:  # result inferred from 1 call" in out
    assert '"""Inferred from 1 call: fields seen in results (no outputSchema)."""' in out
    assert "    assignee: NotRequired[None]" in out and "    labels: NotRequired[list[str]]" in out
    assert "def close_issue" not in out  # only the tools with a shape
    compile(out, "stubs", "exec")  # the stubs are valid Python
    assert "--infer" in run_cli("tools", "--help", cwd=tmp_path).stdout


def test_the_next_program_in_the_same_executor_sees_the_inferred_shape(toolbox: Toolbox) -> None:
    """Each run brings the shapes learned so far: the run after the first call knows the result type."""
    from codemode_kernel.executor import Executor

    repo = str(toolbox.config.workspace / "repo")
    with Executor(toolbox) as executor:
        before = executor.run('tool_schema("git_status").get("inferred_output")')
        assert before.status == "ok" and before.value == {"kind": "json", "data": None}
        first = executor.run(f"git_status(repo_path={repo!r})")
        assert first.status == "ok", first.error
        toolbox.refresh()
        after = executor.run('tool_schema("git_status")["inferred_output"]')
    assert after.status == "ok", after.error
    assert after.value == {"kind": "json", "data": {"calls": 1, "schema": {"type": "string"}}}


def test_a_session_keeps_its_globals_when_a_shape_is_learned(toolbox: Toolbox) -> None:
    """The first result of a tool without an outputSchema changes its stub, not a session's worker."""
    from codemode_kernel.executor import Executor

    repo = str(toolbox.config.workspace / "repo")
    with Executor(toolbox) as executor:
        first = executor.run(f"kept = 42\nx = git_status(repo_path={repo!r})", session="s")
        assert first.status == "ok", first.error
        toolbox.refresh()
        assert toolbox.shapes.get("git", "git_status") is not None
        second = executor.run("kept", session="s")
    assert second.status == "ok", second.error
    assert second.value == {"kind": "json", "data": 42}
