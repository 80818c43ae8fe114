"""The sqlite demo's sample database: generated from a fixed seed, built once into the user's cache.

Nothing is downloaded. The same code gives the same rows on every machine (``random.Random`` with a fixed
seed is stable across processes and platforms), so notebooks can show query results and compare them.
The file name carries :data:`SAMPLE_VERSION`; bump it whenever the schema or the data change, so an old
cached file is never mistaken for the new one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import random
import sqlite3
import tempfile
from pathlib import Path

from codemode_kernel.servers._cities import CITIES

__all__ = ["SAMPLE_VERSION", "default_database_path", "ensure_sample_database", "write_sample_database"]

SAMPLE_VERSION = 1

_SEED = 20261101
_FIRST_DAY = dt.date(2026, 1, 1)
_DAYS = 14
_STATION_KINDS = ("Airport", "Downtown", "Harbor", "Park", "University", "Hills")
_STATIONS_PER_CITY = 2

_SCHEMA = """
CREATE TABLE cities (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    country TEXT NOT NULL,
    population INTEGER NOT NULL,
    lat REAL NOT NULL,
    lon REAL NOT NULL
);
CREATE TABLE stations (
    id INTEGER PRIMARY KEY,
    city_id INTEGER NOT NULL REFERENCES cities(id),
    name TEXT NOT NULL UNIQUE,
    elevation_m INTEGER NOT NULL
);
CREATE TABLE readings (
    id INTEGER PRIMARY KEY,
    station_id INTEGER NOT NULL REFERENCES stations(id),
    day TEXT NOT NULL,
    temperature_c REAL NOT NULL,
    humidity_pct INTEGER NOT NULL,
    precipitation_mm REAL NOT NULL
);
CREATE INDEX readings_by_station_day ON readings(station_id, day);
"""


def default_database_path() -> Path:
    """Return where the sample database lives by default: the user's cache, per the XDG convention.

    ``$XDG_CACHE_HOME/codemode`` when that variable holds an absolute path (the spec says to ignore a
    relative one), otherwise ``~/.cache/codemode``.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    cache = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return cache / "codemode" / f"demo-sample-v{SAMPLE_VERSION}.sqlite3"


def ensure_sample_database(path: Path | None = None) -> Path:
    """Return the path of the sample database, building it first if it is missing.

    The file is written under a temporary name in the same directory and renamed into place, so a
    reader never sees half a database, and two servers starting at once each build their own copy and
    the last rename wins (both copies are identical).

    Args:
        path: Where the database should be; ``None`` means :func:`default_database_path`.
    """
    target = path if path is not None else default_database_path()
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    temp = Path(temp_name)
    try:
        write_sample_database(temp)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return target


def write_sample_database(path: Path) -> None:
    """Create the sample tables in the (new or empty) SQLite file at ``path`` and fill them.

    Args:
        path: A database file that does not exist yet or is empty.
    """
    rng = random.Random(_SEED)
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.executescript(_SCHEMA)
        conn.executemany(
            "INSERT INTO cities (id, name, country, population, lat, lon) VALUES (?, ?, ?, ?, ?, ?)",
            [(i, c.name, c.country, c.population, c.lat, c.lon) for i, c in enumerate(CITIES, start=1)],
        )
        stations: list[tuple[int, int, str, int]] = []
        readings: list[tuple[int, str, float, int, float]] = []
        for city_id, city in enumerate(CITIES, start=1):
            for kind in rng.sample(_STATION_KINDS, _STATIONS_PER_CITY):
                station_id = len(stations) + 1
                stations.append((station_id, city_id, f"{city.name} {kind}", rng.randint(0, 250)))
                readings.extend(_station_readings(rng, station_id, city.lat))
        conn.executemany(
            "INSERT INTO stations (id, city_id, name, elevation_m) VALUES (?, ?, ?, ?)", stations
        )
        conn.executemany(
            "INSERT INTO readings (station_id, day, temperature_c, humidity_pct, precipitation_mm)"
            " VALUES (?, ?, ?, ?, ?)",
            readings,
        )


def _station_readings(
    rng: random.Random, station_id: int, lat: float
) -> list[tuple[int, str, float, int, float]]:
    """Daily January readings for one station: colder far north, summer in the south, some noise."""
    typical = 26.0 - 0.55 * abs(lat) if lat >= 0 else 27.0 - 0.15 * abs(lat)
    rows = []
    for offset in range(_DAYS):
        day = (_FIRST_DAY + dt.timedelta(days=offset)).isoformat()
        rain = rng.random() < 0.3
        rows.append(
            (
                station_id,
                day,
                round(typical + rng.uniform(-4.0, 4.0), 1),
                rng.randint(55, 95) if rain else rng.randint(25, 75),
                round(rng.uniform(0.5, 25.0), 1) if rain else 0.0,
            )
        )
    return rows
