"""Remote servers that sign in with OAuth, against a real server of our own (tests/servers/oauth_server.py:
the SDK's server auth, its own authorization server) and the real CLI, with the person's browser played by
tests/servers/oauth_browser.py through ``CODEMODE_OAUTH_OPEN``.

What a user checks: ``doctor`` says the server needs a sign-in and names the command; ``codemode login``
signs in and the tools work; an access token the server lets expire is refreshed without asking; the
token file is 0600 and a program cannot read it; ``codemode logout`` forgets it and the server needs a
sign-in again; a server waiting for sign-in holds up no other server.
"""

from __future__ import annotations

import asyncio
import json
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.approvals import PERSONS_OWN_CALL
from codemode_kernel.config import ServerConfig
from codemode_kernel.core.errors import ServerError
from codemode_kernel.hub.auth_login import login
from codemode_kernel.hub.auth_signin import OPEN_ENV
from tests.conftest import ROOT
from tests.conftest import run_cli as codemode
from tests.oauth_support import BROWSER, OAuthServer

LIFECYCLE = ROOT / "tests" / "servers" / "lifecycle_server.py"


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> None:
    """The person's browser: a script that follows the authorization redirects."""
    monkeypatch.setenv(OPEN_ENV, f"{sys.executable} {BROWSER}")


def write_config(directory: Path, servers: dict[str, Any]) -> Path:
    path = directory / "cfg.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def token_files(home: Path) -> list[Path]:
    return sorted((home / ".config" / "codemode" / "oauth").glob("*.json"))


def test_sign_in_then_tools_then_refresh_then_sign_out(
    oauth_server: OAuthServer, tmp_path: Path, browser: None
) -> None:
    config = str(write_config(tmp_path, {"secure": {"type": "http", "url": oauth_server.url}}))
    before = oauth_server.control("stats")

    doctor = codemode("doctor", "--config", config, cwd=tmp_path)
    assert doctor.returncode == 1, doctor.stdout
    assert "secure [http]: signin" in doctor.stdout
    assert "needs sign-in (OAuth): run `codemode login secure`" in doctor.stdout
    assert oauth_server.control("stats")["registrations"] == before["registrations"]  # nothing registered yet

    signed = codemode("login", "secure", "--config", config, cwd=tmp_path)
    assert signed.returncode == 0, signed.stderr
    assert signed.stdout.startswith("signed in to secure: 3 tools ready in "), signed.stdout
    assert f"Sign in to secure: {oauth_server.base}/authorize?" in signed.stderr
    (stored,) = token_files(tmp_path / "home")
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    first = json.loads(stored.read_text())["tokens"]
    for secret in (first["access_token"], first["refresh_token"]):
        assert secret not in signed.stdout + signed.stderr

    # The tools work; a program cannot read the token file (the user config dir is hidden).
    program = (
        "print(whoami()['scopes'])\n"
        "try:\n"
        f"    open({str(stored)!r}).read()\n"
        "    print('READ')\n"
        "except OSError as exc:\n"
        "    print('hidden:', type(exc).__name__)\n"
    )
    ran = codemode("run", "--config", config, "-", cwd=tmp_path, stdin=program)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "['tools']" in ran.stdout and "hidden:" in ran.stdout and "READ" not in ran.stdout

    # The server lets the access token expire: the next run refreshes it, without a person.
    oauth_server.control("expire")
    ran = codemode("run", "--config", config, "-", cwd=tmp_path, stdin="print(echo(text='after expiry'))")
    assert ran.returncode == 0 and "after expiry" in ran.stdout, ran.stdout + ran.stderr
    stats = oauth_server.control("stats")
    assert stats["refreshes"] == before["refreshes"] + 1
    assert stats["authorizations"] == before["authorizations"] + 1  # the login's only
    renewed = json.loads(stored.read_text())["tokens"]
    assert renewed["access_token"] != first["access_token"]
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600

    out = codemode("logout", "secure", "--config", config, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == "signed out of secure: its tokens are deleted\n"
    assert token_files(tmp_path / "home") == []
    ran = codemode("run", "--config", config, "-", cwd=tmp_path, stdin="print(echo(text='x'))")
    assert ran.returncode != 0
    assert "(servers waiting for sign-in: secure; run `codemode login secure`)" in ran.stdout
    assert "server 'secure': needs sign-in (OAuth): run `codemode login secure`" in ran.stderr


def test_a_refresh_the_server_refuses_asks_for_a_sign_in_again(
    oauth_server: OAuthServer, tmp_path: Path, browser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    config = write_config(tmp_path, {"secure": {"url": oauth_server.url}})
    with Toolbox.from_config(config) as tb:
        assert {s.name: s.state for s in tb.status()} == {"secure": "signin"}
        # Signed in from elsewhere (another terminal) while this hub runs: reconnecting uses the tokens.
        done = asyncio.run(login(tb.config.servers["secure"], announce=lambda _: None))
        assert done.signed_in and done.tools == 3 and done.seconds is not None
        assert tb.hub.reconnect("secure").state == "ready"
        assert tb.hub.call("secure", "whoami", {}, approval=PERSONS_OWN_CALL)["structuredContent"][
            "scopes"
        ] == ["tools"]
    oauth_server.control("revoke")  # access and refresh tokens both dead
    with Toolbox.from_config(config) as tb:
        (status,) = tb.status()
        assert status.state == "signin"
        assert status.error == "the sign-in expired and could not be renewed: run `codemode login secure`"
        for _ in range(2):  # at once after the start, and again within the back-off
            with pytest.raises(ServerError) as refused:
                tb.hub.call("secure", "echo", {"text": "x"}, approval=PERSONS_OWN_CALL)
            assert str(refused.value) == (
                "server 'secure': the sign-in expired and could not be renewed: run `codemode login secure`"
            )
    (stored,) = token_files(home)
    assert "tokens" not in json.loads(stored.read_text())  # forgotten; the registration stays


def test_a_token_that_expired_while_nothing_ran_is_refreshed_before_the_first_request(
    oauth_server: OAuthServer, tmp_path: Path, browser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    server = ServerConfig(name="secure", url=oauth_server.url)
    assert asyncio.run(login(server, announce=lambda _: None)).signed_in
    (stored,) = sorted((tmp_path / "config" / "codemode" / "oauth").glob("*.json"))
    record = json.loads(stored.read_text())
    record["expiresAt"] = time.time() - 60  # an hour went by: the stored expiry says so
    stored.write_text(json.dumps(record))
    before = oauth_server.control("stats")
    with Toolbox.from_config(write_config(tmp_path, {"secure": {"url": oauth_server.url}})) as tb:
        assert [s.state for s in tb.status()] == ["ready"]
    after = oauth_server.control("stats")
    # Refreshed at the token endpoint found at sign-in (kept in the file), without a sign-in.
    assert after["refreshes"] == before["refreshes"] + 1
    assert after["authorizations"] == before["authorizations"]
    assert json.loads(stored.read_text())["expiresAt"] > time.time() + 3000


def test_tokens_another_process_renewed_are_picked_up_not_refreshed_again(
    oauth_server: OAuthServer, tmp_path: Path, browser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert asyncio.run(
        login(ServerConfig(name="secure", url=oauth_server.url), announce=lambda _: None)
    ).tools
    config = write_config(tmp_path, {"secure": {"url": oauth_server.url}})
    with Toolbox.from_config(config) as kernel:  # holds the tokens in memory
        oauth_server.control("expire")
        before = oauth_server.control("stats")
        with Toolbox.from_config(config) as terminal:  # refreshes: the server rotates the refresh token
            assert [s.state for s in terminal.status()] == ["ready"]
        answer = kernel.hub.call("secure", "echo", {"text": "still here"}, approval=PERSONS_OWN_CALL)
        assert answer["content"][0]["text"] == "still here"
    assert oauth_server.control("stats")["refreshes"] == before["refreshes"] + 1  # the terminal's only


def test_an_sse_server_signs_in_too(tmp_path: Path, browser: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    server = OAuthServer("sse")
    try:
        config = write_config(tmp_path, {"legacy": {"type": "sse", "url": server.url}})
        with Toolbox.from_config(config) as tb:
            (status,) = tb.status()
            assert (status.state, status.error) == (
                "signin",
                "needs sign-in (OAuth): run `codemode login legacy`",
            )
            done = asyncio.run(login(tb.config.servers["legacy"], announce=lambda _: None))
            assert done.signed_in and done.tools == 3
            assert tb.hub.reconnect("legacy").state == "ready"
            answer = tb.hub.call("legacy", "echo", {"text": "over sse"}, approval=PERSONS_OWN_CALL)
            assert answer["content"][0]["text"] == "over sse"
    finally:
        server.stop()


def test_a_server_waiting_for_sign_in_delays_no_other(
    oauth_server: OAuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    local = {"command": sys.executable, "args": [str(LIFECYCLE)]}
    secure = {"url": oauth_server.url}

    def first_call(servers: dict[str, Any], name: str) -> tuple[float, list[tuple[str, str]]]:
        (tmp_path / name).mkdir()
        started = time.perf_counter()
        with Toolbox.from_config(write_config(tmp_path / name, servers)) as tb:
            if "local" in servers:
                assert tb.tools.echo(text="hello") == "hello"
            elapsed = time.perf_counter() - started
            assert tb.pending == []  # settled before start returned: start never waited for it
            return elapsed, [(s.name, s.state) for s in tb.status()]

    settled, states = first_call({"secure": secure}, "secure")
    assert states == [("secure", "signin")]
    alone, states = first_call({"local": local}, "alone")
    beside, states = first_call({"local": local, "secure": secure}, "both")
    assert states == [("local", "ready"), ("secure", "signin")]
    print(
        f"\nsign-in server settled in {settled:.3f} s; a stdio server's first call {alone:.3f} s alone, "
        f"{beside:.3f} s beside it"
    )
    # One HTTP round trip (about 20 ms here); the bound is the noise of starting a process on this machine.
    assert settled < 0.5
    assert beside < alone + 0.5


def test_a_sign_in_nobody_finishes_ends_in_a_line_that_says_so(
    oauth_server: OAuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OPEN_ENV, "true")  # a browser that opens nothing
    config = str(write_config(tmp_path, {"secure": {"url": oauth_server.url}}))
    done = codemode("login", "secure", "--timeout", "1", "--config", config, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.endswith(
        "codemode: server 'secure': no sign-in came back within 1 s; run `codemode login secure` again\n"
    )
    assert "Traceback" not in done.stderr
    # The registration made on the way is kept (the next login reuses it); no tokens.
    assert all("tokens" not in json.loads(f.read_text()) for f in token_files(tmp_path / "home"))


def test_tokens_revoked_while_the_hub_runs_fail_the_next_call_with_the_command(
    oauth_server: OAuthServer, tmp_path: Path, browser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert asyncio.run(
        login(ServerConfig(name="secure", url=oauth_server.url), announce=lambda _: None)
    ).tools
    with Toolbox.from_config(write_config(tmp_path, {"secure": {"url": oauth_server.url}})) as tb:
        assert [s.state for s in tb.status()] == ["ready"]
        oauth_server.control("revoke")  # mid-session: the refresh is refused too
        started = time.perf_counter()
        with pytest.raises(ServerError, match=r"run `codemode login secure`$"):
            tb.hub.call("secure", "echo", {"text": "x"}, approval=PERSONS_OWN_CALL)
        assert time.perf_counter() - started < 5  # at once, not after a timeout
        (status,) = tb.status()
        assert status.state == "signin"


def test_a_step_up_nobody_could_sign_in_for_is_asked_for_at_the_next_login(
    oauth_server: OAuthServer, tmp_path: Path, browser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    server = ServerConfig(name="secure", url=oauth_server.url)
    assert asyncio.run(login(server, announce=lambda _: None)).tools == 3
    config = write_config(tmp_path, {"secure": {"url": oauth_server.url}})
    with Toolbox.from_config(config) as tb:
        with pytest.raises(ServerError) as refused:
            tb.hub.call("secure", "admin", {}, approval=PERSONS_OWN_CALL)
        assert str(refused.value) == (
            "server 'secure': needs more permission (scope tools admin): sign in again, "
            "run `codemode login secure`"
        )
        # The rest still works: the connection was made again with the tokens it has.
        assert (
            tb.hub.call("secure", "echo", {"text": "x"}, approval=PERSONS_OWN_CALL)["content"][0]["text"]
            == "x"
        )
    # The next login asks for what the step-up wanted (and registers again for it).
    assert asyncio.run(login(server, announce=lambda _: None)).tools == 3
    with Toolbox.from_config(config) as tb:
        assert tb.hub.call("secure", "whoami", {}, approval=PERSONS_OWN_CALL)["structuredContent"][
            "scopes"
        ] == [
            "tools",
            "admin",
        ]
        answer = tb.hub.call("secure", "admin", {}, approval=PERSONS_OWN_CALL)
        assert answer["content"][0]["text"] == "admin done"
