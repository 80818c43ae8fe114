"""Sign-in to remote servers: how long from the link opened to the tools ready, and what a server waiting
for sign-in costs the others.

Against tests/servers/oauth_server.py (the MCP SDK's server auth, its own authorization server; consent is
immediate) with tests/servers/oauth_browser.py as the browser (``CODEMODE_OAUTH_OPEN``), so the time is the
machinery's: discovery, registration, the loopback redirect, the token exchange, initialize and tools/list.
Then, in alternating rounds (ABBA), a ToolHub with one stdio server (the embedded weather server) alone and
beside a server that wants a sign-in, from start to the first call's answer. Prints JSON with medians in
milliseconds. A benchmark, not a test: it never fails on timing (tests/integration/test_oauth_signin.py
asserts the bounds).

    python bench/oauth_signin.py [--logins 10] [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from codemode_kernel.config import ServerConfig
from codemode_kernel.hub import ToolHub
from codemode_kernel.hub.auth_login import login
from codemode_kernel.hub.auth_signin import OPEN_ENV

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "oauth_server.py"
BROWSER = ROOT / "tests" / "servers" / "oauth_browser.py"
WEATHER = ServerConfig(name="weather", command=sys.executable, args=["-m", "codemode_kernel.servers.weather"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"the OAuth test server did not listen on {port}")


def logins(server: ServerConfig, count: int) -> list[float]:
    """Milliseconds from the link opened to the tools listed, per login (each a fresh sign-in)."""
    out = []
    for _ in range(count):
        result = asyncio.run(login(server, announce=lambda _: None))
        assert result.seconds is not None and result.tools == 3
        out.append(result.seconds * 1000)
    return out


def first_call_ms(servers: list[ServerConfig]) -> float:
    """Milliseconds from a hub's start to the weather server's first answer."""
    started = time.perf_counter()
    with ToolHub(servers) as hub:
        hub.start()
        hub.call("weather", "get_weather", {"city": "Seattle", "unit": "celsius"})
        elapsed = (time.perf_counter() - started) * 1000
        states = {s.name: s.state for s in hub.status()}
    assert states.get("secure", "signin") == "signin", states
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    port = free_port()
    proc = start_server(port)
    try:
        with tempfile.TemporaryDirectory() as home:
            os.environ[OPEN_ENV] = f"{sys.executable} {BROWSER}"
            secure = ServerConfig(name="secure", url=f"http://127.0.0.1:{port}/mcp")
            os.environ["XDG_CONFIG_HOME"] = str(Path(home) / "signed-in")
            signed = logins(secure, args.logins)
            os.environ["XDG_CONFIG_HOME"] = str(Path(home) / "signed-out")
            alone: list[float] = []
            beside: list[float] = []
            for index in range(args.rounds):
                order = [(alone, [WEATHER]), (beside, [WEATHER, secure])]
                for into, servers in order if index % 2 == 0 else reversed(order):
                    into.append(first_call_ms(servers))
    finally:
        proc.terminate()
        proc.wait(5)
    report: dict[str, Any] = {
        "login_link_to_ready_ms": {
            "median": round(statistics.median(signed), 1),
            "max": round(max(signed), 1),
        },
        "first_call_ms": {
            "alone": round(statistics.median(alone), 1),
            "beside_a_server_waiting_for_sign_in": round(statistics.median(beside), 1),
        },
        "delay_ms": round(statistics.median(beside) - statistics.median(alone), 1),
        "logins": args.logins,
        "rounds": args.rounds,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
