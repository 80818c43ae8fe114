"""Sign-in from a notebook, in a real kernel driven through jupyter_client, against the OAuth test server
(tests/servers/oauth_server.py: the SDK's server auth, consent at once).

What a person sees: the sidebar's state file carries a "Sign in" link for the server as soon as the kernel
has connected, and the next cell shows it too; following it (here urllib plays the browser) brings the
server's tools into the namespace with no restart; ``%codemode login NAME`` gives a fresh link, and a
name that cannot sign in is a usage error that lists what can.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_session import Kernel, kernel_in, state_path, wait_for_state

from tests.oauth_support import OAuthServer


@pytest.fixture(scope="module")
def connection_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runtime") / f"kernel-{uuid.uuid4()}.json"


@pytest.fixture(scope="module")
def kernel(
    jupyter_path: Path,
    oauth_server: OAuthServer,
    connection_file: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Kernel]:
    notebook = tmp_path_factory.mktemp("signin-notebook")
    config = {
        "mcpServers": {
            "secure": {"type": "http", "url": oauth_server.url},
            "weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]},
        },
        "workspace": str(notebook),
    }
    (notebook / "codemode.json").write_text(json.dumps(config))
    env = {
        "CODEMODE_CONFIG": str(notebook / "codemode.json"),
        "XDG_CONFIG_HOME": str(tmp_path_factory.mktemp("xdg-config")),  # the tokens: this test's own
        "CODEMODE_OAUTH_OPEN": None,  # nobody follows the link but the test, as a person would
    }
    with kernel_in(jupyter_path, notebook, env, connection_file=connection_file) as k:
        yield k


def _secure(state: dict[str, Any]) -> dict[str, Any]:
    return next(server for server in state["servers"] if server["name"] == "secure")


def _follow(link: str) -> int:
    """What the person's browser does with the link: the server consents and redirects to the kernel."""
    with urllib.request.urlopen(link, timeout=30) as response:
        return int(response.status)


def test_the_sidebar_and_the_next_cell_show_the_link_and_following_it_brings_the_tools(
    kernel: Kernel, oauth_server: OAuthServer, connection_file: Path
) -> None:
    path = state_path(connection_file)
    state = wait_for_state(path, lambda s: bool(_secure(s).get("signin_url")))
    secure = _secure(state)
    link = secure["signin_url"]
    assert secure["state"] == "signin" and secure["tool_count"] == 0
    assert link.startswith(f"{oauth_server.base}/authorize?") and "code_challenge=" in link
    weather = next(server for server in state["servers"] if server["name"] == "weather")
    assert weather["state"] == "ready"  # the server waiting for its person held up nobody

    first = kernel.run("1 + 1")
    assert first.status == "ok", first.content
    (html,) = [d for d in first.data("text/html") if "Sign in to secure" in d]
    assert f'href="{link.replace("&", "&amp;")}"' in html and 'target="_blank"' in html
    assert f"codemode: sign in to secure: {link}" in first.data()
    missing = kernel.run("whoami()")
    assert missing.status == "error" and missing.content["ename"] == "NameError"

    clicked = time.perf_counter()
    assert _follow(link) == 200
    state = wait_for_state(path, lambda s: _secure(s)["state"] == "ready")
    ready_in = time.perf_counter() - clicked
    assert _secure(state)["tool_count"] == 3 and _secure(state)["signin_url"] is None
    assert ready_in < 10, f"from the link followed to the server ready: {ready_in:.2f} s"
    print(f"sign-in in the kernel: link followed to ready in {ready_in:.3f} s")

    after = kernel.run("whoami()['scopes']")
    assert after.status == "ok", after.content
    assert after.data() == ["['tools']"]
    assert not any("Sign in" in d for d in after.data("text/html"))  # shown once, and it is over


def test_codemode_login_gives_a_fresh_link_and_bad_names_say_what_can_sign_in(
    kernel: Kernel, oauth_server: OAuthServer, connection_file: Path
) -> None:
    again = kernel.run("%codemode login secure")
    assert again.status == "ok", again.content
    (text,) = again.data()
    assert text.startswith(f"codemode: sign in to secure: {oauth_server.base}/authorize?")
    link = text.split(": ", 2)[2]
    state = wait_for_state(state_path(connection_file), lambda s: _secure(s)["signin_url"] == link)
    assert _secure(state)["state"] == "ready"  # signed in still: the new link replaces the old only if used
    assert _follow(link) == 200
    wait_for_state(state_path(connection_file), lambda s: _secure(s)["signin_url"] is None)
    assert kernel.run("echo(text='hi')").data() == ["'hi'"]

    local = kernel.run("%codemode login weather")
    assert local.status == "error"
    assert "'weather' is a local (stdio) server: only remote servers sign in" in local.content["evalue"]
    unknown = kernel.run("%codemode login nope")
    assert unknown.status == "error"
    assert "no server named 'nope'" in unknown.content["evalue"] and "secure" in unknown.content["evalue"]
