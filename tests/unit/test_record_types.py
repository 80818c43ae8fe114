"""The run's records have one definition (core/records.py): the Python objects, the trace, serve's schema,
and the JupyterLab extension's types and fixtures (written by scripts/record_types.py) all follow it."""

from __future__ import annotations

import importlib.util
import json
import typing
from dataclasses import fields
from pathlib import Path
from types import ModuleType

import pytest

from codemode_kernel.calllog import CallRecord
from codemode_kernel.core import records
from codemode_kernel.executor import ExecutionResult
from codemode_kernel.views.display import TRACE_MIME, result_bundle

ROOT = Path(__file__).resolve().parents[2]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("record_types", ROOT / "scripts" / "record_types.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def keys(cls: type) -> set[str]:
    return set(typing.get_type_hints(cls))


def test_the_extension_types_and_fixtures_are_written_from_the_records() -> None:
    script = load_script()
    assert script.main(["--check"]) == 0, "run python scripts/record_types.py"
    generated = (ROOT / "labextension" / "src" / "records.generated.ts").read_text()
    for cls in records.RECORD_TYPES:
        assert f"export interface {cls.__name__} " in generated, cls.__name__
        for key in keys(cls):  # each key is declared in the class or one it extends
            assert f"  {key}:" in generated or f"  {key}?:" in generated, (cls.__name__, key)


def test_the_script_says_when_a_generated_file_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = load_script()
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "old_notebook_output.json").write_text("{}")
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setattr(script, "TS_FILE", tmp_path / "records.generated.ts")
    monkeypatch.setattr(script, "FIXTURE_DIR", fixtures)
    assert script.main(["--check"]) == 1
    assert script.main([]) == 0
    assert script.main(["--check"]) == 0
    assert not (fixtures / "old_notebook_output.json").exists()  # nothing makes it: removed
    quickstart = json.loads((fixtures / "quickstart.json").read_text())
    assert [call["tool"] for call in quickstart["data"]["tool_calls"]][:2] == ["read_file", "get_weather"]
    (tmp_path / "records.generated.ts").write_text("export interface Stale {}\n")
    assert script.main(["--check"]) == 1


def test_the_python_objects_serialise_to_exactly_their_records() -> None:
    result_fields = {f.name for f in fields(ExecutionResult)}
    assert result_fields == keys(records.ExecutionRecord)
    assert set(ExecutionResult("ok", "e1").to_dict()) == set(records.ExecutionRecord.__required_keys__)
    # nodes only from a Ray cluster, notes only from a program that sent them
    every_field = ExecutionResult(
        "ok",
        "e1",
        nodes=[records.NodeAttempt(node="ab12", outcome="finished")],
        notes=[records.NoteRecord(message="halfway", data={}, at_ms=1.0)],
        notes_dropped=3,
    )
    assert set(every_field.to_dict()) == keys(records.ExecutionRecord)
    assert {f.name for f in fields(CallRecord)} == keys(records.ToolCallRecord)


def test_a_trace_splits_the_record_into_its_data_and_its_metadata() -> None:
    from scripts.record_fixtures import FIXTURES

    fixture = FIXTURES["artifact_result"]()
    data, metadata = result_bundle(fixture.result)
    trace, volatile = data[TRACE_MIME], metadata[TRACE_MIME]
    whole = fixture.result.to_dict()
    assert set(trace) | set(volatile) == set(whole) and set(trace) <= keys(records.TraceRecord)
    assert set(volatile) == set(records.TraceMetadata.__required_keys__)  # nodes: only from a Ray cluster
    moved = FIXTURES["moved"]().result
    moved_data, moved_metadata = result_bundle(moved)
    assert set(moved_data[TRACE_MIME]) | set(moved_metadata[TRACE_MIME]) == set(moved.to_dict())
    assert set(moved_metadata[TRACE_MIME]) == keys(records.TraceMetadata)
    (call,), (times,) = trace["tool_calls"], volatile["tool_calls"]
    assert {**call, **times} == {**whole["tool_calls"][0], "result_file": None}
    assert keys(records.TraceCall) | keys(records.CallTimes) == keys(records.ToolCallRecord) | {"result_file"}
    assert {**trace["artifacts"][0], **volatile["artifacts"][0]} == whole["artifacts"][0]
    assert keys(records.TraceArtifact) | keys(records.ArtifactIds) == keys(records.ArtifactMetadata)
