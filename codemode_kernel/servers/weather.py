"""Demo weather MCP server: deterministic, made-up weather for the cities of the demo gazetteer.

This is demo data, not real weather. A temperature is derived from a SHA-256 digest of the city name, so
the same city gives the same number in every process, on every machine, with no network: notebooks and
tests that show it can compare outputs exactly. ``get_forecast`` is slow on purpose (it sleeps between
days and reports progress) for demonstrating parallel calls, timeouts and cancellation.

Run it by hand with ``python -m codemode_kernel.servers.weather --help``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from codemode_kernel import __version__
from codemode_kernel.servers._cities import DEFAULT_CITY, City, find_city
from codemode_kernel.servers._serving import build_parser, run_main, tool_description

__all__ = ["Forecast", "ForecastDay", "Location", "Weather", "build_server", "main"]

Unit = Literal["celsius", "fahrenheit"]

MAX_FORECAST_DAYS = 7
MAX_DELAY_SECONDS = 10.0
DEFAULT_PORT = 8765

_CONDITIONS = ("sunny", "partly cloudy", "cloudy", "light rain", "rain", "thunderstorms", "fog", "windy")
# Every weather tool reads fixed demo data: safe to call again, changes nothing, reaches nothing outside.
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

CityName = Annotated[str, Field(description="The name of the city to get weather for")]
TemperatureUnit = Annotated[Unit, Field(description="Temperature unit for the weather response")]


class Location(BaseModel):
    """Where the user is, as the demo server pretends to know it."""

    city: str = Field(description="Name of the current city")


class Weather(BaseModel):
    """Current demo weather for one city."""

    city: str = Field(description="The city the report is for, spelled as the server knows it")
    temperature: float = Field(description="Current temperature in the requested unit")
    unit: Unit = Field(description="Unit of the temperature")
    conditions: str = Field(description="Sky conditions, such as 'sunny' or 'light rain'")


class ForecastDay(BaseModel):
    """The demo forecast for one day."""

    day: int = Field(description="Days from today, starting at 1 for tomorrow")
    temperature: float = Field(description="Expected temperature in the requested unit")
    conditions: str = Field(description="Expected sky conditions")


class Forecast(BaseModel):
    """A demo forecast of several days for one city."""

    city: str = Field(description="The city the forecast is for")
    unit: Unit = Field(description="Unit of every temperature in the forecast")
    days: list[ForecastDay] = Field(description="One entry per day, in order")


_CITY_NAME = re.compile(r"[^\W\d_][^\W\d_ .'-]*(?:[ .'-]+[^\W\d_]+)*\.?")
"""Letters in words joined by spaces, hyphens, apostrophes or dots: 'St. John's', 'Winston-Salem'."""


def _stable_fraction(key: str) -> float:
    """Map ``key`` to a number in [0, 1) that is the same in every process.

    Python's ``hash()`` is salted per process, so it would give each server run different weather.
    """
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _celsius(city: City, day: int) -> float:
    """Demo temperature in Celsius for ``city`` ``day`` days from today (0 is now), between -5 and 35."""
    return -5.0 + 40.0 * _stable_fraction(f"temperature|{city.name}|{day}")


def _conditions(city: City, day: int) -> str:
    return _CONDITIONS[int(_stable_fraction(f"conditions|{city.name}|{day}") * len(_CONDITIONS))]


def _in_unit(celsius: float, unit: Unit) -> float:
    value = celsius * 9 / 5 + 32 if unit == "fahrenheit" else celsius
    return round(value, 1)


def _known_city(name: str) -> City:
    """The gazetteer entry for ``name``; any other plausible city name gets made-up data of its own.

    A quickstart must work for the city a user tries first ("Oslo"), so the gazetteer only fixes the
    spelling of the cities it lists. Something that is not a name at all is the error a caller reads.
    """
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ToolError("The city name is empty; pass a city such as 'New York'.")
    city = find_city(cleaned)
    if city is not None:
        return city
    if not _CITY_NAME.fullmatch(cleaned):
        raise ToolError(
            f"{name!r} is not a city name: use letters, spaces, hyphens, apostrophes or dots ('New York')."
        )
    # One spelling per city, so "oslo" and "Oslo" get the same weather.
    return City(" ".join(word[:1].upper() + word[1:] for word in cleaned.split()), "", 0, 0.0, 0.0)


def get_city() -> Location:
    """Get current city location.

    Demo data: always the same city, so examples that chain get_city into get_weather are reproducible.
    """
    return Location(city=DEFAULT_CITY.name)


def get_weather(city: CityName, unit: TemperatureUnit) -> Weather:
    """Get the current weather for a city.

    Demo data, not real weather: the temperature is a fixed function of the city name, so the same city
    always gives the same value. Any city name works; something that is not a city name is an error.
    """
    known = _known_city(city)
    return Weather(
        city=known.name,
        temperature=_in_unit(_celsius(known, 0), unit),
        unit=unit,
        conditions=_conditions(known, 0),
    )


async def get_forecast(
    city: CityName,
    days: Annotated[
        int, Field(ge=1, le=MAX_FORECAST_DAYS, description="Number of days to forecast, starting tomorrow")
    ] = 3,
    unit: TemperatureUnit = "celsius",
    delay_seconds: Annotated[
        float,
        Field(
            ge=0,
            le=MAX_DELAY_SECONDS,
            description="Seconds to wait before each day; the tool is slow on purpose",
        ),
    ] = 1.0,
    *,
    ctx: Context[Any, Any],
) -> Forecast:
    """Get a forecast of several days for a city, slowly, reporting progress after each day.

    Demo data. The tool waits delay_seconds before each day, so a call takes about days * delay_seconds:
    use it to try parallel calls, timeouts, progress and cancellation.
    """
    known = _known_city(city)
    forecast: list[ForecastDay] = []
    for day in range(1, days + 1):
        # asyncio.sleep, not time.sleep: a cancelled call must stop at once instead of finishing its nap.
        await asyncio.sleep(delay_seconds)
        forecast.append(
            ForecastDay(
                day=day, temperature=_in_unit(_celsius(known, day), unit), conditions=_conditions(known, day)
            )
        )
        await ctx.report_progress(day, days, f"{known.name}: day {day} of {days}")
    return Forecast(city=known.name, unit=unit, days=forecast)


def build_server() -> MCPServer[Any]:
    """Return the weather demo server, ready to run on any transport or to connect to in memory.

    Tests and in-process users connect with ``mcp.Client(build_server())`` and need no subprocess.
    """
    server: MCPServer[Any] = MCPServer(
        "weather",
        title="Demo weather",
        version=__version__,
        instructions="Deterministic demo weather data for a fixed list of cities. It is not real weather.",
        log_level="WARNING",
    )
    for tool in (get_city, get_weather, get_forecast):
        server.add_tool(tool, description=tool_description(tool), annotations=_READ_ONLY)
    return server


def _parser() -> argparse.ArgumentParser:
    return build_parser(
        "python -m codemode_kernel.servers.weather",
        "Demo MCP server with deterministic, made-up weather (not real weather) for a fixed list of cities.",
        DEFAULT_PORT,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Run the weather demo server from the command line (see ``--help``).

    Args:
        argv: Command-line arguments without the program name; ``None`` reads ``sys.argv``.
    """
    run_main(lambda _args: build_server(), _parser(), argv)


if __name__ == "__main__":
    main()
