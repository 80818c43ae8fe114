"""The Toolbox: typed tool functions over the embedded demo servers, as a user would use them."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import default_config, load_config
from codemode_kernel.core.errors import ToolArgumentError, ToolError, ToolNameCollisionError
from codemode_kernel.core.results import Image

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory):
    workspace = tmp_path_factory.mktemp("workspace")
    (workspace / "cities.txt").write_text("New York\nLos Angeles\nChicago\nMiami\nSeattle\n")
    with Toolbox(default_config(workspace)) as tb:
        yield tb


def test_all_demo_servers_are_ready(toolbox: Toolbox) -> None:
    states = {s.name: s.state for s in toolbox.status()}
    assert states == {"weather": "ready", "workspace": "ready", "sqlite": "ready"}, toolbox.status()


def test_a_tool_is_a_typed_function(toolbox: Toolbox) -> None:
    get_weather = toolbox.tools.get_weather
    signature = inspect.signature(get_weather)
    assert list(signature.parameters) == ["city", "unit"]
    assert "celsius" in str(signature.parameters["unit"].annotation)
    assert get_weather.__name__ == "get_weather"
    assert "weather" in (get_weather.__doc__ or "").lower()
    r = get_weather(city="Seattle", unit="celsius")
    assert r.temperature == r["temperature"]
    assert isinstance(r.temperature, (int, float))
    assert toolbox.tools.get_weather("Seattle", "celsius") == r  # positional arguments too


def test_the_go_design_cities_example(toolbox: Toolbox) -> None:
    cities = toolbox.tools.read_file(path="cities.txt")
    assert isinstance(cities, str)
    temps = {c: toolbox.tools.get_weather(city=c, unit="fahrenheit").temperature for c in cities.splitlines()}
    assert list(temps) == ["New York", "Los Angeles", "Chicago", "Miami", "Seattle"]
    assert len(toolbox.hub.call_log.records()) >= 6


def test_names_index_and_groups(toolbox: Toolbox) -> None:
    assert toolbox.tools["get_weather"] is toolbox.tools.get_weather
    assert toolbox.tools["weather/get_weather"] is toolbox.tools.get_weather
    assert toolbox.by_server["sqlite"].query is toolbox.tools.query
    assert "get_weather" not in dir(toolbox.by_server["sqlite"])
    assert "get_weather" in dir(toolbox.tools) and "start" not in dir(toolbox.tools)
    with pytest.raises(AttributeError, match="did you mean get_weather"):
        _ = toolbox.tools.get_wether


def test_bad_arguments_are_refused_before_sending(toolbox: Toolbox) -> None:
    before = len(toolbox.hub.call_log.records())
    with pytest.raises(ToolArgumentError, match="unit"):
        toolbox.tools.get_weather(city="Oslo", unit="kelvin")
    with pytest.raises(ToolArgumentError, match="city"):
        toolbox.tools.get_weather(unit="celsius")
    records = toolbox.hub.call_log.records()
    assert all(r.status == "invalid_arguments" for r in records[before:])


def test_errors_images_and_files(toolbox: Toolbox) -> None:
    with pytest.raises(ToolError, match="not a city name"):
        toolbox.tools.get_weather(city="12345", unit="celsius")
    with pytest.raises(ToolError, match="outside"):
        toolbox.tools.read_file(path="../../etc/passwd")
    chart = toolbox.tools.chart(sql="select name, population from cities limit 5")
    assert isinstance(chart, Image) and chart.data.startswith(b"\x89PNG")
    rows = toolbox.tools.query(sql="select name from cities order by name limit 3")
    assert len(rows.rows) == 3
    with pytest.raises(ToolError, match="read-only"):
        toolbox.tools.query(sql="delete from cities")


def test_async_twins_run_concurrently(toolbox: Toolbox) -> None:
    async def main() -> list[float]:
        cities = ["New York", "Chicago", "Miami"]
        results = await asyncio.gather(*(toolbox.atools.get_weather(city=c, unit="celsius") for c in cities))
        return [r.temperature for r in results]

    temps = asyncio.run(main())
    assert temps == [
        toolbox.tools.get_weather(city=c, unit="celsius").temperature
        for c in ["New York", "Chicago", "Miami"]
    ]


def test_stubs_are_valid_python_and_name_every_tool(toolbox: Toolbox) -> None:
    source = toolbox.stubs()
    compile(source, "<stubs>", "exec")
    for model in toolbox.models:
        assert f"def {model.function_name}(" in source
    assert "class GetWeatherOutput" in source


def _write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def weather_server(**extra: object) -> dict:
    return {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"], **extra}


def test_collisions_fail_naming_both_tools_and_the_fix(tmp_path: Path) -> None:
    config = load_config(
        _write(tmp_path / "c.json", {"mcpServers": {"a": weather_server(), "b": weather_server()}})
    )
    with pytest.raises(ToolNameCollisionError) as info:
        Toolbox(config).start()
    message = str(info.value)
    assert "a/get_weather" in message and "b/get_weather" in message
    assert "excludedTools" in message and "prefix" in message


def test_prefix_and_excluded_tools_resolve_collisions(tmp_path: Path) -> None:
    data = {
        "mcpServers": {"a": weather_server(), "b": weather_server(prefix="b_")},
        "defaults": {"codeMode": {"enabled": True, "excludedTools": ["a/get_forecast", "get_city"]}},
    }
    with Toolbox(load_config(_write(tmp_path / "codemode.json", data))) as tb:
        names = set(dir(tb.tools))
        assert {"get_weather", "b_get_weather", "b_get_forecast"} <= names
        assert "get_forecast" not in names and "get_city" not in names and "b_get_city" not in names
        assert tb.tools.b_get_weather(city="Miami", unit="celsius") == tb.tools.get_weather(
            city="Miami", unit="celsius"
        )


def test_a_tool_added_by_the_server_appears_as_a_function(tmp_path: Path) -> None:
    from tests.conftest import QUIRKY

    data = {"mcpServers": {"quirky": {"command": sys.executable, "args": [str(QUIRKY)]}}}
    with Toolbox(load_config(_write(tmp_path / "q.json", data))) as tb:
        assert "added_0" not in tb.tools
        tb.tools.add_tool()
        deadline = time.monotonic() + 5
        while "added_0" not in tb.tools:
            assert time.monotonic() < deadline, "the new tool never appeared in tb.tools"
            time.sleep(0.05)
        assert tb.tools.added_0() == "added_0"
        assert "def added_0(" in tb.stubs()


def test_values_the_python_sdk_wraps_come_back_unwrapped_and_typed(tmp_path: Path) -> None:
    server = Path(__file__).parents[1] / "servers" / "sdk_values_server.py"
    config = _write(
        tmp_path / "codemode.json",
        {"mcpServers": {"values": {"command": sys.executable, "args": [str(server)]}}},
    )
    with Toolbox(load_config(config)) as tb:
        assert tb.tools.primes(below=12) == [2, 3, 5, 7, 11]
        assert tb.tools.count_words(text="one two three") == 3
        assert tb.tools.shout(text="hi") == "HI"
        assert tb.tools.point(x=1, y=2) == {"x": 1.0, "y": 2.0}
        assert str(inspect.signature(tb.tools.primes)) == "(below: int) -> list[int]"
        assert inspect.signature(tb.tools.count_words).return_annotation is int
        assert "def shout(text: str) -> str:" in tb.stubs()


def test_an_interrupted_call_shows_the_callers_line_not_the_hubs_wait(toolbox: Toolbox) -> None:
    """Ctrl-C (SIGINT) during a slow call: the traceback ends in the tool function, as for any function the
    user called; the hub's loop, threading and futures, where the wait happened, stay out of it."""
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            toolbox.tools.get_forecast(city="Oslo", days=3, delay_seconds=5)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 4, "the interrupt did not end the wait"
    frames = [(Path(frame.filename).name, frame.name) for frame in traceback.extract_tb(info.tb)]
    assert frames[-1] == ("function.py", "tool_function"), frames
    assert not {"loop.py", "threading.py", "_base.py", "reporting.py"} & {name for name, _ in frames}, frames
    assert info.value.__suppress_context__
    quick = toolbox.tools.get_forecast(city="Oslo", days=1, delay_seconds=0)
    assert len(quick["days"]) == 1  # the server and the connection carry on
