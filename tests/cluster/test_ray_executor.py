"""The Ray backend end to end: programs on the nodes of a real cluster, their calls answered by this hub.

A counting MCP server appends every call it gets to a file, so a test reads what really reached it: a run
whose node is killed under it is replayed on another node and no call is made twice.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.config.models import ExecutorResources, ExecutorSettings
from codemode_kernel.executor import Executor
from tests.cluster.conftest import RayCluster
from tests.conftest import ROOT, wait_until

pytestmark = pytest.mark.integration

COUNTING = ROOT / "tests" / "servers" / "counting_server.py"
ON_SPARE = ExecutorResources(cpus=1, custom={"spare": 0.01})
"""A run placed on a worker node, which a test may remove (not on the head, which holds the driver)."""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cluster")
    servers = {
        "weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]},
        "counting": {"command": sys.executable, "args": [str(COUNTING), "--log", str(path / "calls.log")]},
    }
    (path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    (path / "calls.log").write_text("")
    return path


def calls_made(workspace: Path) -> list[str]:
    return (workspace / "calls.log").read_text().splitlines()


async def echo_model(request: dict[str, Any]) -> str:
    return f"model says: {request['prompt']}"


@pytest.fixture(scope="module")
def executor(ray_cluster: RayCluster, workspace: Path) -> Iterator[Executor]:
    settings = ExecutorSettings(backend="ray", address=ray_cluster.address)
    with (
        Toolbox(load_config(workspace / "codemode.json")) as toolbox,
        Executor(toolbox, grace=1.0, executor=settings, llm=echo_model) as executor,
    ):
        yield executor


def test_programs_spread_over_the_nodes_and_their_calls_come_back_to_the_hub(
    executor: Executor, workspace: Path
) -> None:
    program = """
import time
w = get_weather(city="Oslo", unit="celsius")
n = count(label=LABEL)
stored = store_artifact({"city": w.city}, name=LABEL)
answer = llm(f"hello from {LABEL}")
time.sleep(1.5)  # the three runs overlap: each holds its node's one CPU
{"temperature": w.temperature, "count": n, "answer": answer}
"""
    labels = ["spread-a", "spread-b", "spread-c"]
    with ThreadPoolExecutor(3) as pool:
        results = list(
            pool.map(lambda label: executor.run(program, inputs={"LABEL": label}, timeout=60), labels)
        )
    for label, result in zip(labels, results, strict=True):
        assert result.status == "ok", result.error
        assert result.value is not None and result.value["data"]["count"] == 1
        assert result.value["data"]["answer"] == f"model says: hello from {label}"
        assert [c["tool"] for c in result.tool_calls] == ["get_weather", "count", "llm"]
        assert [a["name"] for a in result.artifacts] == [label]
        assert executor.artifacts.load(label) == {"city": "Oslo"}  # stored in the kernel's workspace
        assert (
            result.nodes is not None and len(result.nodes) == 1 and result.nodes[0]["outcome"] == "finished"
        )
        assert "pid_namespace" in result.protections and "network_namespace" in result.protections
    nodes = {result.nodes[0]["node"] for result in results if result.nodes}
    assert len(nodes) == 3, "each run reserved a whole CPU: Ray placed them on the three nodes"
    assert sorted(calls_made(workspace)) == sorted(labels)
    record = results[0].to_dict()
    assert record["nodes"] == results[0].nodes


def test_a_node_lost_under_a_run_moves_it_and_no_call_is_made_twice(
    executor: Executor, workspace: Path, ray_cluster: RayCluster
) -> None:
    program = """
import time
first = count(label="lost-first")
print("first call answered")
time.sleep(3)  # the node is killed here
second = count(label="lost-second")
print("after the second call")
[first, second]
"""
    printed: list[str] = []
    done: dict[str, Any] = {}

    placed: list[list[dict[str, str]]] = []

    def run() -> None:
        done["result"] = executor.run(
            program,
            timeout=60,
            resources=ON_SPARE,
            on_output=lambda stream, text: printed.append(text),
            on_node=lambda attempts: placed.append([dict(a) for a in attempts]),
        )

    thread = threading.Thread(target=run)
    thread.start()
    wait_until(lambda: calls_made(workspace), lambda calls: "lost-first" in calls, timeout=60)
    running = executor.cluster_status()
    assert running is not None
    busy = [n["node"] for n in running["nodes"] if n.get("running")]
    assert len(busy) == 1, running
    ray_cluster.remove(busy[0])
    thread.join(90)
    result = done["result"]
    assert result.status == "ok", result.error
    assert result.value == {"kind": "json", "data": [1, 1]}
    assert calls_made(workspace).count("lost-first") == 1, "the call the lost node made is not made again"
    assert calls_made(workspace).count("lost-second") == 1
    assert result.nodes is not None and [n["outcome"].split(":")[0] for n in result.nodes] == [
        "lost",
        "finished",
    ]
    assert result.nodes[0]["node"] == busy[0] and result.nodes[1]["node"] != busy[0]
    first = result.tool_calls[0]
    assert first["tool"] == "count" and "replayed from the record; no server was called" in first["warnings"]
    assert result.stdout == "first call answered\nafter the second call\n"
    assert "".join(printed) == result.stdout, "the live view is not shown the replayed output twice"
    lost, finished = result.nodes
    assert placed == [
        [{"node": lost["node"], "outcome": "running"}],
        [dict(lost), {"node": finished["node"], "outcome": "running"}],
    ], "a live view is told where the run is, and where it moved"


def test_a_runaway_program_on_a_node_is_stopped_at_its_deadline(executor: Executor) -> None:
    started = time.monotonic()
    result = executor.run("while True:\n    pass", timeout=2)
    elapsed = time.monotonic() - started
    assert result.status == "timeout"
    assert elapsed < 2 + executor.grace + 5, elapsed
    follow_up = executor.run("21 * 2", timeout=30)
    assert follow_up.status == "ok" and follow_up.value == {"kind": "json", "data": 42}


def test_ray_secrets_and_sockets_are_hidden_on_a_node(executor: Executor, workspace: Path) -> None:
    state = workspace / ".codemode"
    assert state.is_dir()  # the kernel's artifact store and logs, on the file system the nodes share here
    reads = {
        "token": "import os\nopen(os.path.expanduser('~/.ray/auth_token')).read()",
        "sockets": "import os\nos.listdir('/tmp/ray')",
        "the kernel's state": f"import os\nos.listdir({str(state)!r})",
    }
    for name, code in reads.items():
        result = executor.run(code, timeout=30)
        assert result.status == "error" and result.error is not None, (name, result.value)
        assert result.error["type"] in ("PermissionError", "FileNotFoundError"), (name, result.error)


def test_a_session_whose_node_is_lost_ends_and_its_next_run_starts_a_new_one(
    executor: Executor, ray_cluster: RayCluster
) -> None:
    first = executor.run("x = 41", session="kept", resources=ON_SPARE, timeout=60)
    assert first.status == "ok" and first.nodes is not None, first.error
    node = first.nodes[0]["node"]
    printed: list[str] = []
    done: dict[str, Any] = {}

    def run() -> None:
        code = 'import time\nprint("waiting")\ntime.sleep(30)\nx + 1'
        done["result"] = executor.run(
            code, session="kept", timeout=60, on_output=lambda stream, text: printed.append(text)
        )

    thread = threading.Thread(target=run)
    thread.start()
    wait_until(lambda: printed, lambda seen: seen == ["waiting\n"], timeout=60)
    ray_cluster.remove(node)
    thread.join(60)
    lost = done["result"]
    assert lost.status == "crashed" and lost.error is not None and lost.error["type"] == "NodeLost"
    assert "session 'kept' kept its globals on that node, and they are gone" in lost.error["message"]
    assert (
        lost.nodes is not None
        and lost.nodes[0]["node"] == node
        and lost.nodes[0]["outcome"].startswith("lost")
    )
    assert "kept" not in executor.sessions
    fresh = executor.run("x", session="kept", timeout=60)
    assert fresh.status == "error" and fresh.error is not None and fresh.error["type"] == "NameError"
    executor.close_session("kept")


def test_runs_beyond_the_free_resources_wait_in_rays_queue_within_their_timeout(executor: Executor) -> None:
    program = 'import time\ntime.sleep(8)\n"done"'
    with ThreadPoolExecutor(5) as pool:
        # One run on each node first (a CPU each): a node added since has its actor and a worker ready.
        warm_up = [pool.submit(executor.run, "import time\ntime.sleep(1)", timeout=120) for _ in range(3)]
        assert [run.result().status for run in warm_up] == ["ok"] * 3
        busy = [pool.submit(executor.run, program, timeout=60) for _ in range(3)]
        running = wait_until(
            executor.cluster_status, lambda status: status is not None and status["running"] == 3, timeout=60
        )
        assert running is not None and running["running"] == 3, running
        queued = pool.submit(executor.run, program, timeout=60)
        hopeless = pool.submit(executor.run, "1", timeout=1)
        waiting = wait_until(
            executor.cluster_status, lambda status: status is not None and status["queued"] == 2
        )
        assert waiting is not None and waiting["queued"] == 2, waiting
        late = hopeless.result()
        assert late.status == "timeout" and late.error is not None, (late.status, late.error)
        assert "no Ray node had the run's resources free" in late.error["message"], late.error
        results = [run.result() for run in [*busy, queued]]
    assert [r.status for r in results] == ["ok"] * 4, [r.error for r in results]
    assert results[3].duration_ms > 8000 + 1000, "the fourth run waited for a node, then ran its 8 s"


HOSTILE = {
    "fork bomb": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        2,
    ),
    "memory bomb": ("chunks = []\nwhile True:\n    chunks.append(bytearray(50_000_000))", 8),
    "garbage on the channel": (
        "import os, time\nfor fd in range(3, 64):\n    try:\n"
        '        os.write(fd, b"\\xff" * 64)\n    except OSError:\n        pass\ntime.sleep(5)',
        3,
    ),
    "os._exit": ('print("partial")\nimport os\nos._exit(7)', 3),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_programs_are_contained_on_a_node(executor: Executor, name: str) -> None:
    code, timeout = HOSTILE[name]
    started = time.monotonic()
    result = executor.run(code, timeout=timeout)
    assert time.monotonic() - started < timeout + executor.grace + 10
    assert result.status in ("timeout", "crashed", "error"), (name, result.status)
    assert result.nodes is not None and [n["outcome"] for n in result.nodes] == ["finished"], result.nodes
    follow_up = executor.run("21 * 2", timeout=30)
    assert follow_up.status == "ok" and follow_up.value == {"kind": "json", "data": 42}, follow_up.error


def test_a_run_moved_twice_still_makes_each_call_once(
    executor: Executor, workspace: Path, ray_cluster: RayCluster
) -> None:
    program = """
import time
a = count(label="twice-a")
time.sleep(4)  # the first node is removed here
b = count(label="twice-b")
time.sleep(4)  # the second one here
c = count(label="twice-c")
[a, b, c]
"""
    done: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: done.update(result=executor.run(program, timeout=120, resources=ON_SPARE))
    )
    thread.start()
    removed = []
    for label in ("twice-a", "twice-b"):
        wait_until(lambda: calls_made(workspace), lambda calls, label=label: label in calls, timeout=60)
        # The run sleeps 4 s on its node now; the status may lag the call on a loaded machine: wait for it.
        status = wait_until(executor.cluster_status, lambda s: len(_busy(s)) == 1, timeout=20)
        busy = _busy(status)
        assert len(busy) == 1, status
        ray_cluster.remove(busy[0])
        removed.append(busy[0])
    thread.join(120)
    result = done["result"]
    assert result.status == "ok", result.error
    assert result.value == {"kind": "json", "data": [1, 1, 1]}
    made = calls_made(workspace)
    assert [made.count(f"twice-{x}") for x in "abc"] == [1, 1, 1], made
    assert result.nodes is not None
    assert [n["node"] for n in result.nodes[:2]] == removed
    assert [n["outcome"].split(":")[0] for n in result.nodes] == ["lost", "lost", "finished"]


def _busy(status: dict[str, Any] | None) -> list[str]:
    """The live nodes a run is running on, by the executor's cluster status."""
    nodes = status["nodes"] if status is not None else []
    return [n["node"] for n in nodes if n.get("alive") and n.get("running")]
