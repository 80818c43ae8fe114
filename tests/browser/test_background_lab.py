"""A background cell in JupyterLab: "Run Cell in Background", its trace growing while another cell runs.

The user right-clicks a cell and picks "Run Cell in Background": the cell ends at once ([n]), its live
trace keeps gaining rows while the next cell (plain Python, sleeping) shows [*], and at the end it is the
finished record with the program's note. A second background run is cancelled from a cell (``cancel()`` on
``jobs``' entries): its badge says ``cancelled``, in a colour that reads on both themes. Screenshots of the
cells on the light and the dark theme go to ``test-artifacts/browser/background_{running,light,dark}.png``.
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
CANCEL_ALL = "[job.cancel() for job in jobs.values() if job.status == 'running']; print('cancelled')"
NOTES = ".jp-codemode-notes .jp-codemode-note-item"

# True once the foreground cell shows [*] and the background trace has more rows than ``before``.
GREW_WHILE_BUSY = """([fg, bg, before, row]) => {
    const busy = fg.querySelector('.jp-InputPrompt').textContent.trim() === '[*]:';
    return busy && bg.querySelectorAll(row).length > before;
}"""


@pytest.fixture(scope="module")
def notebook(app: Page, lab: Lab) -> Locator:
    cells = [nbformat.v4.new_code_cell(source) for source in (SPACED, FOREGROUND, WAITING, CANCEL_ALL)]
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


def test_a_cancelled_run_says_so_on_both_themes(app: Page, notebook: Locator) -> None:
    cells = notebook.locator(".jp-Notebook .jp-Cell")
    waiting = cells.nth(2)
    run_cell(app, notebook, 2)
    wait_until_ran(app, waiting)
    waiting.locator(NOTES, has_text="waiting for a signal").wait_for(timeout=RUN_TIMEOUT)
    run_cell(app, notebook, 3)
    badge = waiting.locator(f'{BADGE}[data-status="cancelled"]')
    badge.wait_for(timeout=RUN_TIMEOUT)
    assert badge.inner_text() == "■ cancelled"
    assert "stopped by jobs['" in waiting.locator(FINISHED_TRACE).inner_text()
    try:
        for theme, name in ((LIGHT, "light"), (DARK, "dark")):
            set_theme(app, theme)
            colours = read_colours(badge)
            assert contrast(colours["text"], colours["background"]) >= 4.5, f"{theme}: {colours}"
            notebook.screenshot(path=ARTIFACTS / f"background_{name}.png")
    finally:
        set_theme(app, LIGHT)
    notebook.locator(".jp-Cell").first.wait_for(timeout=UI_TIMEOUT)
