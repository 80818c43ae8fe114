"""``codemode serve`` under load on loopback: 16 HTTP clients at once, 25 programs each, 5 tool calls each.

What a user running it for several agents would check: every program's answer is right and comes back
to the client that asked (nothing lost, nothing crossed), no worker or server process is left behind,
the server's memory does not grow with the number of programs served, and the whole load ends in
bounded time.

Odd clients speak the handshake-era protocol (2025-11-25: one MCP session per client, what hosts on the
TypeScript SDK 1.x use), even ones the 2026-07-28 protocol (each request on its own), so both paths carry
the load at once.

The config's ``defaults.serve`` is left at its defaults (poolSize 8, queueLimit 64): 8 programs run while
the other clients' wait, and none may be refused.
"""

from __future__ import annotations

import string
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client

from codemode_kernel.servers.weather import get_weather
from tests.integration.serve_support import demo_server, served_http, write_serve_config

pytestmark = pytest.mark.integration

CLIENTS = 16
CALLS_PER_CLIENT = 25
TOOL_CALLS_PER_PROGRAM = 5
WARM_UP_CALLS = 2
"""Calls per client before the memory baseline: the server's caches, pools and imports fill up first."""

RSS_GROWTH_LIMIT_MB = 20.0
"""RSS growth allowed from after the warm-up to after the 400 programs.

Measured on a 2-core machine: +3.2 to +3.7 MB over the first 400 programs, then +0.1 to +0.2 MB per further
400 (five rounds in a row): allocator arenas filling, not a leak. A leak of 50 KB per program (a kept
worker, buffer or result) would pass 20 MB.
"""
WALL_LIMIT_S = 60.0
"""Bound on the 400 programs' wall time: measured 11 to 15 s on 2 cores, so 4x room for a busy machine."""
CALL_LIMIT_S = 60.0
"""A call with no answer by then is recorded as lost (a hang), instead of stalling the test."""
SETTLE_LIMIT_S = 15.0
"""How long the server may take to be back to its idle processes once the last result is in."""

LETTERS = string.ascii_uppercase


def city(client: int, call: int, k: int) -> str:
    """A city name of its own for each tool call of the load (the weather server accepts any name)."""
    return f"Load {_letters(client)} {_letters(call)} {_letters(k)}"


def _letters(number: int) -> str:
    """``number`` (below 676) as two letters: city names may not hold digits."""
    return LETTERS[number // 26] + LETTERS[number % 26].lower()


def program(client: int, call: int) -> str:
    """Five weather calls; the value names the client and the call, and the temperatures it read."""
    cities = [city(client, call, k) for k in range(TOOL_CALLS_PER_PROGRAM)]
    return (
        f"cities = {cities!r}\n"
        "temperatures = [get_weather(city=c, unit='celsius')['temperature'] for c in cities]\n"
        f"{{'client': {client}, 'call': {call}, 'temperatures': temperatures}}\n"
    )


def expected(client: int, call: int) -> dict[str, Any]:
    """What ``program(client, call)`` must return, computed here from the weather server's own function."""
    temperatures = [
        get_weather(city(client, call, k), "celsius").temperature for k in range(TOOL_CALLS_PER_PROGRAM)
    ]
    return {"client": client, "call": call, "temperatures": temperatures}


async def _one_client(url: str, client: int, calls: range, results: dict[tuple[int, int], Any]) -> None:
    """One MCP session over Streamable HTTP making ``calls`` executions one after another.

    Every outcome is recorded under (client, call), failures included, so a test can say which went wrong.
    """
    try:
        async with Client(url, cache=None, mode="legacy" if client % 2 else "auto") as session:
            for call in calls:
                try:
                    result = await session.call_tool(
                        "execute_python", {"code": program(client, call)}, read_timeout_seconds=CALL_LIMIT_S
                    )
                except Exception as exc:
                    results[client, call] = ("raised", repr(exc))
                    continue
                record = result.structured_content or {}
                if result.is_error or record.get("status") != "ok":
                    failure = (record.get("status"), record.get("error"), result.content)
                    results[client, call] = ("failed", *failure)
                else:
                    results[client, call] = (record["value"]["data"], len(record["tool_calls"]))
    except Exception as exc:  # the session itself failed: every call not yet made is lost, say why
        for call in calls:
            results.setdefault((client, call), ("session failed", repr(exc)))


def run_load(url: str, calls: range) -> dict[tuple[int, int], Any]:
    """All clients at once, each on its own connection, each running ``calls``; results by (client, call)."""
    results: dict[tuple[int, int], Any] = {}

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for client in range(CLIENTS):
                group.start_soon(_one_client, url, client, calls, results)

    anyio.run(main)
    return results


def descendants(server: psutil.Process) -> dict[int, psutil.Process]:
    """The serve process's live descendants (zombies are dead, only not yet reaped), by pid."""
    found = {}
    for process in server.children(recursive=True):
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                found[process.pid] = process
        except psutil.NoSuchProcess:
            pass
    return found


def steady(server: psutil.Process) -> dict[int, psutil.Process]:
    """The descendants once the same pids were seen in three polls in a row (or at SETTLE_LIMIT_S).

    After a burst the executor prepares its next worker a few milliseconds later: idle means no change.
    """
    deadline = time.monotonic() + SETTLE_LIMIT_S
    seen: list[set[int]] = []
    while True:
        now = descendants(server)
        seen = [*seen[-2:], set(now)]
        if (len(seen) == 3 and seen[0] == seen[1] == seen[2]) or time.monotonic() > deadline:
            return now
        time.sleep(0.1)


def settled(server: psutil.Process, idle: int) -> dict[int, psutil.Process]:
    """The descendants once no more than ``idle`` are alive, or what is left after SETTLE_LIMIT_S."""
    deadline = time.monotonic() + SETTLE_LIMIT_S
    while True:
        now = descendants(server)
        if len(now) <= idle or time.monotonic() > deadline:
            return now
        time.sleep(0.1)


def describe(processes: dict[int, psutil.Process]) -> list[str]:
    """Each process as ``pid: command line``, for assertion messages."""
    out = []
    for pid, process in processes.items():
        try:
            out.append(f"{pid}: {' '.join(process.cmdline())}")
        except psutil.NoSuchProcess:
            out.append(f"{pid}: (exited)")
    return out


def test_sixteen_clients_times_twenty_five_programs_all_right_nothing_left(tmp_path: Path) -> None:
    config = write_serve_config(tmp_path, {"weather": demo_server("weather")})
    with served_http(tmp_path, config) as (proc, url):
        server = psutil.Process(proc.pid)
        warm = run_load(url, range(CALLS_PER_CLIENT, CALLS_PER_CLIENT + WARM_UP_CALLS))
        assert all(got[1] == TOOL_CALLS_PER_PROGRAM for got in warm.values()), warm
        idle = steady(server)
        upstream = [p for p in server.children() if "codemode_kernel.servers.weather" in p.cmdline()]
        rss_before = server.memory_info().rss

        begin = time.monotonic()
        results = run_load(url, range(CALLS_PER_CLIENT))
        wall = time.monotonic() - begin

        rss_after = server.memory_info().rss
        after = settled(server, len(idle))
        growth_mb = (rss_after - rss_before) / 2**20
        print(
            f"\nload: {len(results)} programs in {wall:.1f} s; serve RSS {rss_before / 2**20:.1f} -> "
            f"{rss_after / 2**20:.1f} MB; descendants {len(idle)} idle -> {len(after)} after"
        )

        keys = [(client, call) for client in range(CLIENTS) for call in range(CALLS_PER_CLIENT)]
        right = {key: (expected(*key), TOOL_CALLS_PER_PROGRAM) for key in keys}
        wrong = {key: results.get(key) for key in keys if results.get(key) != right[key]}
        first = next(iter(wrong.items()), None)
        assert not wrong, f"{len(wrong)} of {len(keys)} programs wrong or lost; the first: {first}"
        assert len(results) == len(keys)
        # The same weather server served the whole load (not restarted after a crash).
        assert len(upstream) == 1 and upstream[0].is_running() and upstream[0].pid in after
        assert len(after) <= len(idle), f"left running after the load: {describe(after)}"
        assert growth_mb < RSS_GROWTH_LIMIT_MB, f"serve's RSS grew {growth_mb:.1f} MB over the load"
        assert wall < WALL_LIMIT_S, f"the load took {wall:.1f} s"
    # Stopped with Ctrl-C (served_http checks exit 0): none of its processes may outlive it.
    survivors = {pid: p for pid, p in {**idle, **after}.items() if p.is_running() and p.status() != "zombie"}
    assert not survivors, f"outlived codemode serve: {describe(survivors)}"
