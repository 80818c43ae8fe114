"""The artifact store: values in and out by type, shared blobs, names, errors, journals, crashes, rivals."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from codemode_kernel import ArtifactError, ArtifactNotFoundError, ArtifactStore, CodeModeError
from codemode_kernel.artifacts.journal import filesystem_type
from tests.conftest import ROOT

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    with ArtifactStore.for_workspace(tmp_path) as s:
        yield s


@pytest.mark.parametrize(
    ("value", "mime"),
    [
        ("héllo\nworld", "text/plain"),
        (b"\x00\x01binary", "application/octet-stream"),
        (PNG, "image/png"),
        ({"rows": [1, 2.5, None], "ok": True, "name": "ü"}, "application/json"),
        ([{"a": 1}, {"a": 2}], "application/json"),
        (42, "application/json"),
        (None, "application/json"),
    ],
)
def test_values_come_back_as_they_went_in(store: ArtifactStore, value: object, mime: str) -> None:
    artifact = store.put(value, name="v", description="a test value")
    assert artifact.type == mime
    assert store.load(artifact.id) == value
    assert store.get(artifact.id) == artifact
    assert artifact.description == "a test value" and artifact.execution_id is None


def test_a_dataframe_is_stored_as_csv_and_comes_back_as_a_dataframe(store: ArtifactStore) -> None:
    frame = pd.DataFrame({"city": ["Oslo", "Lima"], "temp": [3.5, 19.0], "n": [1, 2]})
    artifact = store.put(frame, name="weather")
    assert artifact.type == "text/csv"
    assert store.read_bytes("weather").decode().splitlines()[0] == "city,temp,n"
    pd.testing.assert_frame_equal(store.load("weather"), frame)
    indexed = frame.set_index("city")
    back = store.load(store.put(indexed).id)
    assert list(back.columns) == ["city", "temp", "n"]  # a meaningful index is kept, as a column


def test_metadata_says_what_where_and_when(store: ArtifactStore) -> None:
    data = b"some bytes"
    artifact = store.put(data, name="blob", execution_id="exec123")
    assert len(artifact.id) == 12
    assert artifact.size == len(data)
    assert artifact.sha256 == hashlib.sha256(data).hexdigest()
    assert artifact.created.endswith("+00:00") and artifact.created.startswith("20")
    assert artifact.execution_id == "exec123"
    assert artifact.to_dict()["name"] == "blob"
    assert store.path == store.path.parent / "artifacts.db" and store.path.parent.name == ".codemode"


def test_an_explicit_type_labels_text_and_bytes_and_must_fit_other_values(store: ArtifactStore) -> None:
    csv = store.put("a,b\n1,2\n", type="text/csv")
    assert csv.type == "text/csv" and store.load(csv.id).equals(pd.DataFrame({"a": [1], "b": [2]}))
    assert store.put(b"<svg/>", type="Image/SVG+XML").type == "image/svg+xml"
    assert store.put({"a": 1}, type="application/json").type == "application/json"
    with pytest.raises(ArtifactError, match="stored as application/json, not text/plain"):
        store.put({"a": 1}, type="text/plain")
    with pytest.raises(ArtifactError, match="not a MIME type"):
        store.put("x", type="plain")


def test_values_that_cannot_be_stored_are_refused_with_what_is_supported(store: ArtifactStore) -> None:
    with pytest.raises(ArtifactError, match="cannot store a object; supported: str, bytes, JSON"):
        store.put(object())
    with pytest.raises(ArtifactError, match="as JSON"):
        store.put([float("nan")])
    with pytest.raises(ArtifactError, match="name"):
        store.put("x", name="")
    assert len(store) == 0


def test_identical_data_is_stored_once(store: ArtifactStore) -> None:
    first = store.put("same data " * 1000, name="one")
    second = store.put("same data " * 1000, name="two")
    assert first.id != second.id and first.sha256 == second.sha256
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 1
    store.delete("one")
    assert store.load("two") == "same data " * 1000  # the shared blob stays while something uses it
    store.delete("two")
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 0


def test_a_name_finds_the_newest_and_list_is_newest_first(store: ArtifactStore) -> None:
    old = store.put("v1", name="report")
    store.put("other", name="misc", execution_id="e1")
    new = store.put("v2", name="report", execution_id="e1")
    assert store.get("report") == new and store.load("report") == "v2"
    assert store.load(old.id) == "v1"  # an older version stays reachable by id
    assert [a.name for a in store.list()] == ["report", "misc", "report"]
    assert store.list(name="report") == [new, old]
    assert [a.name for a in store.list(execution_id="e1")] == ["report", "misc"]
    assert len(store.list(limit=1)) == 1


def test_a_missing_artifact_names_what_was_asked_and_what_exists(store: ArtifactStore) -> None:
    with pytest.raises(ArtifactNotFoundError, match="'nothing': there are no artifacts yet"):
        store.get("nothing")
    sales = store.put("x", name="sales")
    with pytest.raises(ArtifactNotFoundError) as caught:
        store.load("sale")
    message = str(caught.value)
    assert "'sale'" in message and "did you mean 'sales'?" in message
    assert f"'sales' ({sales.id}, text/plain)" in message
    assert caught.value.key == "sale"
    assert isinstance(caught.value, CodeModeError) and isinstance(caught.value, LookupError)
    with pytest.raises(ArtifactNotFoundError):
        store.delete("sale")


def test_the_store_survives_reopening(tmp_path: Path) -> None:
    with ArtifactStore.for_workspace(tmp_path) as first:
        artifact = first.put({"kept": True}, name="state")
    with ArtifactStore.for_workspace(tmp_path) as second:
        assert second.get("state") == artifact and second.load("state") == {"kept": True}


def test_wal_by_default(store: ArtifactStore) -> None:
    store.put("x")
    assert store.journal_mode == "wal"
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_rollback_journal_where_wal_is_refused(tmp_path: Path) -> None:
    # The unix-dotfile VFS has no shared memory, as on a network file system: SQLite answers "delete".
    with ArtifactStore(tmp_path / "a.db", vfs="unix-dotfile") as store:
        artifact = store.put({"n": 1}, name="n")
        assert store.journal_mode == "delete"
        assert store.load("n") == {"n": 1}
    with ArtifactStore(tmp_path / "a.db", journal="rollback") as again:
        assert again.journal_mode == "delete" and again.get("n") == artifact
    assert not (tmp_path / "a.db-wal").exists()


def test_a_network_file_system_gets_the_rollback_journal(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(
        f"/dev/sda1 / ext4 rw 0 0\nserver:/export {tmp_path} nfs4 rw 0 0\n"
        f"server:/other {tmp_path}-not-this nfs rw 0 0\n"
    )
    assert filesystem_type(tmp_path / "sub" / "file", str(mounts)) == "nfs4"
    assert filesystem_type(Path("/usr"), str(mounts)) == "ext4"
    from codemode_kernel.artifacts.journal import set_journal

    with sqlite3.connect(tmp_path / "n.db", isolation_level=None) as db:
        assert set_journal(db, tmp_path / "n.db", "auto", mounts=str(mounts)) == "delete"
        assert set_journal(db, tmp_path / "n.db", "wal", mounts=str(mounts)) == "wal"


def test_a_damaged_file_is_reported_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "artifacts.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ArtifactError, match="move it away"):
        ArtifactStore(path).put("x")


def test_threads_share_one_store(store: ArtifactStore) -> None:
    def write(n: int) -> None:
        for i in range(20):
            store.put(f"{n}-{i}", name=f"t{n}")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store) == 80
    assert {store.load(a.id) for a in store.list()} == {f"{n}-{i}" for n in range(4) for i in range(20)}


# --- real processes --------------------------------------------------------------------------------

WRITER = """
import os, sys, time
from codemode_kernel.artifacts import ArtifactStore
path, journal, count, go, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
store = ArtifactStore(path, journal=journal, busy_timeout=60)
print("ready", flush=True)
while go and not os.path.exists(go):
    time.sleep(0.001)
i = 0
while count < 0 or i < count:
    shared = i % 5 == 0  # every fifth artifact holds the same data in every process
    data = b"shared %d" % i if shared else os.urandom(size + (i % 7) * size // 2)
    artifact = store.put(data, name=f"p{os.getpid()}-{i}")
    print(artifact.id, artifact.sha256, flush=True)
    i += 1
"""


def _writer(path: Path, journal: str, count: int, size: int, go: Path | None = None) -> subprocess.Popen[str]:
    """A process that writes ``count`` artifacts (forever if -1), once ``go`` exists, printing each one."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), journal, str(count), str(go or ""), str(size)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    return writer


def _ready(writer: subprocess.Popen[str]) -> None:
    assert writer.stdout is not None and writer.stdout.readline() == "ready\n"


def _assert_intact(path: Path, committed: list[str]) -> None:
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with ArtifactStore(path) as store:
        for line in committed:
            artifact_id, digest = line.split()
            assert hashlib.sha256(store.read_bytes(artifact_id)).hexdigest() == digest


@pytest.mark.parametrize("journal", ["wal", "rollback"])
def test_kill_9_in_the_middle_of_writing_loses_no_committed_artifact(tmp_path: Path, journal: str) -> None:
    path = tmp_path / "artifacts.db"
    writer = _writer(path, journal, -1, 100_000)  # big blobs: each write takes a while
    _ready(writer)
    assert writer.stdout is not None
    committed = [writer.stdout.readline().strip() for _ in range(20)]
    time.sleep(0.05)  # it is writing all the time: the kill lands in the middle of some transaction
    os.kill(writer.pid, signal.SIGKILL)
    rest, _ = writer.communicate()
    assert writer.returncode == -signal.SIGKILL
    committed += [line for line in rest.splitlines() if line.strip()]
    _assert_intact(path, committed)
    with ArtifactStore(path) as store:
        assert len(store) >= len(committed)  # at most one more: committed, killed before it printed
        store.put("after the crash", name="next")
        assert store.load("next") == "after the crash"


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "artifacts.db"
    go = tmp_path / "go"
    writers = [_writer(path, "auto", 30, 5_000, go) for _ in range(4)]
    for writer in writers:
        _ready(writer)
    go.touch()  # all start writing at the same moment, on a store none has created yet
    outputs = [w.communicate(timeout=90)[0] for w in writers]
    assert [w.returncode for w in writers] == [0, 0, 0, 0]
    committed = [line for out in outputs for line in out.splitlines()]
    assert len(committed) == 120
    _assert_intact(path, committed)
    with ArtifactStore(path) as store:
        assert len(store) == 120
        assert len({a.sha256 for a in store.list()}) == 4 * 24 + 6  # the shared data is stored once
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 4 * 24 + 6
