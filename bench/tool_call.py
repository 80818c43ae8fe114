"""Latency of one trivial tool call: the MCP SDK client directly versus the ToolHub's sync wrapper.

Both talk to the same embedded weather server program over stdio (one process each), in the same run,
in alternating rounds (ABBA order) so machine noise hits both alike. Prints JSON: the medians in
milliseconds, their ratio and whether it meets the target (the hub costs at most 1.2x a direct call).
A benchmark, not a test: timing never fails CI (a shared machine varies by about 30% between runs), so
the exit code is 0 whatever the ratio; read "meets_target".

    python bench/tool_call.py [--calls 50] [--rounds 30] [--target 1.2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters, stdio_client

from codemode_kernel.config import ServerConfig
from codemode_kernel.hub import ToolHub

SERVER = [sys.executable, "-m", "codemode_kernel.servers.weather"]
TOOL, ARGS = "get_weather", {"city": "Seattle", "unit": "celsius"}


async def direct_round(client: Client, calls: int) -> list[float]:
    """Durations (ms) of ``calls`` sequential calls made with the SDK client itself."""
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        await client.call_tool(TOOL, ARGS)
        out.append((time.perf_counter() - start) * 1000)
    return out


def hub_round(hub: ToolHub, calls: int) -> list[float]:
    """Durations (ms) of ``calls`` sequential calls through the hub's blocking API."""
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        hub.call("weather", TOOL, ARGS)
        out.append((time.perf_counter() - start) * 1000)
    return out


async def measure(calls: int, rounds: int) -> tuple[list[float], list[float]]:
    """Both ways, interleaved round by round; one task owns the SDK client from enter to exit."""
    direct: list[float] = []
    via_hub: list[float] = []
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    config = ServerConfig(name="weather", transport="stdio", command=SERVER[0], args=SERVER[1:])
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "direct.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            await client.list_tools()
            # The hub blocks this loop while it waits; it runs its own loop on its own thread.
            with ToolHub([config], state_dir=Path(tmp) / ".codemode") as hub:
                await direct_round(client, 20)  # warm-up, not counted
                hub_round(hub, 20)
                for round_number in range(rounds):
                    # ABBA order: neither way always runs right after the other's server was busy.
                    if round_number % 2 == 0:
                        direct += await direct_round(client, calls)
                        via_hub += hub_round(hub, calls)
                    else:
                        via_hub += hub_round(hub, calls)
                        direct += await direct_round(client, calls)
    return direct, via_hub


def run(calls: int, rounds: int) -> dict[str, Any]:
    """Measure both ways and return the JSON report."""
    direct, via_hub = asyncio.run(measure(calls, rounds))
    direct_ms, hub_ms = statistics.median(direct), statistics.median(via_hub)
    return {
        "benchmark": "tool_call",
        "tool": TOOL,
        "calls": calls * rounds,
        "direct_sdk_median_ms": round(direct_ms, 3),
        "hub_sync_median_ms": round(hub_ms, 3),
        "ratio": round(hub_ms / direct_ms, 3),
        "direct_sdk_p90_ms": round(statistics.quantiles(direct, n=10)[-1], 3),
        "hub_sync_p90_ms": round(statistics.quantiles(via_hub, n=10)[-1], 3),
    }


def main() -> int:
    """Run the benchmark and print its JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="calls per round and way")
    parser.add_argument("--rounds", type=int, default=30, help="alternating rounds")
    parser.add_argument("--target", type=float, default=1.2, help="the hub/direct ratio aimed for")
    args = parser.parse_args()
    report = run(args.calls, args.rounds)
    report["target_ratio"] = args.target
    report["meets_target"] = report["ratio"] <= args.target
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
