"""An MCP server that writes why it cannot start to stderr and exits before answering anything.

As real servers do when a key is missing or wrong: a banner, a huge line (a dumped config), a coloured
error that quotes the secret it was given (``WEATHER_API_KEY`` from its config's ``env``), then the
reason, and exit status 1. What the hub shows of that stderr must be short, printable and without the key.

Usage: ``python exits_at_start_server.py``.
"""

from __future__ import annotations

import os
import sys

REASON = "fatal: the weather API refused the key (HTTP 401); set a valid WEATHER_API_KEY"


def main() -> None:
    key = os.environ.get("WEATHER_API_KEY", "")
    err = sys.stderr
    err.write("weather-server 1.4.2 starting\n")
    err.write("config dump: " + "x" * 100_000 + "\n")
    err.write(f"\x1b[31mERROR\x1b[0m using key {key}\x07 (from env)\n")
    err.write("\n\n")
    err.write(REASON + "\n")
    err.flush()
    sys.exit(1)


if __name__ == "__main__":
    main()
