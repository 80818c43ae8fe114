"""The OAuth test server (tests/servers/oauth_server.py) as the sign-in tests start it, and the stand-in
browser (tests/servers/oauth_browser.py) that ``CODEMODE_OAUTH_OPEN`` runs."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from typing import Any

from tests.conftest import ROOT, free_port, wait_for_port

__all__ = ["BROWSER", "OAUTH_SERVER", "OAuthServer"]

OAUTH_SERVER = ROOT / "tests" / "servers" / "oauth_server.py"
BROWSER = ROOT / "tests" / "servers" / "oauth_browser.py"


class OAuthServer:
    """The test server, one process for the module; ``url`` is its MCP endpoint."""

    def __init__(self, transport: str = "http") -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/{'sse' if transport == 'sse' else 'mcp'}"
        self.proc = subprocess.Popen(
            [sys.executable, str(OAUTH_SERVER), "--port", str(self.port), "--transport", transport],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for_port(self.port, self.proc)

    def control(self, what: str) -> dict[str, Any]:
        """POST /test/expire or /test/revoke, GET /test/stats."""
        method = "GET" if what == "stats" else "POST"
        request = urllib.request.Request(f"{self.base}/test/{what}", method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            answer: dict[str, Any] = json.loads(response.read())
        return answer

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
