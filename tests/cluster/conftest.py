"""A real Ray cluster on this machine for the cluster backend's tests: a head and two worker nodes.

``ray.cluster_utils.Cluster`` starts real GCS and raylet processes; each node offers one CPU, and the two
worker nodes a custom ``spare`` resource, so a test can place a run where removing the node is allowed (the
head carries the driver's connection). Ray's health checks are made frequent before it starts, so a node
killed under a run (its health check refused at once) is declared dead in about three seconds instead of
fourteen; a check may still take three seconds to answer, so a raylet that a loaded machine stalls for a
few seconds is not declared dead (CI saw that with half a second). One cluster serves the whole suite
(tests/conftest.py keeps tests/cluster on one pytest-xdist worker).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

RAY_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "3000",
    "RAY_health_check_failure_threshold": "3",
}
NODE_ARGS: dict[str, Any] = {"num_cpus": 1, "object_store_memory": 80 << 20, "include_log_monitor": False}


@dataclass
class RayCluster:
    """The running cluster, and what tests do to it."""

    cluster: Any

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def spare_nodes(self) -> list[Any]:
        """The worker nodes (removable), as the cluster utility knows them."""
        return list(self.cluster.worker_nodes)

    def node_of(self, node_id: str) -> Any:
        return next(node for node in self.cluster.worker_nodes if node.node_id == node_id)

    def remove(self, node_id: str) -> None:
        """Kill a worker node at once (SIGKILL to its raylet and every process of it), then add a new one."""
        self.cluster.remove_node(self.node_of(node_id), allow_graceful=False)
        self.add()

    def add(self) -> None:
        self.cluster.add_node(**NODE_ARGS, resources={"spare": 1})
        self.cluster.wait_for_nodes()


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[RayCluster]:
    import ray
    from ray.cluster_utils import Cluster

    os.environ.update(RAY_ENV)
    cluster = Cluster(initialize_head=True, head_node_args=dict(NODE_ARGS, no_monitor=True))
    running = RayCluster(cluster)
    try:
        for _ in range(2):
            running.add()
        yield running
    finally:
        ray.shutdown()
        cluster.shutdown()
