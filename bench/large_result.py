"""A 20 MB tool result through the hub versus reading and parsing the same bytes from a pipe.

Both ask one server program (tests/servers/stdio_faults_server.py, tool ``big``) for a text result of
``--size`` characters, in the same run, in alternating rounds (ABBA order). The baseline writes the
JSON-RPC request to the server's stdin itself and times ``readline()`` plus ``json.loads`` of the answer:
the least any client can spend. The hub's way is ``ToolHub.call`` end to end (our stdio transport, the
SDK's session and result model, the output check and the call log, which stores a result this large as an
artifact). ``--sdk`` also times the MCP SDK's own stdio client once, the quadratic reader the hub replaced
(about 12 s for 20 MB here). Prints JSON: medians in milliseconds, their ratio and whether it meets the
target. A benchmark, not a test: timing never fails CI, so the exit code is 0 whatever the ratio; it is 1
only when a call fails or returns the wrong size.

    python bench/large_result.py [--size 20000000] [--rounds 10] [--target 3] [--sdk] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters, stdio_client

from codemode_kernel.config import ServerConfig
from codemode_kernel.hub import ToolHub

FAULTS_SERVER = Path(__file__).resolve().parents[1] / "tests" / "servers" / "stdio_faults_server.py"
SERVER = [sys.executable, str(FAULTS_SERVER)]


def text_length(result: dict[str, Any]) -> int:
    """How many characters of text a CallToolResult (wire form) carries."""
    return sum(len(block.get("text", "")) for block in result["content"])


class PipeBaseline:
    """The server over plain pipes: write a request, read one line, parse it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def call(self, size: int) -> tuple[float, int]:
        """Milliseconds from sending the request to the parsed answer, and the text's length."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.next_id += 1
        params = {"name": "big", "arguments": {"size": size}}
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}
        start = time.perf_counter()
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        elapsed = (time.perf_counter() - start) * 1000
        return elapsed, text_length(answer["result"])

    def close(self) -> None:
        """End the server (its stdin closes, it exits)."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def hub_call(hub: ToolHub, size: int) -> tuple[float, int]:
    """Milliseconds of one ``ToolHub.call`` of the same tool, and the text's length."""
    start = time.perf_counter()
    result = hub.call("faults", "big", {"size": size}, timeout=300)
    return (time.perf_counter() - start) * 1000, text_length(result)


async def sdk_call(size: int, log_dir: Path) -> tuple[float, int]:
    """Milliseconds of one call through the MCP SDK's own stdio client (a fresh connection, not timed)."""
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    with open(log_dir / "sdk.stderr.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            start = time.perf_counter()
            result = await client.call_tool("big", {"size": size}, read_timeout_seconds=600)
            elapsed = (time.perf_counter() - start) * 1000
    return elapsed, sum(len(getattr(block, "text", "")) for block in result.content)


def run(size: int, rounds: int, with_sdk: bool) -> dict[str, Any]:
    """Measure both ways (and the SDK's once, if asked) and return the JSON report."""
    baseline_ms: list[float] = []
    hub_ms: list[float] = []
    wrong: list[str] = []

    def check(way: str, measured: tuple[float, int], into: list[float]) -> None:
        elapsed, length = measured
        into.append(elapsed)
        if length != size:
            wrong.append(f"{way}: {length} characters instead of {size}")

    report: dict[str, Any] = {"benchmark": "large_result", "size_bytes": size, "rounds": rounds}
    with tempfile.TemporaryDirectory() as tmp:
        config = ServerConfig(name="faults", transport="stdio", command=SERVER[0], args=SERVER[1:])
        baseline = PipeBaseline()
        try:
            with ToolHub([config], state_dir=Path(tmp) / ".codemode") as hub:
                hub_call(hub, 1000)  # warm-up: the first call compiles validators
                baseline.call(1000)
                for round_number in range(rounds):
                    # ABBA order: neither way always runs right after the other's server was busy.
                    if round_number % 2 == 0:
                        check("pipe", baseline.call(size), baseline_ms)
                        check("hub", hub_call(hub, size), hub_ms)
                    else:
                        check("hub", hub_call(hub, size), hub_ms)
                        check("pipe", baseline.call(size), baseline_ms)
        finally:
            baseline.close()
        if with_sdk:
            sdk_ms: list[float] = []
            check("sdk", asyncio.run(sdk_call(size, Path(tmp))), sdk_ms)
            report["sdk_stdio_client_ms"] = round(sdk_ms[0], 1)
    pipe, via_hub = statistics.median(baseline_ms), statistics.median(hub_ms)
    report.update(
        {
            "pipe_read_and_parse_median_ms": round(pipe, 1),
            "hub_call_median_ms": round(via_hub, 1),
            "ratio": round(via_hub / pipe, 2),
            "hub_mb_per_s": round(size / 1e6 / (via_hub / 1000), 1),
        }
    )
    if wrong:
        report["failed"] = wrong
    return report


def main() -> int:
    """Run the benchmark and print its JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000_000, help="characters of text in the result")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds")
    parser.add_argument("--target", type=float, default=3.0, help="the hub/pipe ratio aimed for")
    parser.add_argument("--sdk", action="store_true", help="also time the SDK's own stdio client once")
    parser.add_argument("--quick", action="store_true", help="3 rounds: a smoke run for CI")
    args = parser.parse_args()
    report = run(args.size, 3 if args.quick else args.rounds, args.sdk)
    report["target_ratio"] = args.target
    report["meets_target"] = report["ratio"] <= args.target
    print(json.dumps(report, indent=2))
    return 1 if report.get("failed") else 0


if __name__ == "__main__":
    sys.exit(main())
