"""``codemode serve --executor ray=ADDRESS`` through the MCP SDK's client: a client's programs run on the
cluster's nodes at once, and their records (checked by the SDK against the tool's output schema) name them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, stdio_client

from tests.cluster.conftest import RayCluster
from tests.integration.serve_support import demo_server, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

PROGRAM = 'import time\nw = get_weather(city=CITY, unit="celsius")\ntime.sleep(1.5)\nw.city'


def test_serve_runs_a_clients_programs_on_the_nodes(ray_cluster: RayCluster, tmp_path: Path) -> None:
    config = write_serve_config(tmp_path, {"weather": demo_server("weather")})
    params = stdio_params(tmp_path, config, "--executor", f"ray={ray_cluster.address}")
    records: dict[str, Any] = {}

    async def session() -> None:
        with (tmp_path / "serve.stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:

                async def run(city: str) -> None:
                    code = f"CITY = {city!r}\n{PROGRAM}"
                    result = await client.call_tool("execute_python", {"code": code, "timeout": 120})
                    assert not result.is_error, result.content
                    records[city] = result.structured_content

                async with anyio.create_task_group() as group:
                    for city in ("Oslo", "Paris", "Tokyo"):
                        group.start_soon(run, city)

    anyio.run(session)
    for city, record in records.items():
        assert record["status"] == "ok" and record["value"] == {"kind": "text", "text": city}
        assert [call["tool"] for call in record["tool_calls"]] == ["get_weather"]
        assert [node["outcome"] for node in record["nodes"]] == ["finished"]
    assert len({record["nodes"][0]["node"] for record in records.values()}) == 3
