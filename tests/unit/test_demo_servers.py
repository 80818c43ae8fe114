"""The embedded demo servers, checked the way a user meets them: through a real MCP client.

Most tests connect in memory (``Client(build_server(...))``); one test per server starts it as a real
stdio subprocess with ``sys.executable -m ...``, exactly as the default config does.
"""

from __future__ import annotations

import base64
import sqlite3
import struct
import sys
import threading
import time
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ImageContent, TextContent

from codemode_kernel.core.errors import ConfigError
from codemode_kernel.servers import DEMO_SERVERS, demo_server_command, sqlite, weather, workspace
from codemode_kernel.servers._sample_db import default_database_path, ensure_sample_database

pytestmark = pytest.mark.anyio

CITIES_TXT = ["New York", "Los Angeles", "Chicago", "Miami", "Seattle"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def call(server: MCPServer[Any], tool: str, **arguments: Any) -> CallToolResult:
    async with Client(server) as client:
        return await client.call_tool(tool, arguments)


def error_text(result: CallToolResult) -> str:
    assert result.is_error is True
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def tools_by_name(server: MCPServer[Any]) -> dict[str, Any]:
    async with Client(server) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


@asynccontextmanager
async def stdio_server(module: str, *args: str, log_dir: Path) -> AsyncIterator[Client]:
    """Start a demo server as a subprocess, as the kernel would, and connect to it over stdio."""
    params = StdioServerParameters(command=sys.executable, args=["-m", module, *args])
    with (log_dir / "server-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


# --- registry -------------------------------------------------------------------------------------------


def test_demo_server_command_runs_each_module_with_this_interpreter(tmp_path: Path) -> None:
    assert set(DEMO_SERVERS) == {"weather", "workspace", "sqlite"}
    assert demo_server_command("weather", tmp_path) == [
        sys.executable,
        "-P",
        "-m",
        "codemode_kernel.servers.weather",
    ]
    assert demo_server_command("sqlite", tmp_path) == [
        sys.executable,
        "-P",
        "-m",
        "codemode_kernel.servers.sqlite",
    ]
    assert demo_server_command("workspace", tmp_path) == [
        sys.executable,
        "-P",
        "-m",
        "codemode_kernel.servers.workspace",
        "--root",
        str(tmp_path),
    ]


def test_demo_server_command_names_the_known_servers_for_an_unknown_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="weather, workspace, sqlite"):
        demo_server_command("wether", tmp_path)


@pytest.mark.parametrize("module", [weather, workspace, sqlite])
def test_every_server_has_a_help_with_its_transport_options(
    module: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        module.main(["--help"])
    assert exited.value.code == 0
    assert "--transport {stdio,http}" in capsys.readouterr().out


# --- weather --------------------------------------------------------------------------------------------


async def test_weather_tools_declare_their_output_schemas() -> None:
    tools = await tools_by_name(weather.build_server())
    assert set(tools) == {"get_city", "get_weather", "get_forecast"}
    assert tools["get_city"].description.startswith("Get current city location")
    assert tools["get_city"].output_schema["properties"]["city"]["type"] == "string"
    weather_tool = tools["get_weather"]
    assert weather_tool.output_schema["properties"]["temperature"]["type"] == "number"
    properties = weather_tool.input_schema["properties"]
    assert properties["city"]["description"] == "The name of the city to get weather for"
    assert properties["unit"]["description"] == "Temperature unit for the weather response"
    assert properties["unit"]["enum"] == ["celsius", "fahrenheit"]


async def test_get_city_returns_the_demo_city() -> None:
    result = await call(weather.build_server(), "get_city")
    assert result.structured_content == {"city": "New York"}


async def test_get_weather_gives_the_same_temperature_every_time_and_for_any_spelling() -> None:
    server = weather.build_server()
    first = await call(server, "get_weather", city="Seattle", unit="celsius")
    again = await call(server, "get_weather", city="  seattle ", unit="celsius")
    assert first.is_error is False
    assert first.structured_content == again.structured_content
    assert first.structured_content is not None
    assert isinstance(first.structured_content["temperature"], float)
    assert first.structured_content["city"] == "Seattle"


async def test_get_weather_converts_units_consistently() -> None:
    server = weather.build_server()
    celsius = await call(server, "get_weather", city="Tokyo", unit="celsius")
    fahrenheit = await call(server, "get_weather", city="Tokyo", unit="fahrenheit")
    assert celsius.structured_content is not None and fahrenheit.structured_content is not None
    assert fahrenheit.structured_content["unit"] == "fahrenheit"
    expected = celsius.structured_content["temperature"] * 9 / 5 + 32
    assert fahrenheit.structured_content["temperature"] == pytest.approx(expected, abs=0.2)


async def test_get_weather_of_something_not_a_city_is_an_error_naming_it() -> None:
    text = error_text(await call(weather.build_server(), "get_weather", city="12345", unit="celsius"))
    assert "'12345' is not a city name" in text


async def test_get_weather_of_an_unlisted_city_is_stable_demo_data() -> None:
    first = await call(weather.build_server(), "get_weather", city="Oslo", unit="celsius")
    again = await call(weather.build_server(), "get_weather", city="  oslo ", unit="celsius")
    assert first.structured_content is not None and again.structured_content is not None
    assert first.structured_content["city"] == again.structured_content["city"] == "Oslo"
    assert first.structured_content["temperature"] == again.structured_content["temperature"]
    other = await call(weather.build_server(), "get_weather", city="Bergen", unit="celsius")
    assert other.structured_content is not None
    assert other.structured_content["temperature"] != first.structured_content["temperature"]


async def test_get_weather_of_an_empty_city_is_an_error() -> None:
    text = error_text(await call(weather.build_server(), "get_weather", city=" ", unit="celsius"))
    assert "city name is empty" in text


async def test_get_forecast_reports_progress_after_each_day() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(weather.build_server()) as client:
        result = await client.call_tool(
            "get_forecast", {"city": "Miami", "days": 3, "delay_seconds": 0.01}, progress_callback=on_progress
        )
    assert result.structured_content is not None
    assert [day["day"] for day in result.structured_content["days"]] == [1, 2, 3]
    assert [(progress, total) for progress, total, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert seen[-1][2] == "Miami: day 3 of 3"


async def test_get_forecast_refuses_a_delay_over_the_maximum() -> None:
    result = await call(weather.build_server(), "get_forecast", city="Miami", delay_seconds=600)
    assert "delay_seconds" in error_text(result)


async def test_get_forecast_stops_at_the_client_timeout() -> None:
    started = time.monotonic()
    async with Client(weather.build_server()) as client:
        with pytest.raises(MCPError):
            await client.call_tool(
                "get_forecast", {"city": "Miami", "days": 7, "delay_seconds": 10}, read_timeout_seconds=0.2
            )
    assert time.monotonic() - started < 5


async def test_weather_over_stdio_matches_the_in_memory_server(tmp_path: Path) -> None:
    expected = await call(weather.build_server(), "get_weather", city="New York", unit="fahrenheit")
    async with stdio_server("codemode_kernel.servers.weather", log_dir=tmp_path) as client:
        result = await client.call_tool("get_weather", {"city": "New York", "unit": "fahrenheit"})
    # Another process with another hash seed: a stable demo temperature must not notice.
    assert result.structured_content == expected.structured_content


# --- workspace ------------------------------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "notes").mkdir(parents=True)
    (root / "cities.txt").write_text("\n".join(CITIES_TXT) + "\n")
    (root / "notes" / "trip.md").write_text("# Trip\nFly to chicago on Monday\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("chicago in a hidden directory\n")
    (tmp_path / "secret.txt").write_text("outside the workspace\n")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    return root


async def test_workspace_read_file_is_the_tool_without_an_output_schema(root: Path) -> None:
    tools = await tools_by_name(workspace.build_server(root))
    assert set(tools) == {"list_files", "read_file", "write_file", "search_files"}
    assert tools["read_file"].output_schema is None
    assert tools["list_files"].output_schema is not None
    assert tools["write_file"].annotations.destructive_hint is True


async def test_read_file_returns_the_text_of_cities_txt(root: Path) -> None:
    result = await call(workspace.build_server(root), "read_file", path="cities.txt")
    assert result.is_error is False
    assert result.structured_content is None
    block = result.content[0]
    assert isinstance(block, TextContent)
    assert block.text.splitlines() == CITIES_TXT


async def test_list_files_gives_name_type_and_size(root: Path) -> None:
    result = await call(workspace.build_server(root), "list_files")
    assert result.structured_content is not None
    entries = {entry["name"]: entry for entry in result.structured_content["result"]}
    assert entries["cities.txt"] == {"name": "cities.txt", "path": "cities.txt", "type": "file", "size": 43}
    assert entries["notes"]["type"] == "directory"
    assert entries["escape"]["type"] == "symlink"

    only_text = await call(workspace.build_server(root), "list_files", pattern="*.txt")
    assert only_text.structured_content == {"result": [entries["cities.txt"]]}


async def test_write_file_then_read_it_back(root: Path) -> None:
    server = workspace.build_server(root)
    written = await call(server, "write_file", path="out/report.txt", content="Seattle: 12.5 °C\n")
    assert written.structured_content == {"path": "out/report.txt", "bytes_written": 18, "created": True}
    assert (root / "out" / "report.txt").read_text(encoding="utf-8") == "Seattle: 12.5 °C\n"
    read = await call(server, "read_file", path="out/report.txt")
    assert isinstance(read.content[0], TextContent)
    assert read.content[0].text == "Seattle: 12.5 °C\n"


@pytest.mark.parametrize("path", ["../secret.txt", "notes/../../secret.txt", "escape", "/etc/hostname"])
async def test_paths_escaping_the_root_are_refused_with_the_path_named(root: Path, path: str) -> None:
    text = error_text(await call(workspace.build_server(root), "read_file", path=path))
    assert f"Refused: {path!r} is outside the workspace root" in text


async def test_writing_through_a_symlink_out_of_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    text = error_text(await call(workspace.build_server(root), "write_file", path="escape", content="pwned"))
    assert "'escape' is outside the workspace root" in text
    assert (tmp_path / "secret.txt").read_text() == "outside the workspace\n"


async def test_read_file_refuses_files_over_one_megabyte(root: Path) -> None:
    (root / "big.txt").write_text("x" * 1_000_001)
    text = error_text(await call(workspace.build_server(root), "read_file", path="big.txt"))
    assert "'big.txt' is 1,000,001 bytes" in text
    assert "1,000,000 bytes (1 MB)" in text


async def test_search_files_finds_lines_and_skips_hidden_directories(root: Path) -> None:
    result = await call(workspace.build_server(root), "search_files", query="CHICAGO")
    assert result.structured_content == {
        "matches": [
            {"path": "cities.txt", "line": 3, "text": "Chicago"},
            {"path": "notes/trip.md", "line": 2, "text": "Fly to chicago on Monday"},
        ],
        "files_searched": 2,
        "truncated": False,
    }


async def test_workspace_over_stdio_reads_a_file(root: Path, tmp_path: Path) -> None:
    async with stdio_server(
        "codemode_kernel.servers.workspace", "--root", str(root), log_dir=tmp_path
    ) as client:
        result = await client.call_tool("read_file", {"path": "cities.txt"})
        refused = await client.call_tool("read_file", {"path": "../secret.txt"})
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text.splitlines() == CITIES_TXT
    assert "'../secret.txt' is outside the workspace root" in error_text(refused)


# --- sqlite ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_sample_database(tmp_path_factory.mktemp("db") / "sample.sqlite3")


def count_rows(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        (count,) = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    return int(count)


async def test_sample_database_has_the_cities_of_cities_txt(sample_db: Path) -> None:
    server = sqlite.build_server(sample_db)
    tables = await call(server, "list_tables")
    assert tables.structured_content == {"result": ["cities", "readings", "stations"]}
    names = await call(server, "query", sql="SELECT name FROM cities ORDER BY id LIMIT 5")
    assert names.structured_content is not None
    assert [row[0] for row in names.structured_content["rows"]] == CITIES_TXT
    assert count_rows(sample_db, "readings") >= 300


async def test_describe_table_lists_columns_and_row_count(sample_db: Path) -> None:
    result = await call(sqlite.build_server(sample_db), "describe_table", table="cities")
    assert result.structured_content is not None
    assert result.structured_content["row_count"] == 15
    columns = {column["name"]: column for column in result.structured_content["columns"]}
    assert list(columns) == ["id", "name", "country", "population", "lat", "lon"]
    assert columns["id"]["primary_key"] is True
    assert columns["population"]["type"] == "INTEGER"


async def test_describe_table_of_an_unknown_table_names_it_and_the_real_ones(sample_db: Path) -> None:
    text = error_text(await call(sqlite.build_server(sample_db), "describe_table", table="weather"))
    assert "No table named 'weather'. Tables: cities, readings, stations." in text


async def test_query_reports_truncation_at_the_limit(sample_db: Path) -> None:
    result = await call(sqlite.build_server(sample_db), "query", sql="SELECT id, day FROM readings", limit=5)
    assert result.structured_content is not None
    assert result.structured_content["columns"] == ["id", "day"]
    assert result.structured_content["row_count"] == 5
    assert result.structured_content["truncated"] is True


@pytest.mark.parametrize(
    "sql", ["DELETE FROM cities", "INSERT INTO cities (name) VALUES ('Atlantis')", "DROP TABLE readings"]
)
async def test_write_statements_are_refused_and_change_nothing(sample_db: Path, sql: str) -> None:
    before = count_rows(sample_db, "cities"), count_rows(sample_db, "readings")
    text = error_text(await call(sqlite.build_server(sample_db), "query", sql=sql))
    assert "Refused: the database is opened read-only" in text
    assert (count_rows(sample_db, "cities"), count_rows(sample_db, "readings")) == before


async def test_attach_is_refused_and_creates_no_file(sample_db: Path, tmp_path: Path) -> None:
    target = tmp_path / "created.db"
    sql = f"ATTACH '{target.as_uri()}?mode=rwc' AS other"
    text = error_text(await call(sqlite.build_server(sample_db), "query", sql=sql))
    assert "is not authorized" in text
    assert not target.exists()


async def test_chart_returns_a_png_of_the_requested_size(sample_db: Path) -> None:
    server = sqlite.build_server(sample_db)
    tools = await tools_by_name(server)
    assert tools["chart"].output_schema is None
    result = await call(
        server, "chart", sql="SELECT name, population FROM cities ORDER BY population", width=300
    )
    assert result.is_error is False
    (image,) = result.content
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    png = base64.b64decode(image.data)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", png[8:16])
    assert (length, kind) == (13, b"IHDR")
    width, height, depth, colour = struct.unpack(">IIBB", png[16:26])
    assert (width, height, depth, colour) == (300, 240, 8, 2)
    idat_length = struct.unpack(">I", png[33:37])[0]
    assert png[37:41] == b"IDAT"
    pixels = zlib.decompress(png[41 : 41 + idat_length])
    assert len(pixels) == height * (1 + 3 * width)


async def test_chart_of_text_values_is_an_error_naming_the_row(sample_db: Path) -> None:
    text = error_text(await call(sqlite.build_server(sample_db), "chart", sql="SELECT name FROM cities"))
    assert "Row 1: the last column must be a number" in text


def test_sample_database_is_the_same_every_time(tmp_path: Path) -> None:
    dumps = []
    for name in ("a.sqlite3", "b.sqlite3"):
        with sqlite3.connect(ensure_sample_database(tmp_path / name)) as conn:
            dumps.append(list(conn.iterdump()))
    assert dumps[0] == dumps[1]


def test_default_database_lives_in_the_xdg_cache_with_a_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = default_database_path()
    assert path.parent == tmp_path / "codemode"
    assert path.name == "demo-sample-v1.sqlite3"
    assert ensure_sample_database() == path
    assert count_rows(path, "cities") == 15


def test_servers_building_the_sample_at_once_leave_one_good_database(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "sample.sqlite3"
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def build() -> None:
        barrier.wait()
        try:
            ensure_sample_database(target)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert count_rows(target, "readings") == count_rows(
        ensure_sample_database(tmp_path / "ref.sqlite3"), "readings"
    )
    assert sorted(path.name for path in target.parent.iterdir()) == ["sample.sqlite3"]


async def test_sqlite_over_stdio_answers_a_query_and_refuses_a_write(sample_db: Path, tmp_path: Path) -> None:
    async with stdio_server(
        "codemode_kernel.servers.sqlite", "--db", str(sample_db), log_dir=tmp_path
    ) as client:
        result = await client.call_tool("query", {"sql": "SELECT COUNT(*) AS n FROM cities"})
        refused = await client.call_tool("query", {"sql": "UPDATE cities SET population = 0"})
    assert result.structured_content == {"columns": ["n"], "rows": [[15]], "row_count": 1, "truncated": False}
    assert "Refused: the database is opened read-only" in error_text(refused)
