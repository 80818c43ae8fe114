"""The Ray backend from the command line: ``codemode run --executor ray=ADDRESS`` and ``codemode doctor``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cluster.conftest import RayCluster
from tests.conftest import run_cli

pytestmark = pytest.mark.integration


def test_codemode_run_on_the_cluster_and_doctor_shows_it(ray_cluster: RayCluster, tmp_path: Path) -> None:
    servers = {"weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}}
    config = tmp_path / "cluster.json"
    config.write_text(json.dumps({"mcpServers": servers, "executor": {"backend": "ray"}}))
    program = 'print("from a node")\nget_weather(city="Oslo", unit="celsius").city'
    done = run_cli(
        "run",
        "--config",
        str(config),
        "--executor",
        f"ray={ray_cluster.address}",
        "--json",
        "-",
        cwd=tmp_path,
        stdin=program,
    )
    assert done.returncode == 0, done.stderr
    assert "SIGTERM" not in done.stderr, "Ray's note about its signal handler reaches the user's terminal"
    record = json.loads(done.stdout)
    assert record["status"] == "ok" and record["stdout"] == "from a node\n"
    assert record["value"] == {"kind": "text", "text": "Oslo"}
    assert len(record["nodes"]) == 1 and record["nodes"][0]["outcome"] == "finished"
    config.write_text(
        json.dumps({"mcpServers": servers, "executor": {"backend": "ray", "address": ray_cluster.address}})
    )
    doctor = run_cli("doctor", "--config", str(config), cwd=tmp_path)
    assert f"cluster: {ray_cluster.address}: 3 of " in doctor.stdout, doctor.stdout
    assert "CPU):" in doctor.stdout and "pid_namespace" in doctor.stdout, doctor.stdout
