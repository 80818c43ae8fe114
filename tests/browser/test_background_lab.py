"""A background cell in JupyterLab: "Run Cell in Background", its trace growing while another cell runs.

The user right-clicks a cell and picks "Run Cell in Background": the cell ends at once ([n]), its live
trace keeps gaining rows while the next cell (plain Python, sleeping) shows [*], and at the end it is the
finished record with the program's note. A second background run is listed in the sidebar's Background
runs section and cancelled with its Cancel button: the cell's badge and the row say ``cancelled``, in a
colour that reads on both themes. Screenshots (the notebook while the first run goes on; the page on the
light and the dark theme) go to ``test-artifacts/browser/background_{running,light,dark}.png``.
"""

from __future__ import annotations

import nbformat
import pytest
from lab_session import ARTIFACTS, Lab
from playwright.sync_api import Locator, Page
from test_extension_lab import (
    BADGE,
    DARK,
    FINISHED_TRACE,
    LIGHT,
    ROW,
    RUN_TIMEOUT,
    TRACE,
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

VIEWPORT = {"width": 1280, "height": 1400}
# Plain Python: the command adds the %%codemode --background line (the cell keeps its text).
SPACED = (
    "import time\n"
    "for i, city in enumerate(['Oslo', 'Lima', 'Pune', 'Kyiv', 'Rome', 'Doha', 'Lagos', 'Quito']):\n"
    "    get_weather(city=city, unit='celsius')\n"
    "    if i == 1:\n"
    "        notify('two cities done', left=6)\n"
    "    time.sleep(0.6)\n"
    "'all eight'"
)
FOREGROUND = "import time\ntime.sleep(6)\n'foreground done'"
WAITING = "%%codemode --background\nnotify('waiting for a signal')\nimport time\ntime.sleep(120)"
NOTES = ".jp-codemode-notes .jp-codemode-note-item"
JOBS = "#codemode-sidebar .jp-codemode-sidebar-jobs"

# True once the foreground cell shows [*] and the background trace has more rows than ``before``.
GREW_WHILE_BUSY = """([fg, bg, before, row]) => {
    const busy = fg.querySelector('.jp-InputPrompt').textContent.trim() === '[*]:';
    return busy && bg.querySelectorAll(row).length > before;
}"""


@pytest.fixture(scope="module")
def notebook(app: Page, lab: Lab) -> Locator:
    cells = [nbformat.v4.new_code_cell(source) for source in (SPACED, FOREGROUND, WAITING)]
    panel = open_notebook(app, write_notebook(lab, "background.ipynb", cells))
    wait_for_kernel_idle(app, panel)
    return panel


def run_in_background(page: Page, cell: Locator) -> None:
    """Right-click the cell's prompt and pick "Run Cell in Background", as a user does."""
    cell.locator(".jp-InputPrompt").click(button="right")
    page.locator(".lm-Menu-item:visible", has_text="Run Cell in Background").first.click()


def test_a_background_cell_updates_while_another_cell_runs(app: Page, notebook: Locator) -> None:
    cells = notebook.locator(".jp-Notebook .jp-Cell")
    background, foreground = cells.nth(0), cells.nth(1)
    run_in_background(app, background)
    wait_until_ran(app, background)  # the cell ended at once: [n], while its program runs
    live = background.locator(f'{TRACE}:has({BADGE}[data-status="running"])')
    live.locator(ROW).first.wait_for(timeout=RUN_TIMEOUT)
    assert "%%codemode" not in background.locator(".jp-InputArea").inner_text(), "the cell's text changed"

    before = live.locator(ROW).count()
    run_cell(app, notebook, 1)
    app.wait_for_function(
        GREW_WHILE_BUSY,
        arg=[foreground.element_handle(), background.element_handle(), before, ROW],
        timeout=RUN_TIMEOUT,
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    notebook.screenshot(path=ARTIFACTS / "background_running.png")

    finished = background.locator(FINISHED_TRACE)
    finished.first.wait_for(timeout=RUN_TIMEOUT)
    assert finished.count() == 1, "the live trace was left beside the record"
    assert finished.locator(BADGE).get_attribute("data-status") == "ok"
    assert finished.locator(ROW).count() == 8
    assert finished.locator(NOTES).all_inner_texts() == ["two cities done · left=6"]
    wait_until_ran(app, foreground)
    assert "foreground done" in foreground.locator(".jp-OutputArea").inner_text()


def open_jobs_section(page: Page) -> Locator:
    """Open the sidebar and its Background runs section (unfolded if folded); the section."""
    sidebar = open_sidebar(page)
    title = sidebar.locator(".lm-AccordionPanel-title", has_text="Background runs")
    title.wait_for(timeout=UI_TIMEOUT)
    if title.get_attribute("aria-expanded") != "true":
        title.click()
    return page.locator(JOBS)


def test_the_sidebar_lists_a_background_run_and_cancels_it(app: Page, notebook: Locator) -> None:
    cells = notebook.locator(".jp-Notebook .jp-Cell")
    waiting = cells.nth(2)
    run_cell(app, notebook, 2)
    wait_until_ran(app, waiting)
    waiting.locator(NOTES, has_text="waiting for a signal").wait_for(timeout=RUN_TIMEOUT)
    jobs = open_jobs_section(app)
    row = jobs.locator(".jp-codemode-sidebar-job", has=app.locator('[data-status="running"]'))
    row.wait_for(timeout=UI_TIMEOUT)  # the kernel's state file lists it within a poll or two
    assert row.locator(".jp-codemode-sidebar-job-line").inner_text() == "notify('waiting for a signal')"
    row.locator(".jp-codemode-sidebar-job-cancel").click()

    badge = waiting.locator(f'{BADGE}[data-status="cancelled"]')
    badge.wait_for(timeout=RUN_TIMEOUT)
    assert badge.inner_text() == "■ cancelled"
    assert "stopped by %codemode cancel" in waiting.locator(FINISHED_TRACE).inner_text()
    jobs.locator('.jp-codemode-sidebar-job [data-status="cancelled"]').wait_for(timeout=UI_TIMEOUT)
    try:
        for theme, name in ((LIGHT, "light"), (DARK, "dark")):
            set_theme(app, theme)
            for part in (badge, jobs.locator('[data-status="cancelled"]').first):
                colours = read_colours(part)
                assert contrast(colours["text"], colours["background"]) >= 4.5, f"{theme}: {colours}"
            app.screenshot(path=ARTIFACTS / f"background_{name}.png")
    finally:
        set_theme(app, LIGHT)
