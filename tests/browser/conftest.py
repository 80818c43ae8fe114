"""Browser-test fixtures: JupyterLab started by the test (lab_session), Debian's chromium under Playwright.

The browser is always /usr/bin/chromium, which scripts/test.sh installs with apt: a Playwright browser
download cannot work on these machines, and a missing browser fails the test rather than skipping it.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from lab_session import ARTIFACTS, Lab, lab_app, shut_down_kernels, start_lab, stop_lab
from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
# The flags seen working here (../shared/NOTES.md): no sandbox as root, and no traffic of its own.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_TIMEOUT = 90.0  # seconds; a cold JupyterLab on two busy cores takes 5-20 s
VIEWPORT = {"width": 1280, "height": 2400}  # tall: the whole executed quickstart fits in the screenshot
_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Remember on the item whether a phase failed, for fixtures that keep evidence only then."""
    report: pytest.TestReport = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium; its absence fails the test, since a skipped browser test proves nothing."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run scripts/test.sh, which installs Debian's chromium with apt")
    return CHROMIUM


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab serving a copy of notebooks/ without outputs, its kernels with the demo servers, and
    ``window.jupyterapp`` exposed for tests to run its commands; stopped with its kernels afterwards.

    One for the session, since starting one takes 5-20 s, more on a busy machine: each module's page has
    a workspace of its own and the module's kernels are shut down after it (``app``, ``page``). A module
    whose kernels need a config of their own starts its own JupyterLab (a ``lab`` of module scope).
    """
    server = start_lab(
        tmp_path_factory.mktemp("lab"), SERVER_START_TIMEOUT, ["--LabApp.expose_app_in_browser=True"]
    )
    try:
        yield server
    finally:
        stop_lab(server)


@pytest.fixture(scope="module")
def browser(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Headless Debian chromium under Playwright, with the flags that work on these machines.

    Its config and cache directories (crash reports included) are temporary, not the user's. Module
    scope, not session: Playwright's sync API keeps an event loop running on this thread (and its driver
    as a child process) until it exits, which would break every later test that calls asyncio.run().
    """
    home = tmp_path_factory.mktemp("chromium")
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache")}
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=CHROMIUM_ARGS, env=env
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def app(browser: Browser, lab: Lab, request: pytest.FixtureRequest) -> Iterator[Page]:
    """One JupyterLab page for the module (loading it costs 5-20 s), restored and ready for commands.

    Its viewport is the module's ``VIEWPORT``, its layout the JupyterLab workspace named after the
    module. Afterwards the kernels its notebooks started are shut down.
    """
    with lab_app(browser, lab, request.module.VIEWPORT, workspace=request.module.__name__) as page:
        yield page
    shut_down_kernels(lab)


@pytest.fixture
def page(browser: Browser, lab: Lab, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page; afterwards, pass or fail, a full-page screenshot, and on failure the server log too;
    then the kernels its notebooks started are shut down.

    The screenshot lands in ``test-artifacts/browser/<test name without test_>.png``.
    """
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    try:
        yield opened
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        try:
            opened.screenshot(
                path=ARTIFACTS / f"{request.node.name.removeprefix('test_')}.png", full_page=True
            )
        finally:
            context.close()
            if request.node.stash.get(_FAILED, False):
                lab.save_log()
            shut_down_kernels(lab)
