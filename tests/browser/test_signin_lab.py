"""Signing in to a remote server from JupyterLab, as a person does: the notebook's kernel has an OAuth server
(tests/servers/oauth_server.py, the SDK's server auth; it consents at once), the sidebar marks it and shows
"Sign in to secure", the first cell shows the link too, a click opens the sign-in in a new tab whose
redirect comes back to the kernel, and the server's tools work in the next cell with no restart.

Screenshots of the waiting row in the light and dark themes go to ``test-artifacts/browser/signin_*.png``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator

import nbformat
import pytest
from lab_session import ARTIFACTS, Lab, start_lab, stop_lab
from playwright.sync_api import Page
from test_extension_lab import (
    DARK,
    KERNEL_TIMEOUT,
    LIGHT,
    SERVER_START_TIMEOUT,
    UI_TIMEOUT,
    contrast,
    open_notebook,
    open_sidebar,
    read_colours,
    run_cell,
    set_theme,
    wait_for_kernel_idle,
    wait_until_ran,
    write_notebook,
)

from tests.oauth_support import OAuthServer

VIEWPORT = {"width": 1280, "height": 900}
ROW = "#codemode-sidebar .jp-codemode-sidebar-server:has(.jp-codemode-sidebar-server-name:text-is('secure'))"
LINK = f"{ROW} a.jp-codemode-sidebar-signin-link"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, oauth_server: OAuthServer) -> Iterator[Lab]:
    """JupyterLab whose kernels have the OAuth server and the weather server (the user config)."""
    base = tmp_path_factory.mktemp("lab")
    server = start_lab(base, SERVER_START_TIMEOUT, ["--LabApp.expose_app_in_browser=True"])
    try:
        servers = {
            "secure": {"type": "http", "url": oauth_server.url},
            "weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]},
        }
        config = base / "xdg-config" / "codemode" / "config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"mcpServers": servers}))
        yield server
    finally:
        stop_lab(server)


@pytest.mark.timeout(300)
def test_the_sidebar_link_signs_in_and_the_tools_arrive_without_a_restart(
    app: Page, lab: Lab, oauth_server: OAuthServer
) -> None:
    cells = [nbformat.v4.new_code_cell("whoami()['scopes']")]
    panel = open_notebook(app, write_notebook(lab, "signin.ipynb", cells))
    wait_for_kernel_idle(app, panel)
    sidebar = open_sidebar(app)

    link = app.locator(LINK)
    link.wait_for(timeout=KERNEL_TIMEOUT)
    row = app.locator(ROW)
    assert row.locator(".jp-codemode-sidebar-server-state").inner_text() == "signin"
    assert row.locator(".jp-codemode-sidebar-dot-signin").count() == 1
    assert link.inner_text() == "Sign in to secure"
    href = link.get_attribute("href") or ""
    assert href.startswith(f"{oauth_server.base}/authorize?"), href
    assert link.get_attribute("target") == "_blank" and link.get_attribute("rel") == "noopener noreferrer"

    # The first cell: its tool is not there yet, and the cell shows the same link.
    cell = run_cell(app, panel, 0)
    wait_until_ran(app, cell)
    output = cell.locator(".jp-OutputArea").inner_text()
    assert "Sign in to secure" in output and "NameError" in output, output
    assert cell.locator("a:text('Sign in to secure')").get_attribute("href") == href

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ratios = {}
    for theme in (DARK, LIGHT):
        set_theme(app, theme)
        colours = read_colours(link)
        ratios[theme] = round(contrast(colours["text"], colours["background"]), 2)
        sidebar.screenshot(path=ARTIFACTS / f"signin_sidebar_{'dark' if theme == DARK else 'light'}.png")
    print(f"sign-in link contrast: {ratios}")
    assert all(ratio >= 4.5 for ratio in ratios.values()), ratios

    # The person clicks: a new tab, the server's sign-in, the redirect back to the kernel's listener.
    with app.context.expect_page(timeout=UI_TIMEOUT) as opened:
        link.click()
    tab = opened.value
    clicked = time.perf_counter()
    tab.wait_for_load_state(timeout=UI_TIMEOUT)
    assert "Signed in." in tab.locator("body").inner_text()
    assert tab.url.startswith("http://127.0.0.1:") and "/callback?" in tab.url
    tab.close()

    row.locator(".jp-codemode-sidebar-server-state:text-is('ready')").wait_for(timeout=UI_TIMEOUT)
    ready_in = time.perf_counter() - clicked
    print(f"JupyterLab sign-in: link clicked to the sidebar saying ready in {ready_in:.2f} s")
    assert row.locator(".jp-codemode-sidebar-server-meta").inner_text() == "http · 3 tools"
    assert app.locator(LINK).count() == 0
    sidebar.screenshot(path=ARTIFACTS / "signin_sidebar_ready.png")

    run_cell(app, panel, 0)
    app.wait_for_function(
        "(cell) => cell.querySelector('.jp-OutputArea').textContent.includes(\"['tools']\")",
        arg=cell.element_handle(),
        timeout=UI_TIMEOUT,
    )
    assert "Sign in" not in cell.locator(".jp-OutputArea").inner_text()
