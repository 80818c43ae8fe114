"""A server that exits during start-up, configured with a secret, and what may be shown of its stderr."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.servers.exits_at_start_server import REASON

EXITS_AT_START = Path(__file__).resolve().parent.parent / "servers" / "exits_at_start_server.py"
SECRET = "opensesame42"  # short and plain: only knowing the config's env values masks it


def exiting_server_config(project: Path) -> Path:
    """``project/conf.json`` with one server, ``weather``, that writes its reason to stderr and exits."""
    server = {"command": sys.executable, "args": [str(EXITS_AT_START)], "env": {"WEATHER_API_KEY": SECRET}}
    path = project / "conf.json"
    path.write_text(json.dumps({"mcpServers": {"weather": server}}))
    return path


def assert_safe_tail(text: str) -> None:
    """The reason and the line before it are there; the key, control characters and the huge line are not."""
    assert REASON in text, text
    assert "ERROR using key *** (from env)" in text, text  # the line is there, the key is not
    assert SECRET not in text, text
    assert "\x1b" not in text and "\x07" not in text, repr(text)
    assert max(len(line) for line in text.splitlines()) < 300, text
    assert "x" * 300 not in text
