"""A notebook switched to the cluster: ``%codemode executor ray=ADDRESS`` in a real kernel (jupyter_client),
then a ``%%codemode`` cell whose program runs on a node and whose finished trace names it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from codemode_kernel.kernel.app import install_kernel_spec
from tests.cluster.conftest import RayCluster
from tests.kernel.kernel_session import configured_kernel

pytestmark = pytest.mark.integration

TRACE_MIME = "application/vnd.codemode.trace.v1+json"


def test_a_kernel_switched_to_the_cluster_runs_its_cells_on_a_node(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    prefix = tmp_path / "prefix"
    install_kernel_spec(prefix=str(prefix))
    weather = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    config = tmp_path / "notebook.json"
    config.write_text(json.dumps({"mcpServers": {"weather": weather}}))
    with configured_kernel(prefix / "share" / "jupyter", tmp_path, config) as kernel:
        switched = kernel.run(f"%codemode executor ray={ray_cluster.address}")
        assert switched.status == "ok", switched.content
        shown = switched.stream()
        assert shown.startswith("codemode: switched; the sessions of the previous executor ended\n"), shown
        assert f"executor: ray at {ray_cluster.address}" in shown and "  cluster: " in shown, shown
        cell = kernel.run('%%codemode\nw = get_weather(city="Oslo", unit="celsius")\nw.city')
        assert cell.status == "ok", cell.content
        text = "\n".join(str(t) for t in cell.data("text/plain"))
        assert "codemode: ok, 1 tool call, on node " in text, text
        traces = [m for m in cell.outputs() if TRACE_MIME in m.get("data", {})]
        assert traces, cell.outputs()
        nodes = traces[-1]["metadata"][TRACE_MIME]["nodes"]
        assert [n["outcome"] for n in nodes] == ["finished"], nodes
