"""The demo gazetteer: the fifteen cities the weather and sqlite demo servers know about.

One list feeds both servers, so a city found in the sample database also has demo weather. The figures
are rounded, approximate and fixed in the source: the demos must give the same answers offline, on every
machine, forever. They are not reference data.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CITIES", "DEFAULT_CITY", "City", "find_city"]


class City(NamedTuple):
    """One city of the gazetteer, as stored in the sample database's ``cities`` table."""

    name: str
    country: str
    population: int
    lat: float
    lon: float


# The first five are the cities of the quickstart's cities.txt; keep them first and spelled this way.
CITIES: tuple[City, ...] = (
    City("New York", "United States", 8_340_000, 40.71, -74.01),
    City("Los Angeles", "United States", 3_820_000, 34.05, -118.24),
    City("Chicago", "United States", 2_660_000, 41.88, -87.63),
    City("Miami", "United States", 450_000, 25.76, -80.19),
    City("Seattle", "United States", 750_000, 47.61, -122.33),
    City("Toronto", "Canada", 2_790_000, 43.65, -79.38),
    City("Mexico City", "Mexico", 9_210_000, 19.43, -99.13),
    City("Buenos Aires", "Argentina", 3_120_000, -34.60, -58.38),
    City("London", "United Kingdom", 8_870_000, 51.51, -0.13),
    City("Paris", "France", 2_100_000, 48.86, 2.35),
    City("Berlin", "Germany", 3_760_000, 52.52, 13.40),
    City("Cairo", "Egypt", 10_000_000, 30.04, 31.24),
    City("Mumbai", "India", 12_480_000, 19.08, 72.88),
    City("Tokyo", "Japan", 13_960_000, 35.68, 139.69),
    City("Sydney", "Australia", 5_310_000, -33.87, 151.21),
)

DEFAULT_CITY = CITIES[0]

_BY_KEY = {" ".join(city.name.split()).casefold(): city for city in CITIES}


def find_city(name: str) -> City | None:
    """Return the city called ``name``, ignoring case and extra spaces, or None if it is not listed.

    Models and people write "new york" or "New  York " as often as "New York"; all of them mean the
    same city, so all of them must get the same demo weather.

    Args:
        name: A city name as the caller typed it.
    """
    return _BY_KEY.get(" ".join(name.split()).casefold())
