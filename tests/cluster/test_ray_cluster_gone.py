"""A Ray cluster that goes away under running programs: the runs end ``crashed`` saying so, in time, and
the kernel's process lives on (Ray would end a driver whose GCS stays silent for a minute).

This module starts a cluster of its own (a head and one node) and kills every process of it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.config.models import ExecutorSettings
from codemode_kernel.executor import ExecutionResult, Executor
from tests.cluster.conftest import NODE_ARGS, RAY_ENV
from tests.conftest import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def doomed_cluster() -> Iterator[Any]:
    import os

    import ray
    from ray.cluster_utils import Cluster

    ray.shutdown()  # the suite's cluster: this module's executor connects to its own
    os.environ.update(RAY_ENV)
    cluster = Cluster(initialize_head=True, head_node_args=dict(NODE_ARGS, no_monitor=True))
    cluster.add_node(**NODE_ARGS)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    for node in [*cluster.worker_nodes, cluster.head_node]:
        node.kill_all_processes(check_alive=False, allow_graceful=False)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gone")
    servers = {"weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}}
    (path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    return path


def test_runs_end_crashed_when_the_cluster_goes_away_and_the_kernel_lives_on(
    doomed_cluster: Any, workspace: Path
) -> None:
    settings = ExecutorSettings(backend="ray", address=doomed_cluster.address)
    toolbox = Toolbox(load_config(workspace / "codemode.json"))
    toolbox.start()
    executor = Executor(toolbox, grace=1.0, executor=settings)
    results: dict[int, ExecutionResult] = {}
    printed: list[str] = []
    program = 'import time\nprint("started")\ntime.sleep(60)\n"never"'

    def run(index: int) -> None:
        results[index] = executor.run(program, timeout=120, on_output=lambda _, text: printed.append(text))

    try:
        assert executor.run("1", timeout=60).status == "ok"
        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        wait_until(lambda: printed.count("started\n"), lambda n: n == 2, timeout=60)
        killed = time.monotonic()
        for node in [*doomed_cluster.worker_nodes, doomed_cluster.head_node]:
            node.kill_all_processes(check_alive=False, allow_graceful=False)
        for thread in threads:
            thread.join(60)
        ended = time.monotonic() - killed
        assert ended < 30, f"the runs took {ended:.0f} s to end after the cluster went away"
        for result in results.values():
            assert result.status == "crashed", (result.status, result.error)
            assert result.error is not None and result.error["type"] == "ClusterGone", result.error
            assert "the Ray cluster went away" in result.error["message"]
            assert result.stdout == "started\n"
        after = executor.run("1", timeout=60)
        assert after.status == "crashed" and after.error is not None and after.error["type"] == "ClusterGone"
    finally:
        closing = time.monotonic()
        executor.close()
        toolbox.close()
        assert time.monotonic() - closing < 60
    time.sleep(0)  # the process is still here: Ray did not end it
