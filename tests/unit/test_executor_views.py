"""Where programs run, as a person sees it: the sidebar's state file, and the node a trace names.

The state file's executor entry comes from a real kernel's tools (a real Toolbox and Executor on the local
backend). How a Ray cluster that is slow or failing is shown is checked with a cluster that answers when
the test lets it (no Ray is started here; tests/cluster has the real cluster).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from codemode_kernel.config.models import ExecutorSettings
from codemode_kernel.core.errors import ClusterError
from codemode_kernel.core.records import NodeAttempt
from codemode_kernel.executor import ExecutionResult
from codemode_kernel.kernel.state_file import ClusterWatch, KernelStateFile
from codemode_kernel.kernel.tools import KernelTools
from codemode_kernel.views.display import TRACE_MIME, result_bundle
from tests.conftest import wait_until

NODE_A = "a1b2c3d4" + "0" * 48
NODE_B = "e5f6a7b8" + "1" * 48
RAY = ExecutorSettings(backend="ray", address="10.0.0.5:6379")


@pytest.fixture
def kernel_tools(tmp_path: Path) -> Iterator[KernelTools]:
    """A kernel's tools with the demo weather server, started as the kernel starts them."""
    weather = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    config = {"mcpServers": {"weather": weather}, "workspace": str(tmp_path)}
    (tmp_path / "codemode.json").write_text(json.dumps(config))
    shell = SimpleNamespace(user_ns={}, user_ns_hidden={})  # the namespace is all the state file needs
    tools = KernelTools(shell, tmp_path)
    tools.config_path = tmp_path / "codemode.json"  # named, as %codemode reload --config names one: trusted
    tools.start()
    tools.wait(quiet=True)
    try:
        yield tools
    finally:
        tools.close()


def test_the_state_file_says_programs_run_on_this_machine(kernel_tools: KernelTools, tmp_path: Path) -> None:
    state_file = KernelStateFile(kernel_tools, tmp_path / "kernel-k1.json")
    state_file.write()
    state = json.loads(state_file.path.read_text())
    assert state["executor"] == {"backend": "local"}
    assert [s["state"] for s in state["servers"]] == ["ready"]
    state_file.close()


class Cluster:
    """A cluster's answers as ``Executor.cluster_status()`` gives them, each when the test releases it."""

    def __init__(self) -> None:
        self.release = threading.Semaphore(0)
        self.answers: list[dict[str, Any] | Exception] = []

    def cluster_status(self) -> dict[str, Any]:
        self.release.acquire()
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def answer(self, answer: dict[str, Any] | Exception) -> None:
        self.answers.append(answer)
        self.release.release()


STATUS = {
    "address": RAY.address,
    "nodes": [
        {"node": NODE_A, "alive": True, "address": "10.0.0.5", "resources": {"CPU": 4.0}},
        {
            "node": NODE_B,
            "alive": True,
            "address": "10.0.0.6",
            "resources": {"CPU": 2.0, "memory": 1e9},
            "host": "b",
            "prepared": 1,
            "running": 1,
            "runs": 7,
        },
    ],
    "queued": 2,
    "running": 1,
}


def test_a_slow_cluster_never_holds_up_the_state_and_its_last_answer_stays_with_the_reason() -> None:
    cluster = Cluster()
    changed = threading.Event()
    watch = ClusterWatch(lambda: RAY, lambda: cluster, changed.set, interval=0.0, patience=0.2)

    first = watch.entry()  # asks, and returns at once: the cluster has not answered
    assert first == {"backend": "ray", "address": "10.0.0.5:6379"}
    silent = wait_until(watch.entry, lambda entry: entry is not None and "problem" in entry)
    assert silent is not None and silent.get("problem") == (
        "the Ray cluster at 10.0.0.5:6379 has not answered for over 0.2 s"
    )

    cluster.answer(STATUS)
    assert changed.wait(10), "an answer rewrites the state file at once"
    answered = watch.entry()
    assert answered == {
        "backend": "ray",
        "address": "10.0.0.5:6379",
        "nodes": [
            {
                "node": NODE_A,
                "address": "10.0.0.5",
                "alive": True,
                "cpus": 4.0,
                "prepared": None,
                "running": None,
            },
            {"node": NODE_B, "address": "10.0.0.6", "alive": True, "cpus": 2.0, "prepared": 1, "running": 1},
        ],
        "running": 1,
        "queued": 2,
    }

    cluster.answer(ClusterError("its GCS at 10.0.0.5:6379 does not answer"))
    failed = wait_until(watch.entry, lambda entry: entry is not None and "cannot be reached" in str(entry))
    assert failed is not None and failed.get("nodes") == answered["nodes"], "the last answer stays"
    assert failed.get("problem") == (
        "the Ray cluster at 10.0.0.5:6379 cannot be reached: its GCS at 10.0.0.5:6379 does not answer; "
        "the nodes shown are from before"
    )


def test_a_switch_of_cluster_drops_the_old_clusters_nodes() -> None:
    cluster = Cluster()
    settings = [RAY]
    watch = ClusterWatch(lambda: settings[0], lambda: cluster, lambda: None, interval=0.0)
    watch.entry()
    cluster.answer(STATUS)
    wait_until(watch.entry, lambda entry: entry is not None and "nodes" in entry)
    settings[0] = ExecutorSettings(backend="ray", address="10.9.9.9:6379")
    assert watch.entry() == {"backend": "ray", "address": "10.9.9.9:6379"}
    settings[0] = ExecutorSettings()
    assert watch.entry() == {"backend": "local"}
    cluster.answer(STATUS)  # the question asked for the second cluster ends


def _attempts(*outcomes: str) -> list[NodeAttempt]:
    """One attempt per outcome: the first on node A, the next on node B."""
    nodes = (NODE_A, NODE_B)[: len(outcomes)]
    return [NodeAttempt(node=node, outcome=outcome) for node, outcome in zip(nodes, outcomes, strict=True)]


def test_a_run_that_moved_names_its_nodes_in_the_metadata_text_and_html() -> None:
    nodes = _attempts("lost: the node went away (raylet died)", "finished")
    result = ExecutionResult(status="ok", execution_id="e1", nodes=nodes)
    data, metadata = result_bundle(result)
    assert metadata[TRACE_MIME]["nodes"] == nodes
    assert "nodes" not in data[TRACE_MIME], "node ids change every run: the data stays comparable"
    assert (
        data["text/plain"].splitlines()[0] == "codemode: ok, 0 tool calls, moved: a1b2c3d4 (lost) → e5f6a7b8"
    )
    assert "moved: a1b2c3d4 (lost) → e5f6a7b8" in data["text/html"]


def test_a_run_on_one_node_names_it_and_a_local_run_names_none() -> None:
    data, metadata = result_bundle(
        ExecutionResult(status="ok", execution_id="e2", nodes=_attempts("finished"))
    )
    assert data["text/plain"] == "codemode: ok, 0 tool calls, on node a1b2c3d4"
    assert metadata[TRACE_MIME]["nodes"] == [{"node": NODE_A, "outcome": "finished"}]
    local_data, local_metadata = result_bundle(ExecutionResult(status="ok", execution_id="e3"))
    assert local_data["text/plain"] == "codemode: ok, 0 tool calls"
    assert "nodes" not in local_metadata[TRACE_MIME]
    assert "node" not in local_data["text/html"]


def test_a_running_trace_says_which_node_it_runs_on_and_where_it_moved_from() -> None:
    from codemode_kernel.views.display import nodes_text
    from codemode_kernel.views.live_bundle import LiveTraceBundle

    live = LiveTraceBundle("1", timeout=10)
    assert "nodes" not in live.bundle()[1][TRACE_MIME]  # a local run names none
    attempts = [
        NodeAttempt(node="a" * 56, outcome="lost: ActorDiedError: its node died"),
        NodeAttempt(node="b" * 56, outcome="running"),
    ]
    live.nodes(attempts)
    data, metadata = live.bundle()
    assert data[TRACE_MIME]["status"] == "running"
    assert metadata[TRACE_MIME]["nodes"] == attempts
    assert nodes_text(attempts) == "moved: aaaaaaaa (lost) → bbbbbbbb (running)"
