"""``%codemode executor`` in a real kernel (issue 26): where programs run, and switching it.

No Ray cluster is started here (the Ray executor's own tests do that): switching to local again must
make a new executor that runs cells, and a bad choice must say what to type.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, configured_kernel

from codemode_kernel.config.executor_choice import CHOICE_FORMS

LOCAL = "executor: local (a worker process on this machine per program)"


@pytest.fixture(scope="module")
def kernel(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    notebook = tmp_path_factory.mktemp("executor-notebook")
    (notebook / "plain.json").write_text(json.dumps({"mcpServers": {}}))
    with configured_kernel(jupyter_path, notebook, notebook / "plain.json") as k:
        yield k


def test_executor_is_local_by_default(kernel: Kernel) -> None:
    shown = kernel.run("%codemode executor")
    assert shown.status == "ok", shown.content
    assert shown.stream() == f'{LOCAL}\n  set by: the default (the config sets no "executor")\n'
    assert f"\n{LOCAL}\n" in kernel.run("%codemode status").stream()


def test_switching_to_local_again_makes_a_new_executor_that_runs_cells(kernel: Kernel) -> None:
    kept = kernel.run("%%codemode --session s --quiet\nx = 5")
    assert kept.status == "ok", kept.content
    switched = kernel.run("%codemode executor local")
    assert switched.status == "ok", switched.content
    assert switched.stream() == (
        "codemode: switched; the sessions of the previous executor ended\n"
        f"{LOCAL}\n  set by: %codemode executor, in this kernel until it restarts\n"
    )
    ran = kernel.run("%%codemode --out answer --quiet\n6 * 7")
    assert ran.status == "ok", ran.content
    assert kernel.run("print(answer)").stream() == "42\n"
    # The session lived in the executor that was closed: its globals are gone.
    gone = kernel.run("%%codemode --session s --quiet\nx")
    assert gone.status == "error" and "NameError" in gone.content["evalue"], gone.content


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("%codemode executor rey", "'rey' is not an executor"),
        ("%codemode executor ray=head.example", '"head.example" has no port'),
    ],
)
def test_a_bad_choice_says_what_to_type_and_changes_nothing(kernel: Kernel, line: str, problem: str) -> None:
    refused = kernel.run(line)
    assert refused.status == "error" and refused.content["ename"] == "UsageError", refused.content
    evalue = refused.content["evalue"]
    assert evalue.startswith(f"%codemode executor: {problem}") and f"write {CHOICE_FORMS}" in evalue
    assert "usage: %codemode executor [local|ray[=ADDRESS]]" in evalue
    assert kernel.run("%%codemode --quiet\n1").status == "ok"
