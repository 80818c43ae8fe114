"""The hub as the conformance suite's client for its ``auth`` scenarios.

``conformance client --suite auth --command CMD`` runs CMD (``python -m tests.conformance_oauth_client``)
with a scenario server's URL as the last argument (``MCP_CONFORMANCE_SCENARIO`` names the scenario;
``MCP_CONFORMANCE_CONTEXT`` holds pre-registered client credentials where it has some). This connects a real
``Toolbox`` (the hub) to that URL with a person who can sign in: the hub's ``asking.sign_in`` opens a
loopback sign-in, and ``CODEMODE_OAUTH_OPEN`` is set to tests/servers/oauth_browser.py, which follows the
authorization server's redirects as a browser would. It lists the tools and calls ``test-tool`` as the
person's own call. The tokens go to a temporary user config. Exit status 1 and a line on stderr when the
connection or the call fails.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from codemode_kernel import Toolbox
from codemode_kernel.approvals import PERSONS_OWN_CALL
from codemode_kernel.config import ServerConfig, load_config
from codemode_kernel.hub.auth_signin import OPEN_ENV, LoopbackSignIn

BROWSER = Path(__file__).resolve().parent / "servers" / "oauth_browser.py"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client id the CIMD scenario expects (the suite never fetches it: its server only compares)."""


def oauth_block() -> dict[str, Any]:
    """The server entry's ``oauth``: the scenario's pre-registered client, and our metadata document URL."""
    block: dict[str, Any] = {"clientMetadataUrl": CLIENT_METADATA_URL}
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("client_id"):
        block["clientId"] = context["client_id"]
        if context.get("client_secret"):
            block["clientSecret"] = context["client_secret"]
    return block


def announce(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(url: str) -> int:
    with tempfile.TemporaryDirectory() as folder:
        os.environ["XDG_CONFIG_HOME"] = str(Path(folder) / "config")  # the tokens: nowhere that lasts
        os.environ[OPEN_ENV] = f"{sys.executable} {BROWSER}"
        path = Path(folder) / "codemode.json"
        entry = {"type": "http", "url": url, "oauth": oauth_block()}
        path.write_text(json.dumps({"mcpServers": {"scenario": entry}, "workspace": folder}))
        with Toolbox(load_config(path)) as toolbox:

            def sign_in(config: ServerConfig) -> LoopbackSignIn:
                return LoopbackSignIn(config.name, announce=announce, timeout=30)

            toolbox.hub.asking.sign_in = sign_in
            toolbox.hub.reconnect("scenario")  # started before sign_in was set: again, with a person
            (status,) = toolbox.status()
            if status.state != "ready":
                print(f"not connected: {status.state}: {status.error}", file=sys.stderr)
                return 1
            result = toolbox.hub.call("scenario", "test-tool", {}, approval=PERSONS_OWN_CALL)
            print(json.dumps(result), flush=True)
            if result.get("isError"):
                print(f"test-tool failed: {result}", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
