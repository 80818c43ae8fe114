"""An approval as a user meets it in JupyterLab: a program calls a destructive tool (npm server-memory's
``delete_entities``), JupyterLab shows the kernel's question in a stdin box under the running cell, the
user types ``y`` or ``n`` and presses Enter, and the finished trace says who decided.

The first cell is answered on the light theme and the second on the dark one; screenshots of each waiting
question and of both traces in both themes go to ``test-artifacts/browser/approval_*.png``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import nbformat
import pytest
from lab_session import ARTIFACTS, Lab, start_lab, stop_lab
from playwright.sync_api import Locator, Page
from test_extension_lab import (
    BADGE,
    DARK,
    FINISHED_TRACE,
    LIGHT,
    ROW,
    RUN_TIMEOUT,
    SERVER_START_TIMEOUT,
    TRACE,
    UI_TIMEOUT,
    contrast,
    open_notebook,
    read_colours,
    run_cell,
    set_theme,
    wait_for_kernel_idle,
    wait_until_ran,
    write_notebook,
)

VIEWPORT = {"width": 1280, "height": 1000}
DESTRUCTIVE = "its server marks it destructive (destructiveHint)"
SETUP = (
    "%%codemode\n"
    'cities = [{"name": n, "entityType": "city", "observations": []} for n in ("Oslo", "Lima")]\n'
    "create_entities(entities=cities)"
)
DELETE = (
    '%%codemode\ndelete_entities(entityNames=["{name}"])\nsorted(e["name"] for e in read_graph().entities)'
)
STDIN_BOX = ".jp-Stdin"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, memory_server_bin: str) -> Iterator[Lab]:
    """JupyterLab (overriding conftest's) with ``window.jupyterapp``, whose kernels have server-memory.

    The config is the user config of the server's temporary home (its kernels read it when they start).
    """
    base = tmp_path_factory.mktemp("lab")
    server = start_lab(base, SERVER_START_TIMEOUT, ["--LabApp.expose_app_in_browser=True"])
    try:
        entry = {
            "command": memory_server_bin,
            "env": {"MEMORY_FILE_PATH": str(base / "memory.jsonl")},
            "timeout": 90,
        }
        config = base / "xdg-config" / "codemode" / "config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"mcpServers": {"memory": entry}}))
        yield server
    finally:
        stop_lab(server)


def answer_the_question(page: Page, cell: Locator, answer: str, shot: str) -> str:
    """Wait for the stdin box under ``cell``, screenshot it, type ``answer`` and press Enter; its question."""
    box = cell.locator(STDIN_BOX)
    box.wait_for(timeout=RUN_TIMEOUT)
    # While the question waits, the live trace lists the call as running (its updates are throttled).
    live = cell.locator(f'{TRACE}:has({BADGE}[data-status="running"]) {ROW}')
    live.filter(has=page.locator('.jp-codemode-badge[data-status="running"]')).wait_for(timeout=UI_TIMEOUT)
    cell.screenshot(path=ARTIFACTS / shot)
    question = " ".join(box.inner_text().split())
    field = box.locator("input")
    field.click()
    field.fill(answer)
    page.keyboard.press("Enter")
    return question


def finished_row(cell: Locator, seq: int) -> Locator:
    """The call row ``#seq`` of the cell's finished trace."""
    trace = cell.locator(FINISHED_TRACE).first
    trace.wait_for(timeout=RUN_TIMEOUT)
    return trace.locator(ROW).filter(has=cell.page.locator(".jp-codemode-call-seq", has_text=f"#{seq}"))


@pytest.mark.timeout(300)
def test_the_stdin_box_asks_and_the_trace_says_who_decided(app: Page, lab: Lab) -> None:
    cells = [nbformat.v4.new_code_cell(SETUP)]
    cells += [nbformat.v4.new_code_cell(DELETE.replace("{name}", n)) for n in ("Oslo", "Lima")]
    panel = open_notebook(app, write_notebook(lab, "approval.ipynb", cells))
    wait_for_kernel_idle(app, panel)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    setup, allowed_cell, denied_cell = (panel.locator(".jp-Notebook .jp-Cell").nth(i) for i in range(3))
    run_cell(app, panel, 0)
    wait_until_ran(app, setup)
    assert setup.locator(STDIN_BOX).count() == 0  # creating is not destructive: nobody is asked

    set_theme(app, LIGHT)
    run_cell(app, panel, 1)
    question = answer_the_question(app, allowed_cell, "y", "approval_question_light.png")
    assert 'codemode: memory/delete_entities(entityNames=["Oslo"]) needs approval' in question
    assert f"why: {DESTRUCTIVE}" in question
    assert "y = allow this call, a = allow this tool from now on, n = deny (default)" in question
    wait_until_ran(app, allowed_cell)

    set_theme(app, DARK)
    try:
        run_cell(app, panel, 2)
        answer_the_question(app, denied_cell, "n", "approval_question_dark.png")
        wait_until_ran(app, denied_cell)

        allowed = finished_row(allowed_cell, 1)
        assert allowed.get_attribute("title") == f"allowed by the user (once): {DESTRUCTIVE}"
        assert "jp-codemode-call-row-allowed" in (allowed.get_attribute("class") or "")
        value = allowed_cell.locator(f"{FINISHED_TRACE} .jp-codemode-value-section").first
        assert '"Lima"' in value.inner_text() and "Oslo" not in value.inner_text()  # Oslo was deleted
        denied = finished_row(denied_cell, 1)
        assert denied.get_attribute("title") == f"denied by the user: {DESTRUCTIVE}"
        assert denied.locator(".jp-codemode-call-status").inner_text().strip() == "✗ denied"
        # The program did not catch the denial: it failed at the call, and nothing was deleted.
        error = denied_cell.locator(f"{FINISHED_TRACE} .jp-codemode-error").first
        assert "memory/delete_entities was denied by the user; nothing was sent" in error.inner_text()
        assert denied_cell.locator(f"{FINISHED_TRACE} {BADGE}").first.get_attribute("data-status") == "error"

        # Opened, each row's detail says who decided and why, in amber or red.
        allowed.click()
        denied.click()
        lines = {
            "allowed": allowed_cell.locator(".jp-codemode-approval-allowed"),
            "denied": denied_cell.locator(".jp-codemode-approval-denied"),
        }
        assert lines["allowed"].inner_text() == f"allowed by the user (once): {DESTRUCTIVE}"
        assert lines["denied"].inner_text() == f"denied by the user: {DESTRUCTIVE}"
        ratios = {}
        for theme in (DARK, LIGHT):
            set_theme(app, theme)
            for name, line in lines.items():
                colours = read_colours(line)
                ratios[f"{name} in {theme}"] = round(contrast(colours["text"], colours["background"]), 2)
            allowed_cell.scroll_into_view_if_needed()
            shot = "approval_traces_dark.png" if theme == DARK else "approval_traces_light.png"
            panel.screenshot(path=ARTIFACTS / shot)
        print(f"contrast ratios: {ratios}")
        assert all(ratio >= 4.5 for ratio in ratios.values()), ratios  # WCAG AA for text
    finally:
        set_theme(app, LIGHT)
