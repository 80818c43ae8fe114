"""The pure parts behind the Code Mode sidebar: run files, kernel ids, how an artifact is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode_kernel.artifacts import Artifact
from codemode_kernel.kernel.run_files import find_run, history_dir, run_files, run_summary, write_run
from codemode_kernel.kernel.state_file import kernel_id_for, state_file_name
from codemode_kernel.labserver.artifacts import content_disposition, file_name, response_type
from codemode_kernel.labserver.history import HistoryIndex
from codemode_kernel.labserver.states import KernelStates, valid_kernel_id

KERNEL = "5f0c2a9e-1b7d-4c1e-9d2a-0b8e7f6a5c4d"


def _artifact(name: str | None, mime: str) -> Artifact:
    return Artifact("0123456789ab", name, mime, "", 3, "2026-01-01T00:00:00+00:00", "0" * 64, None)


def test_only_the_newest_runs_are_kept_and_listed_newest_first(tmp_path: Path) -> None:
    for number in range(1, 6):
        write_run(tmp_path, {"id": f"run{number}", "kind": "codemode", "number": number}, keep=3)
    files = run_files(history_dir(tmp_path))
    assert [json.loads(p.read_text())["id"] for p in files] == ["run5", "run4", "run3"]
    assert find_run(tmp_path, "run4") == files[1] and find_run(tmp_path, "run1") is None
    assert [run["id"] for run in HistoryIndex().runs(tmp_path)] == ["run5", "run4", "run3"]
    assert not [p for p in history_dir(tmp_path).iterdir() if not p.name.endswith(".json")]  # no temp left


@pytest.mark.parametrize("run_id", ["", "../x", "a/b", "x.json", "é"])
def test_a_run_id_is_never_a_path(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(ValueError, match="a run id is letters, digits"):
        write_run(tmp_path, {"id": run_id})
    assert find_run(tmp_path, run_id) is None


def test_a_summary_leaves_out_the_bundle_and_shortens_the_code() -> None:
    record = {"id": "r", "kind": "codemode", "code": "x" * 5000, "bundle": {"data": {}}, "status": "ok"}
    summary = run_summary(record)
    assert summary == {"id": "r", "kind": "codemode", "status": "ok", "code": "x" * 2000}


def test_the_kernel_id_is_read_from_jupyter_servers_connection_file_name() -> None:
    assert kernel_id_for(f"/run/jupyter/kernel-{KERNEL}.json") == KERNEL
    assert kernel_id_for("/tmp/tmpab12cd.json") == "tmpab12cd"
    assert state_file_name(KERNEL) == f"codemode-{KERNEL}.json"


@pytest.mark.parametrize(
    ("kernel_id", "valid"),
    [(KERNEL, True), ("x/../../y-a-b-c-d", False), ("..", False), ("a-b-c-d", False), (KERNEL + "\n", False)],
)
def test_kernel_ids_have_the_shape_jupyter_server_gives_them(kernel_id: str, valid: bool) -> None:
    assert valid_kernel_id(kernel_id) is valid


def test_the_last_state_read_stands_in_while_the_file_is_gone(tmp_path: Path) -> None:
    states = KernelStates(lambda kernel_id: tmp_path)
    path = tmp_path / state_file_name(KERNEL)
    state = {"version": 1, "kernel_id": KERNEL, "workspace": str(tmp_path), "servers": [], "tools": []}
    path.write_text(json.dumps(state))
    assert states.current(KERNEL) == state
    path.unlink()
    assert states.current(KERNEL) is None and states.workspace(KERNEL) == tmp_path
    path.write_text(json.dumps({**state, "kernel_id": "another"}))  # not this kernel's: not a state
    assert states.current(KERNEL) is None
    with pytest.raises(ValueError, match="not a kernel id"):
        states.current("../etc")


@pytest.mark.parametrize(
    ("stored", "sent"),
    [
        ("image/png", "image/png"),
        ("application/json", "application/json; charset=utf-8"),
        ("text/html", "application/octet-stream"),
        ("image/svg+xml", "application/octet-stream"),
        ("text/javascript", "application/octet-stream"),
        ("application/xhtml+xml", "application/octet-stream"),
        ("TEXT/PLAIN", "text/plain; charset=utf-8"),
    ],
)
def test_only_types_that_cannot_run_are_sent_as_themselves(stored: str, sent: str) -> None:
    assert response_type(stored) == sent


def test_file_names_are_harmless_and_end_in_the_types_extension() -> None:
    assert file_name(_artifact("report", "text/csv")) == "report.csv"
    assert file_name(_artifact("photo.JPG", "image/jpeg")) == "photo.JPG"
    assert file_name(_artifact("../../etc/passwd", "text/plain")) == "_.._etc_passwd.txt"
    assert file_name(_artifact(None, "application/x-unknown")) == "artifact-0123456789ab.bin"
    html = _artifact("page\r\nSet-Cookie: x", "text/html")
    assert (
        content_disposition(html, download=False)
        == "attachment; filename*=UTF-8''page_Set-Cookie%3A%20x.html"
    )
    shown = content_disposition(_artifact("città", "image/png"), download=False)
    assert shown == "inline; filename*=UTF-8''citt%C3%A0.png"
