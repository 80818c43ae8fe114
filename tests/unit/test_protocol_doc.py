"""The wire format's types: docs/protocol.md is written from them, and they hang together.

Every frame class is in its direction's union and its doc table, its ``type`` tag (with ``ok`` or ``op``)
names exactly one class, and the kernel's check of a worker's frame keeps what the kernel always did.
"""

from __future__ import annotations

import importlib.util
import json
import typing
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pytest

from codemode_kernel.core import records
from codemode_kernel.core.errors import ProtocolError
from codemode_kernel.worker import protocol
from codemode_kernel.worker.protocol import check_worker_frame, check_zygote_event
from tests.unit.frame_check import check, frame_class

ROOT = Path(__file__).resolve().parents[2]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("protocol_doc", ROOT / "scripts" / "protocol_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_doc_tables_are_written_from_the_types() -> None:
    script = load_script()
    doc = (ROOT / "docs" / "protocol.md").read_text()
    assert script.rewrite(doc) == doc, "docs/protocol.md is stale: run python scripts/protocol_doc.py"
    for cls in (
        *protocol.KERNEL_FRAMES,
        *protocol.WORKER_FRAMES,
        *protocol.CONTROL_MESSAGES,
        *protocol.RECORDS,
    ):
        assert f"({cls.__name__})" in doc or f"`{cls.__name__}`" in doc, cls.__name__
        for key in typing.get_type_hints(cls):
            assert f"`{key}`" in doc or f"`{key}?`" in doc, (cls.__name__, key)


def test_the_script_says_when_the_doc_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = load_script()
    stale = tmp_path / "protocol.md"
    stale.write_text(f"# doc\n\n{script.BEGIN}\n| `run` | old |\n{script.END}\n\nafter\n")
    monkeypatch.setattr(script, "DOC", stale)
    monkeypatch.setattr(script, "ROOT", tmp_path)
    assert script.main(["--check"]) == 1
    assert script.main([]) == 0
    assert script.main(["--check"]) == 0
    text = stale.read_text()
    assert text.startswith("# doc\n\n") and text.endswith("\n\nafter\n") and "| old |" not in text
    assert "(ToolCallFrame)" in text


def members(union: Any) -> set[Any]:
    return set(typing.get_args(union))


def test_each_direction_lists_exactly_its_union() -> None:
    assert set(protocol.KERNEL_FRAMES) == members(protocol.KernelFrame)
    assert set(protocol.WORKER_FRAMES) == members(protocol.WorkerFrame)
    control = members(protocol.ZygoteCommand) | members(protocol.ZygoteEvent) | {protocol.ZygoteSetup}
    assert set(protocol.CONTROL_MESSAGES) == control
    assert members(records.ValueEnvelope) <= set(protocol.RECORDS)


@pytest.mark.parametrize(
    "union", [protocol.KernelFrame, protocol.WorkerFrame, protocol.ZygoteCommand, protocol.ZygoteEvent]
)
def test_a_frame_is_told_apart_by_its_literal_keys(union: Any) -> None:
    seen = set()
    for cls in typing.get_args(union):
        hints = typing.get_type_hints(cls)
        assert typing.get_origin(hints["type"]) is Literal, cls.__name__
        literals = tuple(
            sorted((k, typing.get_args(h)) for k, h in hints.items() if typing.get_origin(h) is Literal)
        )
        assert literals not in seen, cls.__name__
        seen.add(literals)


def test_every_envelope_kind_is_a_record_with_its_kind() -> None:
    kinds = {
        typing.get_args(typing.get_type_hints(cls)["kind"])[0]
        for cls in typing.get_args(records.ValueEnvelope)
    }
    assert kinds == {"json", "text", "bytes", "image", "table", "repr"}


def test_no_wire_type_hides_its_optional_keys() -> None:
    # Without `from __future__ import annotations` NotRequired is seen when the class is made.
    assert protocol.ToolCallFrame.__optional_keys__ == {"seq", "progress"}
    assert protocol.ExitedMessage.__optional_keys__ == {"code", "signal"}
    assert records.ErrorRecord.__required_keys__ == {"type", "message"}


# --- the kernel's check of a worker's frames ------------------------------------------------------


def test_output_and_tool_calls_are_made_what_the_kernel_always_made_of_them() -> None:
    assert check_worker_frame({"type": "stdout", "data": 12}) == {"type": "stdout", "data": "12"}
    assert check_worker_frame({"type": "stderr"}) == {"type": "stderr", "data": ""}
    call = check_worker_frame({"type": "tool_call", "id": 3, "server": 1, "arguments": [1], "seq": True})
    assert call == {"type": "tool_call", "id": 3, "server": "1", "tool": "", "arguments": {}}
    numbered = {"type": "tool_call", "id": 4, "server": "s", "tool": "t", "arguments": {"a": 1}, "seq": 2}
    assert check_worker_frame(numbered) == numbered
    check(numbered, protocol.WorkerFrame)


def test_artifact_requests_keep_the_programs_fields_for_the_store_to_check() -> None:
    store = check_worker_frame(
        {"type": "artifact", "id": 1, "op": "store", "value": {"kind": "pickle"}, "name": 5}
    )
    assert store == {
        "type": "artifact",
        "id": 1,
        "op": "store",
        "value": {"kind": "pickle"},
        "name": 5,
        "description": None,
        "mime_type": None,
    }
    assert check_worker_frame({"type": "artifact", "id": 2, "op": "get", "key": {"$ne": None}})["key"] == {
        "$ne": None
    }
    assert check_worker_frame({"type": "artifact", "id": 3, "op": "list", "extra": 1}) == {
        "type": "artifact",
        "id": 3,
        "op": "list",
    }


def test_done_keeps_its_value_and_makes_an_unknown_status_an_error() -> None:
    value = {"kind": "json", "data": 42}
    assert check_worker_frame({"type": "done", "status": "ok", "value": value, "error": None}) == {
        "type": "done",
        "status": "ok",
        "value": value,
        "error": None,
    }
    odd = check_worker_frame({"type": "done", "status": "weird", "error": "boom"})
    assert odd == {
        "type": "done",
        "status": "error",
        "value": None,
        "error": {"type": "Error", "message": "boom"},
    }


def test_protections_are_checked_for_their_shape() -> None:
    report = {
        "in_force": ["pid_namespace"],
        "not_in_force": {"seccomp": "no"},
        "warnings": [],
        "turned_off": [],
    }
    assert check_worker_frame({"type": "protections", **report}) == {"type": "protections", **report}
    with pytest.raises(ProtocolError, match="in_force"):
        check_worker_frame({"type": "protections", **report, "in_force": "pid_namespace"})
    with pytest.raises(ProtocolError, match="not_in_force"):
        check_worker_frame({"type": "protections", **report, "not_in_force": {"seccomp": 1}})


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "run", "code": "1"},  # a kernel frame, not a worker's
        {"type": "tool_result", "id": 1, "ok": True, "result": {}},
        {"type": "nonsense"},
        {"type": "tool_call", "server": "s", "tool": "t", "arguments": {}},  # no id: its answer is lost
        {"type": "tool_call", "id": "1", "server": "s", "tool": "t", "arguments": {}},
        {"type": "artifact", "id": True, "op": "list"},
        {"type": "artifact", "id": 1, "op": "delete", "key": "x"},
        {"type": "done", "status": "ok", "value": [1, 2], "error": None},
        {"type": "done", "status": "ok", "value": {"data": 1}, "error": None},
    ],
)
def test_frames_no_worker_sends_are_protocol_errors(frame: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError):
        check_worker_frame(frame)


def test_the_zygotes_control_messages_are_checked() -> None:
    def event(message: dict[str, Any]) -> Any:
        return check_zygote_event(json.dumps(message).encode())

    assert event({"type": "ready", "pid": 7, "capabilities": {"landlock_abi": 3}})["pid"] == 7
    assert event({"type": "spawned", "id": 1, "pid": 9}) == {"type": "spawned", "id": 1, "pid": 9}
    assert event({"type": "exited", "pid": 9, "signal": 9}) == {"type": "exited", "pid": 9, "signal": 9}
    assert event({"type": "exited", "pid": 9, "code": 0}) == {"type": "exited", "pid": 9, "code": 0}
    assert event({"type": "failed", "id": None, "error": "bad spawn request"})["id"] is None
    for bad in (
        {"type": "spawned", "id": "1", "pid": 9},
        {"type": "exited", "pid": 9, "code": "0"},
        {"type": "ready", "pid": 7},
        {"type": "spawn", "id": 1, "policy": {}},
        [1],
    ):
        with pytest.raises(ProtocolError):
            event(bad)
    with pytest.raises(ValueError):
        check_zygote_event(b"not json")


def test_control_messages_travel_as_json_packets() -> None:
    spawn = protocol.SpawnMessage(type="spawn", id=1, policy={"network": False})
    assert json.loads(protocol.encode_control(spawn)) == spawn
    assert (
        frame_class(json.loads(protocol.encode_control(spawn)), protocol.ZygoteCommand)
        is protocol.SpawnMessage
    )
