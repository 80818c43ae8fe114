"""The call log: bounded in memory, nothing lost, large results stored as artifacts."""

from __future__ import annotations

import json
from pathlib import Path

from codemode_kernel.artifacts import ArtifactStore
from codemode_kernel.calllog import CallLog


def test_records_keep_order_and_updates_keep_their_place(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path)
    a = log.start("s", "a", {})
    b = log.start("s", "b", {"x": 1})
    log.finish(a, "ok", result={"content": []})
    assert [r.tool for r in log] == ["a", "b"]
    assert log.get(a.id) is not None and log.get(a.id).status == "ok"  # type: ignore[union-attr]
    assert log.get(b.id).status == "running"  # type: ignore[union-attr]


def test_overflow_spills_oldest_to_jsonl_and_nothing_is_lost(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path, max_entries=3)
    ids = []
    for i in range(10):
        record = log.start("s", f"t{i}", {"i": i})
        ids.append(log.finish(record, "ok", result={"content": [{"type": "text", "text": str(i)}]}).id)
    assert len(log) <= 3
    assert (tmp_path / "calls.jsonl").exists()
    everything = log.records(include_spilled=True)
    assert [r.id for r in everything] == ids
    assert log.get(ids[0]).arguments == {"i": 0}  # type: ignore[union-attr]


def test_large_results_become_artifacts_with_a_preview(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path, max_result_bytes=1000)
    big = {"content": [{"type": "text", "text": "y" * 5000}]}
    done = log.finish(log.start("s", "t", {}, execution_id="e1"), "ok", result=big)
    assert done.artifact_id is not None
    assert done.result == {"preview": "y" * 2000 + "…", "bytes": len(json.dumps(big))}
    assert log.full_result(done) == big
    artifact = ArtifactStore(tmp_path / "artifacts.db").get(done.artifact_id)
    assert (artifact.name, artifact.type, artifact.execution_id) == ("t result", "application/json", "e1")
    assert (
        artifact.description == "the whole result of a s/t call"
    )  # no call id: records read the same every run
    assert not (tmp_path / "results").exists()


def test_results_at_or_below_the_threshold_stay_in_the_record(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path, max_result_bytes=1000)
    result = {"content": [{"type": "text", "text": "y" * 900}]}
    done = log.finish(log.start("s", "t", {}), "ok", result=result)
    assert done.artifact_id is None and done.result == result
    assert not (tmp_path / "artifacts.db").exists()  # the store is opened only when something goes in


def test_without_a_workspace_or_a_threshold_large_results_stay_whole(tmp_path: Path) -> None:
    big = {"content": [{"type": "text", "text": "z" * 500}]}
    for log in (CallLog(max_result_bytes=100), CallLog(spill_dir=tmp_path, max_result_bytes=None)):
        done = log.finish(log.start("s", "t", {}), "ok", result=big)
        assert done.artifact_id is None and done.result == big and log.full_result(done) == big


def test_when_the_store_fails_the_result_is_kept(tmp_path: Path) -> None:
    (tmp_path / "artifacts.db").write_bytes(b"not a database" * 100)
    log = CallLog(spill_dir=tmp_path, max_result_bytes=100)
    big = {"content": [{"type": "text", "text": "z" * 500}]}
    done = log.finish(log.start("s", "t", {}), "ok", result=big)
    assert done.artifact_id is None and done.result == big


def test_records_of_older_versions_are_still_read(tmp_path: Path) -> None:
    old = {"id": "abc", "server": "s", "tool": "t", "arguments": {}, "started": 1.0, "status": "ok",
           "result": {"preview": "..."}, "result_file": "results/abc.json", "warnings": []}  # fmt: skip
    (tmp_path / "calls.jsonl").write_text(json.dumps(old) + "\n")
    found = CallLog(spill_dir=tmp_path).get("abc")
    assert found is not None and found.tool == "t" and found.artifact_id is None


def test_listeners_see_every_change(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path)
    seen: list[str] = []
    unsubscribe = log.subscribe(lambda r: seen.append(r.status))
    log.finish(log.start("s", "t", {}), "timeout", error="slow")
    unsubscribe()
    log.start("s", "t", {})
    assert seen == ["running", "timeout"]


def test_a_running_call_is_never_spilled_unfinished(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path, max_entries=3)
    slow = log.start("s", "slow", {})
    for i in range(10):
        log.finish(log.start("s", f"t{i}", {}), "ok", result={"content": []})
    log.finish(slow, "ok", result={"content": []})
    everything = log.records(include_spilled=True)
    assert len(everything) == 11 and len({r.id for r in everything}) == 11
    found = log.get(slow.id)
    assert found is not None and found.status == "ok"


def test_large_structured_results_are_stored_even_with_a_text_summary(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path, max_result_bytes=1000)
    rows = {"rows": ["x" * 100] * 50}
    result = {"content": [{"type": "text", "text": "summary"}], "structuredContent": rows}
    done = log.finish(log.start("s", "t", {}), "ok", result=result)
    assert done.artifact_id is not None and log.full_result(done) == result
    assert done.result is not None and done.result["preview"] == "summary"


def test_a_failing_listener_or_a_broken_line_loses_nothing(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path, max_entries=2)

    def broken(_record: object) -> None:
        raise RuntimeError("widget bug")

    log.subscribe(broken)
    for i in range(5):
        log.finish(log.start("s", f"t{i}", {}), "ok")
    with (tmp_path / "calls.jsonl").open("a") as out:
        out.write('{"id": "cut sho')
    assert [r.tool for r in log.records(include_spilled=True)] == [f"t{i}" for i in range(5)]
