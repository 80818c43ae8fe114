"""The hub as the conformance suite's client: ``python -m tests.conformance_hub_client URL``.

``conformance client --command CMD`` runs CMD with its scenario server's URL as the last argument and the
scenario's name in ``MCP_CONFORMANCE_SCENARIO``. This connects a real ``Toolbox`` (the hub) to that URL
over Streamable HTTP, with a person who presses Enter at every question (so each field takes its
schema's default, SEP-1034), and calls the scenario's tools as the person's own calls. Exit status 1 and
a line on stderr when a call fails.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from codemode_kernel import Toolbox
from codemode_kernel.approvals import PERSONS_OWN_CALL, PromptApprover
from codemode_kernel.config import load_config

# What each scenario expects the client to call (tool, arguments).
CALLS: dict[str, list[tuple[str, dict[str, object]]]] = {
    "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {})],
    "initialize": [],
    "tools_call": [("add_numbers", {"a": 2, "b": 3})],
    "sse-retry": [("test_reconnection", {})],
}


async def press_enter(prompt: str) -> str:
    """A person who accepts every default: prints the question (the suite keeps the output), answers ""."""
    print(prompt, file=sys.stderr, flush=True)
    return ""


def main(url: str, scenario: str) -> int:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "codemode.json"
        config = {"mcpServers": {"scenario": {"type": "http", "url": url}}, "workspace": folder}
        path.write_text(json.dumps(config))
        with Toolbox(load_config(path)) as toolbox:
            toolbox.hub.asking.person = PromptApprover(press_enter)
            toolbox.hub.wait_for_servers()
            for tool, arguments in CALLS.get(scenario, []):
                result = toolbox.hub.call("scenario", tool, arguments, approval=PERSONS_OWN_CALL)
                print(json.dumps(result), flush=True)
                if result.get("isError"):
                    print(f"{tool} failed: {result}", file=sys.stderr)
                    return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))
