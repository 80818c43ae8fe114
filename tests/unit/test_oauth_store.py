"""The sign-in pieces without a server: the token store (keyed by URL, 0600, never the tokens in errors),
the config's ``oauth`` block, and the loopback listener (only the awaited redirect ends the wait)."""

from __future__ import annotations

import asyncio
import json
import stat
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from codemode_kernel.config import ServerConfig
from codemode_kernel.core.errors import ConfigError, SignInFailed
from codemode_kernel.hub.auth_signin import LoopbackSignIn
from codemode_kernel.hub.auth_store import TokenStore, oauth_dir, server_key
from codemode_kernel.worker.sandbox._policy import default_hidden_paths
from tests.unit.test_config_errors import load

URL = "https://mcp.example.com/mcp"


def token(access: str = "at-1", refresh: str | None = "rt-1", expires_in: int | None = 3600) -> OAuthToken:
    return OAuthToken(access_token=access, refresh_token=refresh, expires_in=expires_in, scope="read")


def test_tokens_are_kept_per_url_in_a_private_file(tmp_path: Path) -> None:
    store = TokenStore(URL, directory=tmp_path / "oauth")
    asyncio.run(store.set_tokens(token()))
    # Another name for the same endpoint (a second config, a renamed server, a trailing slash) shares it.
    again = TokenStore("HTTPS://MCP.example.com/mcp/", directory=tmp_path / "oauth")
    found = asyncio.run(again.get_tokens())
    assert found is not None and found.access_token == "at-1"
    assert again.path == store.path
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert [p.name for p in store.path.parent.iterdir()] == [store.path.name]  # no temporary left
    other = TokenStore("https://mcp.example.com/other", directory=tmp_path / "oauth")
    assert asyncio.run(other.get_tokens()) is None
    assert store.delete() and not store.delete()


def test_the_store_is_under_the_hidden_user_config_dir(tmp_path: Path) -> None:
    home = tmp_path / "home"
    where = oauth_dir({"HOME": str(home)})
    assert where == home / ".config" / "codemode" / "oauth"
    assert any(where.is_relative_to(hidden) for hidden in default_hidden_paths(home))
    assert oauth_dir({"XDG_CONFIG_HOME": str(tmp_path / "x")}) == tmp_path / "x" / "codemode" / "oauth"
    assert server_key(URL) == server_key(URL + "/") != server_key(URL + "?tenant=2")


def test_expiry_survives_a_restart_and_a_fresh_sign_in_keeps_old_tokens_until_new_ones(
    tmp_path: Path,
) -> None:
    store = TokenStore(URL, directory=tmp_path)
    asyncio.run(store.set_tokens(token(expires_in=60)))
    expires = TokenStore(URL, directory=tmp_path).expires_at()
    assert expires is not None and 50 < expires - __import__("time").time() <= 60
    fresh = TokenStore(URL, directory=tmp_path, fresh=True)
    assert asyncio.run(fresh.get_tokens()) is None  # the sign-in starts anew...
    assert TokenStore(URL, directory=tmp_path).has_tokens()  # ...and the old tokens are still there
    asyncio.run(fresh.set_tokens(token("at-2")))
    found = asyncio.run(TokenStore(URL, directory=tmp_path).get_tokens())
    assert found is not None and found.access_token == "at-2"


def test_a_registration_for_another_redirect_is_not_reused_and_a_configured_client_wins(
    tmp_path: Path,
) -> None:
    registered = OAuthClientInformationFull(
        client_id="dcr-1", redirect_uris=["http://127.0.0.1:4000/callback"]
    )
    asyncio.run(TokenStore(URL, directory=tmp_path).set_client_info(registered))
    same = TokenStore(URL, directory=tmp_path, redirect_uri="http://127.0.0.1:4000/callback")
    assert asyncio.run(same.get_client_info()) == registered
    moved = TokenStore(URL, directory=tmp_path, redirect_uri="http://127.0.0.1:5000/callback")
    assert asyncio.run(moved.get_client_info()) is None  # registers again for the new port
    configured = OAuthClientInformationFull(client_id="app", client_secret="s", redirect_uris=[URL])
    mine = TokenStore(URL, directory=tmp_path, client=configured)
    assert asyncio.run(mine.get_client_info()) == configured
    asyncio.run(TokenStore(URL, directory=tmp_path).set_tokens(token()))  # issued to dcr-1
    assert asyncio.run(mine.get_tokens()) is None  # not the configured client's


def test_an_unreadable_file_is_ignored_without_showing_its_content(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = TokenStore(URL, directory=tmp_path)
    tmp_path.mkdir(exist_ok=True)
    store.path.write_text('{"tokens": {"access_token": "SECRET-VALUE"')  # cut short
    assert asyncio.run(store.get_tokens()) is None
    assert "SECRET-VALUE" not in caplog.text and store.path.name in caplog.text


def test_the_oauth_block_is_checked(tmp_path: Path) -> None:
    server = ServerConfig(
        name="gh", url=URL, oauth={"clientId": "app", "clientSecret": "s", "scopes": ["repo", "read:org"]}
    )
    assert server.oauth is not None and server.oauth.scopes == ["repo", "read:org"]
    cases = {
        '{"command": "x", "oauth": {}}': 'remove "oauth"',
        '{"url": "https://a/mcp", "oauth": {"clientSecret": "s"}}': 'add "clientId"',
        '{"url": "https://a/mcp", "oauth": {"scopes": ["has space"]}}': "scopes",
        '{"url": "https://a/mcp", "oauth": {"clientMetadataUrl": "http://a/c.json"}}': "https URL",
        '{"url": "https://a/mcp", "oauth": {"callbackPort": 70000}}': "callbackPort",
    }
    for entry, said in cases.items():
        with pytest.raises(ConfigError) as caught:
            load(tmp_path, {"mcpServers": {"s": json.loads(entry)}})
        assert said in str(caught.value), (entry, str(caught.value))


def test_a_secret_comes_from_the_environment(tmp_path: Path) -> None:
    entry = {"url": URL, "oauth": {"clientId": "app", "clientSecret": "${GH_APP_SECRET}"}}
    config = load(tmp_path, {"mcpServers": {"gh": entry}}, env={"GH_APP_SECRET": "from-env"})
    assert config.servers["gh"].oauth is not None and config.servers["gh"].oauth.client_secret == "from-env"


async def _get(url: str) -> tuple[int, str]:
    def fetch() -> tuple[int, str]:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    return await asyncio.to_thread(fetch)


def test_only_the_awaited_redirect_ends_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEMODE_OAUTH_OPEN", "true")  # a command that opens nothing
    shown: list[str] = []

    async def scenario() -> None:
        async with LoopbackSignIn("gh", announce=shown.append, timeout=10) as sign_in:
            assert sign_in.redirect_uri.startswith("http://127.0.0.1:")
            await sign_in.open("https://as.example.com/authorize?client_id=x&state=expected")
            waiting = asyncio.ensure_future(sign_in.wait())
            base = sign_in.redirect_uri
            assert (await _get(f"{base}?code=forged&state=other"))[0] == 400  # another state: ignored
            assert (await _get(f"{base.replace('/callback', '/elsewhere')}?code=c&state=expected"))[0] == 400
            assert not waiting.done()
            status, page = await _get(f"{base}?code=the-code&state=expected&iss=https%3A%2F%2Fas.example.com")
            assert status == 200 and "the-code" not in page
            result = await waiting
            assert (result.code, result.state, result.iss) == (
                "the-code",
                "expected",
                "https://as.example.com",
            )

    asyncio.run(scenario())
    assert shown[0] == "Sign in to gh: https://as.example.com/authorize?client_id=x&state=expected"


def test_a_refusal_and_a_timeout_are_failures_that_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEMODE_OAUTH_OPEN", "true")

    async def refused() -> None:
        async with LoopbackSignIn("gh", announce=lambda _: None, timeout=10) as sign_in:
            await sign_in.open("https://as/authorize?state=s1")
            waiting = asyncio.ensure_future(sign_in.wait())
            await _get(f"{sign_in.redirect_uri}?state=s1&error=access_denied&error_description=no%1b[31m")
            await waiting

    with pytest.raises(SignInFailed, match=r"refused the sign-in: access_denied \(no\?\[31m\)"):
        asyncio.run(refused())

    async def silent() -> None:
        async with LoopbackSignIn("gh", announce=lambda _: None, timeout=0.2) as sign_in:
            await sign_in.open("https://as/authorize?state=s1")
            await sign_in.wait()

    with pytest.raises(
        SignInFailed, match=r"no sign-in came back within 0\.2 s; run `codemode login gh` again"
    ):
        asyncio.run(silent())


def test_a_sign_in_page_that_is_no_web_address_is_never_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEMODE_OAUTH_OPEN", "false")

    async def hostile() -> None:
        async with LoopbackSignIn("gh", announce=lambda _: None) as sign_in:
            await sign_in.open("file:///etc/passwd?state=s")

    with pytest.raises(SignInFailed, match="not a web address: file:///etc/passwd"):
        asyncio.run(hostile())
