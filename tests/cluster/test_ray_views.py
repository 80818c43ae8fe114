"""What a person sees of the cluster: the sidebar's executor entry, the node a trace names, the status line.

A real run on the suite's cluster, then the kernel's own readers of it: the state file's ``ClusterWatch``
(what the sidebar's Executor section shows), the trace bundle a cell displays, and ``%codemode status``'s
cluster line.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.config.models import ExecutorSettings
from codemode_kernel.executor import Executor
from codemode_kernel.kernel.magics import _cluster_summary
from codemode_kernel.kernel.state_file import ClusterWatch
from codemode_kernel.views.display import TRACE_MIME, result_bundle
from tests.cluster.conftest import RayCluster
from tests.conftest import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def executor(ray_cluster: RayCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Executor]:
    path = tmp_path_factory.mktemp("cluster-views")
    weather = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    (path / "codemode.json").write_text(
        json.dumps({"mcpServers": {"weather": weather}, "workspace": str(path)})
    )
    settings = ExecutorSettings(backend="ray", address=ray_cluster.address)
    with (
        Toolbox(load_config(path / "codemode.json")) as toolbox,
        Executor(toolbox, grace=1.0, executor=settings) as executor,
    ):
        yield executor


def test_the_sidebar_the_trace_and_the_status_show_the_cluster_and_the_runs_node(
    executor: Executor, ray_cluster: RayCluster
) -> None:
    result = executor.run('get_weather(city="Oslo", unit="celsius").city', timeout=60)
    assert result.status == "ok", result.error
    assert result.nodes is not None and len(result.nodes) == 1
    node = result.nodes[0]["node"]

    data, metadata = result_bundle(result)
    assert metadata[TRACE_MIME]["nodes"] == result.nodes
    assert data["text/plain"].splitlines()[0] == f"codemode: ok, 1 tool call, on node {node[:8]}"

    changed = threading.Event()
    watch = ClusterWatch(lambda: executor.backend, lambda: executor, changed.set)

    def answered(entry: Any) -> bool:
        return entry is not None and "nodes" in entry

    entry = wait_until(watch.entry, answered, timeout=60)
    assert answered(entry) and changed.is_set(), entry
    assert entry["address"] == ray_cluster.address and "problem" not in entry, entry
    alive = [n for n in entry["nodes"] if n["alive"]]
    assert len(alive) == 3, entry  # nodes removed by other tests stay listed, dead
    ran_on = next(n for n in entry["nodes"] if n["node"] == node)
    assert ran_on["cpus"] == 1.0 and ran_on["prepared"] is not None, ran_on  # its actor started there
    assert entry["queued"] == 0, entry

    summary = _cluster_summary(SimpleNamespace(executor=lambda: executor))  # type: ignore[arg-type]
    assert summary.startswith(f"cluster: {ray_cluster.address}: 3 of "), summary
    assert summary.endswith(", 0 queued"), summary
