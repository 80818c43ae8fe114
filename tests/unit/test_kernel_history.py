"""Which earlier run --replay answers from: the same cell by id, else the same code; never a replay."""

from __future__ import annotations

from codemode_kernel.executor import ExecutionResult
from codemode_kernel.kernel.history import History


def _result(execution_id: str) -> ExecutionResult:
    return ExecutionResult(status="ok", execution_id=execution_id)


def test_the_cell_id_wins_so_an_edited_cell_finds_its_run() -> None:
    history = History()
    history.add("cell-a", "get_city()", _result("1"))
    history.add("cell-b", "get_city()", _result("2"))
    found = history.last_for("cell-a", "get_city()  # edited")
    assert found is not None and found.result.execution_id == "1"


def test_without_a_known_id_the_same_code_is_found() -> None:
    history = History()
    history.add(None, "\nget_city()\n", _result("1"))
    history.add("cell-c", "other()", _result("2"))
    found = history.last_for("copy-of-the-cell", "get_city()")
    assert found is not None and found.result.execution_id == "1"
    assert history.last_for(None, "never_ran()") is None


def test_a_replay_is_never_the_record_of_the_next_replay() -> None:
    history = History()
    history.add("cell-a", "x()", _result("real"))
    history.add("cell-a", "x()", _result("replayed"), replayed=True)
    found = history.last_for("cell-a", "x()")
    assert found is not None and found.result.execution_id == "real"
    assert [run.number for run in history.runs()] == [1, 2]


def test_history_is_bounded() -> None:
    history = History(limit=3)
    for n in range(5):
        history.add(None, f"run{n}()", _result(str(n)))
    assert len(history) == 3 and [run.number for run in history.runs()] == [3, 4, 5]
