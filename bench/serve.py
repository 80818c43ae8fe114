"""What ``codemode serve`` costs a client, and what it saves: latency, per-call overhead, load, bytes.

Everything runs against the embedded weather server (``python -m codemode_kernel.servers.weather``), in
one run, each comparison against a baseline measured in the same run, in alternating order so machine
noise hits both ways alike:

- latency: one program (one ``get_weather`` call) as ``execute_python`` through ``codemode serve`` over
  stdio and over Streamable HTTP (the MCP SDK's client), versus the same program run by ``Executor``
  in this process; each sample after an idle pause, as between a model's calls.
- tool_call: a program making N calls through serve (stdio), versus N calls the client makes itself to
  the weather server (SDK client, stdio): the marginal cost of a call inside a program,
  (t(N calls) - t(no call)) / N, against one direct call.
- load: CLIENTS concurrent HTTP clients, each making CALLS executions of a program with 5 calls: wall
  time, throughput and the p50/p99 of each execution as its client saw it.
- long_runs: the same one-call program as one foreground ``execute_python`` (its wait long enough)
  versus started with ``wait_s=0`` and collected with one ``wait_execution``, over stdio and over HTTP
  (the SDK's default protocol, and the initialize handshake with an MCP session): what coming back
  costs; and how long a program's ``notify()`` takes to end a waiting ``wait_execution`` (the program
  stamps the note with its clock, the client reads its own on the answer: one machine).
- weather_task: forecasts for several cities, pick the warmest, then its current weather: one
  ``execute_python`` call versus the N+1 tool calls a client makes without code mode. Round trips are the
  JSON-RPC requests the client sent; bytes are every JSON-RPC message in either direction, counted
  between the SDK client and its transport and serialized as the SDK puts them on the wire (compact JSON,
  camelCase, unset fields left out); transport framing (HTTP headers, SSE lines, newlines) is not
  counted, and is the same per message either way.

Prints one JSON object. A benchmark, not a test: timing never fails CI, so the exit code is 0 whatever
the numbers. The exit code is 1 when an execution or a call fails (the section holds the error and
"failed" lists it).

    python bench/serve.py [--quick] [--samples 100] [--calls 50] [--clients 16] ... (see --help)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from _presets import add_counts, chosen_counts
from mcp import Client, StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config, resolve_code_mode
from codemode_kernel.executor import Executor
from codemode_kernel.servers.weather import get_weather

WEATHER = [sys.executable, "-m", "codemode_kernel.servers.weather"]
IDLE_SECONDS = 0.1
"""Pause before each latency sample: between a model's calls the executor prepares its next worker."""
CITIES = (
    "Oslo", "Lima", "Cairo", "Perth", "Quito", "Seattle", "Nairobi", "Reykjavik", "Hanoi", "Santiago",
    "Lisbon", "Denver", "Dakar", "Tokyo", "Sydney", "Toronto", "Madrid", "Mumbai", "Havana", "Auckland",
)  # fmt: skip

FULL = {
    "samples": 100,
    "calls": 50,
    "rounds": 20,
    "clients": 16,
    "per_client": 25,
    "cities": 10,
    "tasks": 10,
    "waits": 50,
}
QUICK = {
    "samples": 15,
    "calls": 20,
    "rounds": 3,
    "clients": 8,
    "per_client": 5,
    "cities": 5,
    "tasks": 2,
    "waits": 15,
}
HELP = {
    "samples": "latency samples per way",
    "calls": "tool calls in the program of the tool_call comparison (N)",
    "rounds": "rounds of the tool_call comparison",
    "clients": "concurrent HTTP clients in the load",
    "per_client": "executions per client in the load",
    "cities": "cities in the weather task",
    "tasks": "times the weather task is done each way (for its wall time)",
    "waits": "samples of each way of long_runs, per transport (foreground, started and collected, a note)",
}

ONE_CALL = 'get_weather(city="Oslo", unit="celsius")["temperature"]\n'
LOAD_CALLS = 5
NOTE_AFTER_S = 0.1
"""How long the note program runs before its note: the client's wait_execution is in place by then."""
NOTE_PROGRAM = f"import time\ntime.sleep({NOTE_AFTER_S})\nnotify('ping', t=time.time())\ntime.sleep(60)\n"
STILL_RUNNING = ("running", "queued")


class Failed(RuntimeError):
    """An execution or a call the benchmark relies on failed: its timings would mean nothing."""


# -- helpers ---------------------------------------------------------------------------------------------


def median(samples: list[float]) -> float:
    """The median, rounded to microseconds (samples are in milliseconds)."""
    return round(statistics.median(samples), 3)


def percentile(samples: list[float], pct: int) -> float:
    """The ``pct``-th percentile (nearest rank), rounded like ``median``."""
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return round(ordered[rank], 3)


def call_loop(n: int) -> str:
    """A program making ``n`` sequential ``get_weather`` calls; its value is ``n``."""
    return f"for _ in range({n}):\n    get_weather(city='Oslo', unit='celsius')\n{n}\n"


def load_program(client: int, call: int) -> str:
    """LOAD_CALLS calls; the value depends on the client and the call, so a mixed-up answer would show."""
    return (
        "temps = [get_weather(city=c, unit='celsius')['temperature'] for c in "
        f"{list(CITIES[:LOAD_CALLS])!r}]\n"
        f"[{client}, {call}, round(sum(temps), 1)]\n"
    )


def weather_program(cities: list[str]) -> str:
    """The weather task in one program: N forecasts, the warmest city, its current weather."""
    return (
        f"forecasts = [get_forecast(city=c, days=3, delay_seconds=0) for c in {cities!r}]\n"
        "best = max(forecasts, key=lambda f: max(d.temperature for d in f.days))\n"
        "now = get_weather(city=best.city, unit='celsius')\n"
        "{'warmest': best.city, 'peak': max(d.temperature for d in best.days), 'now': now.temperature}\n"
    )


def ok_value(result: Any) -> Any:
    """The JSON value of an ``execute_python`` result that ended ok; otherwise Failed with its error."""
    record = result.structured_content or {}
    if result.is_error or record.get("status") != "ok":
        raise Failed(f"execute_python ended {record.get('status')}: {json.dumps(record.get('error'))}")
    return record["value"]["data"]


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- counting what crosses the wire ----------------------------------------------------------------------


class Wire:
    """Requests sent and JSON-RPC bytes in each direction, counted as the SDK serializes messages."""

    def __init__(self) -> None:
        self.requests = 0
        self.sent = 0
        self.received = 0

    def snapshot(self) -> tuple[int, int, int]:
        """The counters now, to subtract later."""
        return self.requests, self.sent, self.received

    def since(self, before: tuple[int, int, int]) -> dict[str, int]:
        """What was counted after ``before``."""
        return {
            "round_trips": self.requests - before[0],
            "bytes_sent": self.sent - before[1],
            "bytes_received": self.received - before[2],
        }


def _size(message: SessionMessage) -> int:
    return len(message.message.model_dump_json(by_alias=True, exclude_unset=True).encode())


class _CountingRead:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner, self._wire = inner, wire

    async def receive(self) -> Any:
        item = await self._inner.receive()
        if isinstance(item, SessionMessage):
            self._wire.received += _size(item)
        return item

    def __aiter__(self) -> _CountingRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _CountingRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # last_context and whatever else the session reads
        return getattr(self._inner, name)


class _CountingWrite:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner, self._wire = inner, wire

    async def send(self, item: SessionMessage) -> None:
        self._wire.sent += _size(item)
        if (
            getattr(item.message, "method", None) is not None
            and getattr(item.message, "id", None) is not None
        ):
            self._wire.requests += 1
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _CountingWrite:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@asynccontextmanager
async def counted(transport: Any, wire: Wire) -> AsyncIterator[tuple[Any, Any]]:
    """``transport``'s streams, with every message counted in ``wire``."""
    async with transport as (read, write):
        yield _CountingRead(read, wire), _CountingWrite(write, wire)


# -- the processes ---------------------------------------------------------------------------------------


def serve_argv(config: Path, *extra: str) -> list[str]:
    """``codemode serve`` with this interpreter."""
    return [sys.executable, "-m", "codemode_kernel.cli", "serve", "--config", str(config), *extra]


@asynccontextmanager
async def serve_http(config: Path, workspace: Path) -> AsyncIterator[str]:
    """``codemode serve --transport http`` on a free loopback port until the block ends (then Ctrl-C)."""
    port = free_port()
    with open(workspace / "serve-http.log", "wb") as log:
        proc = subprocess.Popen(
            serve_argv(config, "--transport", "http", "--port", str(port)),
            cwd=workspace,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise Failed(f"codemode serve --transport http exited with {proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise Failed("codemode serve --transport http did not listen within 60 s") from None
                await anyio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def stdio(argv: list[str], workspace: Path, log: Any) -> Any:
    """The SDK's stdio transport to ``argv``, run in ``workspace`` with this environment."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ), cwd=workspace)
    return stdio_client(params, errlog=log)


# -- the measurements -------------------------------------------------------------------------------------


async def timed(action: Callable[[], Awaitable[Any]]) -> float:
    """Milliseconds ``action`` takes."""
    begin = time.perf_counter()
    await action()
    return (time.perf_counter() - begin) * 1000


async def measure_latency(
    executor: Executor, over_stdio: Client, over_http: Client, samples: int
) -> dict[str, Any]:
    """One program each way, each sample after an idle pause, the order rotated sample by sample."""

    async def in_process() -> None:
        result = await executor.arun(ONE_CALL)
        if result.status != "ok":
            raise Failed(f"Executor.run ended {result.status}: {json.dumps(result.error)}")

    async def through(client: Client) -> None:
        ok_value(await client.call_tool("execute_python", {"code": ONE_CALL}))

    ways: dict[str, Callable[[], Awaitable[None]]] = {
        "executor": in_process,
        "serve_stdio": lambda: through(over_stdio),
        "serve_http": lambda: through(over_http),
    }
    names = list(ways)
    times: dict[str, list[float]] = {name: [] for name in names}
    for sample in range(samples):
        for name in names[sample % 3 :] + names[: sample % 3]:
            await anyio.sleep(IDLE_SECONDS)
            times[name].append(await timed(ways[name]))
    base = median(times["executor"])
    report: dict[str, Any] = {"samples": samples, "idle_before_each_s": IDLE_SECONDS, "program": ONE_CALL}
    for name in names:
        report[f"{name}_median_ms"] = median(times[name])
        report[f"{name}_p90_ms"] = percentile(times[name], 90)
    report["stdio_ratio"] = round(median(times["serve_stdio"]) / base, 3)
    report["http_ratio"] = round(median(times["serve_http"]) / base, 3)
    return report


async def measure_tool_call(
    executor: Executor, serve: Client, weather: Client, calls: int, rounds: int
) -> dict[str, Any]:
    """N calls in one program (through serve, and by Executor here) versus N calls from the client.

    Each program is also run with no call, so the per-call cost is (t(N calls) - t(no call)) / N, with
    everything a call adds included: the trip from the worker, the record of the call, its bytes back.
    """
    args = {"city": "Oslo", "unit": "celsius"}
    times: dict[str, list[float]] = {"serve_n": [], "serve_0": [], "executor_n": [], "executor_0": []}
    direct: list[float] = []  # each direct call
    direct_rounds: list[float] = []  # N direct calls, back to back

    async def through_serve(n: int) -> None:
        begin = time.perf_counter()
        if ok_value(await serve.call_tool("execute_python", {"code": call_loop(n)})) != n:
            raise Failed("the call loop returned the wrong count")
        times[f"serve_{'n' if n else 0}"].append((time.perf_counter() - begin) * 1000)

    async def in_process(n: int) -> None:
        begin = time.perf_counter()
        result = await executor.arun(call_loop(n))
        if result.status != "ok":
            raise Failed(f"Executor.run ended {result.status}: {json.dumps(result.error)}")
        times[f"executor_{'n' if n else 0}"].append((time.perf_counter() - begin) * 1000)

    async def direct_calls() -> None:
        begin = time.perf_counter()
        for _ in range(calls):
            direct.append(await timed(lambda: weather.call_tool("get_weather", args)))
        direct_rounds.append((time.perf_counter() - begin) * 1000)

    steps: list[Callable[[], Awaitable[None]]] = [
        lambda: through_serve(calls),
        lambda: through_serve(0),
        lambda: in_process(calls),
        lambda: in_process(0),
        direct_calls,
    ]
    for round_number in range(rounds):
        for step in steps if round_number % 2 == 0 else reversed(steps):
            await anyio.sleep(IDLE_SECONDS)  # every execution starts with its next worker prepared
            await step()
    serve_call = (median(times["serve_n"]) - median(times["serve_0"])) / calls
    executor_call = (median(times["executor_n"]) - median(times["executor_0"])) / calls
    direct_call = median(direct)
    return {
        "calls": calls,
        "rounds": rounds,
        "serve_program_median_ms": median(times["serve_n"]),
        "serve_empty_program_median_ms": median(times["serve_0"]),
        "executor_program_median_ms": median(times["executor_n"]),
        "executor_empty_program_median_ms": median(times["executor_0"]),
        "direct_calls_median_ms": median(direct_rounds),
        "per_call_serve_ms": round(serve_call, 3),
        "per_call_executor_ms": round(executor_call, 3),
        "direct_call_median_ms": direct_call,
        "direct_call_p90_ms": percentile(direct, 90),
        "per_call_ratio": round(serve_call / direct_call, 3),
        "per_call_executor_ratio": round(executor_call / direct_call, 3),
        "whole_ratio": round(median(times["serve_n"]) / median(direct_rounds), 3),
    }


async def measure_load(url: str, clients: int, per_client: int) -> dict[str, Any]:
    """``clients`` HTTP clients at once, each running ``per_client`` programs of LOAD_CALLS calls."""
    latencies: list[float] = []
    durations: list[float] = []  # the record's duration_ms: the execution alone, without waiting or MCP
    errors: list[str] = []
    expected = round(sum(_temperature(city) for city in CITIES[:LOAD_CALLS]), 1)

    async def one(client: int) -> None:
        try:
            async with Client(url, cache=None) as session:
                for call in range(per_client):
                    begin = time.perf_counter()
                    result = await session.call_tool("execute_python", {"code": load_program(client, call)})
                    latencies.append((time.perf_counter() - begin) * 1000)
                    durations.append((result.structured_content or {}).get("duration_ms", 0.0))
                    try:
                        value = ok_value(result)
                    except Failed as exc:
                        errors.append(str(exc))
                        continue
                    if value != [client, call, expected]:
                        errors.append(f"client {client} call {call}: wrong value {value}")
        except Exception as exc:
            errors.append(f"client {client}: {exc!r}")

    begin = time.perf_counter()
    async with anyio.create_task_group() as group:
        for client in range(clients):
            group.start_soon(one, client)
    wall = time.perf_counter() - begin
    programs = clients * per_client
    report: dict[str, Any] = {
        "clients": clients,
        "executions_per_client": per_client,
        "tool_calls_per_execution": LOAD_CALLS,
        "executions": programs,
        "answered": len(latencies),
        "correct": programs - len(errors),
        "wall_s": round(wall, 2),
        "executions_per_s": round(programs / wall, 1),
        "p50_ms": percentile(latencies, 50) if latencies else None,
        "p99_ms": percentile(latencies, 99) if latencies else None,
        "max_ms": round(max(latencies), 3) if latencies else None,
        "execution_p50_ms": percentile(durations, 50) if durations else None,
        "execution_p99_ms": percentile(durations, 99) if durations else None,
    }
    if errors:
        report["error"] = f"{len(errors)} executions failed or were wrong, e.g. {errors[0]}"
    return report


def _record(result: Any) -> dict[str, Any]:
    """The structured record of a result; Failed with its text when there is none (a refused call)."""
    if result.structured_content is None:
        raise Failed("".join(getattr(block, "text", "") for block in result.content))
    record: dict[str, Any] = result.structured_content
    return record


async def started_then_collected(client: Client) -> str:
    """ONE_CALL started with ``wait_s=0``, then waited for with ``wait_execution``; the first answer's status.

    The first answer is ``running``, or ``queued`` (the program had no place yet), unless the program ended
    within the call; either way the value is checked.
    """
    answer = await client.call_tool("execute_python", {"code": ONE_CALL, "wait_s": 0})
    first = _record(answer)
    while _record(answer)["status"] in STILL_RUNNING:
        answer = await client.call_tool(
            "wait_execution", {"execution_id": first["execution_id"], "wait_s": 60}
        )
    ok_value(answer)
    return str(first["status"])


async def note_latency(client: Client) -> float | None:
    """Milliseconds from NOTE_PROGRAM's ``notify()`` to the answer of the ``wait_execution`` it woke.

    None when the note came before the wait was sent (the sample would time the request, not the wake).
    The program is cancelled after, untimed.
    """
    first = _record(await client.call_tool("execute_python", {"code": NOTE_PROGRAM, "wait_s": 0}))
    if first["status"] not in STILL_RUNNING:
        raise Failed(f"the note program ended {first['status']} at once: {json.dumps(first.get('error'))}")
    ident = first["execution_id"]
    try:
        sent = time.time()
        woken = _record(await client.call_tool("wait_execution", {"execution_id": ident, "wait_s": 30}))
        answered = time.time()
    finally:
        await client.call_tool("cancel_execution", {"execution_id": ident})
    notes = first["notes"] + woken["notes"]
    if not notes:
        raise Failed(f"wait_execution ended {woken['status']} without the program's note")
    stamped = float(notes[0]["data"]["t"])
    return None if stamped < sent else (answered - stamped) * 1000


async def long_runs_over(client: Client, waits: int) -> dict[str, Any]:
    """Foreground versus started and collected (p50/p95) through ``client``, then the note's latency."""
    foreground: list[float] = []
    collected: list[float] = []
    first_status: dict[str, int] = {}

    async def in_foreground() -> None:
        ok_value(await client.call_tool("execute_python", {"code": ONE_CALL, "wait_s": 60}))

    async def in_background() -> None:
        status = await started_then_collected(client)
        first_status[status] = first_status.get(status, 0) + 1

    for sample in range(waits):
        ways = [(foreground, in_foreground), (collected, in_background)]
        for times, way in ways if sample % 2 == 0 else reversed(ways):
            await anyio.sleep(IDLE_SECONDS)
            times.append(await timed(way))
    latencies: list[float] = []
    for _ in range(waits):
        await anyio.sleep(IDLE_SECONDS)
        if (latency := await note_latency(client)) is not None:
            latencies.append(latency)
    return {
        "foreground_p50_ms": percentile(foreground, 50),
        "foreground_p95_ms": percentile(foreground, 95),
        "started_then_collected_p50_ms": percentile(collected, 50),
        "started_then_collected_p95_ms": percentile(collected, 95),
        "overhead_per_round_trip_ms": round(percentile(collected, 50) - percentile(foreground, 50), 3),
        "first_answer_status": first_status,
        "note_to_answer_p50_ms": percentile(latencies, 50) if latencies else None,
        "note_to_answer_p95_ms": percentile(latencies, 95) if latencies else None,
        "note_before_wait": waits - len(latencies),
    }


async def measure_long_runs(clients: dict[str, Client], waits: int) -> dict[str, Any]:
    """``long_runs_over`` each client in turn, with the protocol version it speaks."""
    report: dict[str, Any] = {"samples": waits, "program": ONE_CALL, "note_program": NOTE_PROGRAM}
    for name, client in clients.items():
        report[name] = {"protocol": client.protocol_version, **await long_runs_over(client, waits)}
    return report


def _temperature(city: str) -> float:
    """The temperature the weather server gives ``city``, from its own function."""
    return get_weather(city, "celsius").temperature


async def measure_weather_task(
    serve: Client, serve_wire: Wire, weather: Client, weather_wire: Wire, cities: int, tasks: int
) -> dict[str, Any]:
    """The task as one execute_python call versus N+1 direct calls: round trips, bytes, wall time."""
    names = list(CITIES[:cities])
    code = weather_program(names)

    async def one_program() -> tuple[Any, dict[str, int], int]:
        before = serve_wire.snapshot()
        result = await serve.call_tool("execute_python", {"code": code})
        answer = ok_value(result)
        text = sum(len(c.text.encode()) for c in result.content if getattr(c, "type", "") == "text")
        return answer, serve_wire.since(before), text

    async def direct() -> tuple[Any, dict[str, int], int]:
        before = weather_wire.snapshot()
        text = 0
        forecasts = []
        for city in names:
            result = await weather.call_tool("get_forecast", {"city": city, "days": 3, "delay_seconds": 0})
            if result.is_error or result.structured_content is None:
                raise Failed(f"get_forecast({city!r}) failed: {result.content}")
            forecasts.append(result.structured_content)
            text += sum(len(c.text.encode()) for c in result.content if getattr(c, "type", "") == "text")
        best = max(forecasts, key=lambda f: max(d["temperature"] for d in f["days"]))
        now = await weather.call_tool("get_weather", {"city": best["city"], "unit": "celsius"})
        if now.is_error or now.structured_content is None:
            raise Failed(f"get_weather failed: {now.content}")
        text += sum(len(c.text.encode()) for c in now.content if getattr(c, "type", "") == "text")
        peak = max(d["temperature"] for d in best["days"])
        answer = {"warmest": best["city"], "peak": peak, "now": now.structured_content["temperature"]}
        return answer, weather_wire.since(before), text

    ways = {"execute_python": one_program, "direct": direct}
    walls: dict[str, list[float]] = {name: [] for name in ways}
    last: dict[str, tuple[Any, dict[str, int], int]] = {}
    for task in range(tasks):
        for name in list(ways) if task % 2 == 0 else list(reversed(ways)):
            begin = time.perf_counter()
            last[name] = await ways[name]()
            walls[name].append((time.perf_counter() - begin) * 1000)
    report: dict[str, Any] = {"cities": cities, "tasks": tasks}
    for name in ways:
        answer, wire, text = last[name]
        report[name] = {
            **wire,
            "bytes_total": wire["bytes_sent"] + wire["bytes_received"],
            "result_text_bytes": text,
            "wall_median_ms": median(walls[name]),
            "answer": answer,
        }
    report["same_answer"] = last["execute_python"][0] == last["direct"][0]
    if not report["same_answer"]:
        report["error"] = "the two ways found different answers"
    ours, theirs = report["execute_python"], report["direct"]
    report["round_trip_ratio"] = round(ours["round_trips"] / theirs["round_trips"], 3)
    report["bytes_ratio"] = round(ours["bytes_total"] / theirs["bytes_total"], 3)
    report["result_text_ratio"] = round(ours["result_text_bytes"] / theirs["result_text_bytes"], 3)
    return report


async def listing_bytes(client: Client, wire: Wire) -> int:
    """Bytes of one tools/list exchange: what a host reads once per connection."""
    before = wire.snapshot()
    await client.list_tools()
    return wire.since(before)["bytes_received"]


async def measured(
    report: dict[str, Any], name: str, measure: Callable[[], Awaitable[dict[str, Any]]]
) -> None:
    """Put ``measure()`` under ``name``, or the error of the execution or call that failed it."""
    try:
        report[name] = await measure()
    except Failed as exc:
        report[name] = {"error": str(exc)}


async def run_all(options: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """Start everything in ``workspace``, measure each section, stop everything."""
    config_path = workspace / "codemode.json"
    config_path.write_text(
        json.dumps({"mcpServers": {"weather": {"command": WEATHER[0], "args": WEATHER[1:]}}})
    )
    config = load_config(config_path, cwd=workspace)
    settings = resolve_code_mode(config, None).model_copy(update={"enabled": True})  # as serve does
    report: dict[str, Any] = {}
    serve_wire, weather_wire = Wire(), Wire()
    with (
        open(workspace / "serve-stdio.log", "w") as stdio_log,
        open(workspace / "weather.log", "w") as weather_log,
    ):
        async with AsyncExitStack() as stack:
            toolbox = stack.enter_context(Toolbox(config))
            executor = stack.enter_context(Executor(toolbox, settings=settings))
            url = await stack.enter_async_context(serve_http(config_path, workspace))
            over_stdio = Client(
                counted(stdio(serve_argv(config_path), workspace, stdio_log), serve_wire), cache=None
            )
            weather = Client(counted(stdio(WEATHER, workspace, weather_log), weather_wire), cache=None)
            over_http = Client(url, cache=None)
            handshake = Client(url, cache=None, mode="legacy")  # as hosts on the TypeScript SDK connect
            for client in (over_stdio, weather, over_http, handshake):
                await stack.enter_async_context(client)
            report["tools_list_bytes"] = {
                "serve": await listing_bytes(over_stdio, serve_wire),
                "weather": await listing_bytes(weather, weather_wire),
            }
            for _ in range(3):  # warm-up, not counted: workers, imports and connections ready everywhere
                await executor.arun(ONE_CALL)
                ok_value(await over_stdio.call_tool("execute_python", {"code": ONE_CALL}))
                ok_value(await over_http.call_tool("execute_python", {"code": ONE_CALL}))
                ok_value(await handshake.call_tool("execute_python", {"code": ONE_CALL}))
                await weather.call_tool("get_weather", {"city": "Oslo", "unit": "celsius"})
            samples, calls, rounds = options["samples"], options["calls"], options["rounds"]
            await measured(
                report, "latency", lambda: measure_latency(executor, over_stdio, over_http, samples)
            )
            await measured(
                report, "tool_call", lambda: measure_tool_call(executor, over_stdio, weather, calls, rounds)
            )
            await measured(
                report, "load", lambda: measure_load(url, options["clients"], options["per_client"])
            )
            await measured(
                report,
                "long_runs",
                lambda: measure_long_runs(
                    {"stdio": over_stdio, "http": over_http, "http_handshake": handshake}, options["waits"]
                ),
            )
            await measured(
                report,
                "weather_task",
                lambda: measure_weather_task(
                    over_stdio, serve_wire, weather, weather_wire, options["cities"], options["tasks"]
                ),
            )
    return report


async def interruptible(options: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """``run_all``, stopped cleanly by Ctrl-C or SIGTERM: every client, server and process is closed.

    The signal cancels the task group, so every ``await`` from then on is cancelled, not only the
    one running when it came (asyncio's own SIGINT handling cancels the task once, and a library that
    absorbs that one cancellation would let the benchmark run on); KeyboardInterrupt is raised after.
    """
    interrupted = False
    report: dict[str, Any] = {}
    async with anyio.create_task_group() as group:

        async def watch(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            nonlocal interrupted
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                task_status.started()
                async for _ in signals:
                    interrupted = True
                    group.cancel_scope.cancel()
                    return

        await group.start(watch)  # listening before anything starts
        report = await run_all(options, workspace)
        group.cancel_scope.cancel()
    if interrupted:
        raise KeyboardInterrupt
    return report


def run(options: dict[str, Any]) -> dict[str, Any]:
    """The whole JSON report."""
    report: dict[str, Any] = {
        "benchmark": "serve",
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        },
        "options": options,
    }
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="codemode-bench-serve-") as folder:
        report |= anyio.run(interruptible, options, Path(folder))
    report["failed"] = sorted(
        name for name, section in report.items() if isinstance(section, dict) and "error" in section
    )
    report["elapsed_s"] = round(time.perf_counter() - began, 1)
    return report


def main() -> int:
    """Parse the options, run the benchmark and print its JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run for CI (about 35 s)")
    add_counts(parser, HELP, FULL, QUICK)
    args = parser.parse_args()
    options = chosen_counts(parser, args, HELP, FULL, QUICK)
    if options["cities"] > len(CITIES):
        parser.error(f"--cities can be at most {len(CITIES)}")
    try:
        report = run(options)
    except Failed as exc:  # the set-up or the warm-up failed: nothing can be measured
        print(f"bench/serve.py: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench/serve.py: interrupted; everything it started is stopped", file=sys.stderr)
        return 130
    print(json.dumps(report, indent=2))
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
