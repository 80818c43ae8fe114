"""Tool calls over the worker's channel in real workers: each answer reaches its caller, whoever reads.

Calling threads read the socket themselves (leader/follower); these programs mix every kind of caller at
once and interrupt one in the middle of its call, as programs do.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor

pytestmark = pytest.mark.integration

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
CITIES = ["New York", "Los Angeles", "Chicago", "Miami", "Seattle"]


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Executor]:
    path = tmp_path_factory.mktemp("ws")
    (path / "codemode.json").write_text(json.dumps({"mcpServers": {"weather": WEATHER}}))
    with Toolbox(load_config(path / "codemode.json", cwd=path)) as tb, Executor(tb, grace=1.0) as ex:
        yield ex


MIXED = """
import asyncio, threading
cities = CITIES * 4
by_thread = {}
def ask(i, city):
    by_thread[i] = get_weather(city=city, unit="celsius").city
threads = [threading.Thread(target=ask, args=(i, c)) for i, c in enumerate(cities)]
updates = []
watched = threading.Thread(
    target=lambda: by_thread.setdefault("watched", get_forecast(
        city="Miami", days=2, delay_seconds=0.05, on_progress=updates.append).city))
for t in threads + [watched]:
    t.start()
on_main = [get_weather(city=c, unit="celsius").city for c in cities]
async def gathered():
    found = await asyncio.gather(*(atools.get_weather(city=c, unit="celsius") for c in cities))
    return [w.city for w in found]
awaited = asyncio.run(gathered())
in_parallel = [w.city for w in parallel([lambda c=c: get_weather(city=c, unit="celsius") for c in cities])]
for t in threads + [watched]:
    t.join()
{
    "threads": [by_thread[i] for i in range(len(cities))] == cities,
    "main": on_main == cities,
    "gather": awaited == cities,
    "parallel": in_parallel == cities,
    "watched": [by_thread["watched"], len(updates)],
}
"""


def test_threads_the_main_thread_tasks_and_watched_calls_each_get_their_own_answer(
    executor: Executor,
) -> None:
    result = executor.run(MIXED, inputs={"CITIES": CITIES}, timeout=120)
    assert result.status == "ok", result.error
    assert result.value == {
        "kind": "json",
        "data": {"threads": True, "main": True, "gather": True, "parallel": True, "watched": ["Miami", 2]},
    }
    assert len(result.tool_calls) == 5 * 4 * 4 + 1


def test_a_session_interrupted_in_the_middle_of_calls_answers_its_next_run_rightly(
    executor: Executor,
) -> None:
    """The deadline's SIGINT lands while the main thread reads and a thread waits too. The kernel drops
    both calls; the thread still waits (for good) when the next run's calls come, and those get theirs."""
    started = executor.run("import threading", session="interrupted")
    assert started.status == "ok"
    stuck = (
        "slow = lambda: get_forecast(city='Oslo', days=1, delay_seconds=1.5)\n"
        "threading.Thread(target=slow, daemon=True).start()\n"
        "get_forecast(city='Oslo', days=1, delay_seconds=5)"
    )
    assert executor.run(stuck, session="interrupted", timeout=1).status == "timeout"
    after = executor.run(
        "[get_weather(city=c, unit='celsius').city for c in CITIES]",
        session="interrupted",
        inputs={"CITIES": CITIES},
    )
    assert after.status == "ok", after.error
    assert after.value == {"kind": "json", "data": CITIES}
