"""A slow tool's progress as a user meets it in JupyterLab: a ``%%codemode`` cell calls the demo weather's
``get_forecast`` (5 days, 0.6 s each, so about 3 s), and while it runs the trace's row shows a progress bar
filling up with the server's message, ``Oslo: day N of 5``; the finished trace keeps one line in the call's
detail, ``progress: 5 updates, last: Oslo: day 5 of 5``.

The first cell runs on the light theme, the second on the dark one; screenshots of each running and
finished trace go to ``test-artifacts/browser/progress_*.png``.
"""

from __future__ import annotations

import re
from typing import Any

import nbformat
import pytest
from lab_session import ARTIFACTS, Lab
from playwright.sync_api import Locator, Page
from test_extension_lab import (
    BADGE,
    COLOURS,
    DARK,
    FINISHED_TRACE,
    LIGHT,
    ROW,
    RUN_TIMEOUT,
    TRACE,
    contrast,
    open_notebook,
    read_colours,
    run_cell,
    set_theme,
    wait_for_kernel_idle,
    wait_until_ran,
    write_notebook,
)

VIEWPORT = {"width": 1280, "height": 900}
FORECAST = (
    "%%codemode\n"
    'forecast = get_forecast(city="Oslo", days=5, delay_seconds=0.6)\n'
    "[day.temperature for day in forecast.days]"
)
WARM_UP = 'get_weather(city="Oslo", unit="celsius").temperature'
RUNNING_ROW = f'{TRACE}:has({BADGE}[data-status="running"]) {ROW}'
MESSAGE = ".jp-codemode-call-progress-message"

# Records, for each change of a running row's progress, its message and the bar's width (in %).
WATCH_PROGRESS = """(root, [row, message]) => {
    const seen = [];
    const look = () => root.querySelectorAll(row).forEach((el) => {
        const text = el.querySelector(message)?.textContent ?? '';
        const fill = el.querySelector('.jp-codemode-progress-fill')?.style.width ?? '';
        const last = seen[seen.length - 1];
        if (text && (!last || last.text !== text)) {
            seen.push({text, fill});
        }
    });
    new MutationObserver(look).observe(root, {childList: true, subtree: true, characterData: true});
    window.__codemodeProgress = seen;
}"""


# The running row's facts, found and read in one go, once its message says day 2, 3 or 4 of 5; else null.
# In one go, since the live trace replaces a row at each progress update: a row found first and read in a
# later call may have left the page by then (its computed colours are empty).
READ_RUNNING_ROW = """([cell, selector, message, pattern]) => {
    const row = [...cell.querySelectorAll(selector)].find(
        (r) => new RegExp(pattern).test(r.querySelector(message)?.textContent ?? ''));
    if (!row) {
        return null;
    }
    const bar = row.querySelector('.jp-codemode-progress');
    return {
        colours: (COLOURS)(row.querySelector(message)),
        message: row.querySelector(message).textContent,
        status: row.querySelector('.jp-codemode-call-status').textContent,
        fill: bar.querySelector('.jp-codemode-progress-fill').style.width,
        role: bar.getAttribute('role'),
        title: bar.title,
        header: row.closest('.jp-codemode-trace').querySelector('.jp-codemode-summary').textContent,
    };
}""".replace("(COLOURS)", f"({COLOURS})")


def watch_while_it_runs(page: Page, cell: Locator, shot: str) -> dict[str, Any]:
    """What the running row showed once it said day 2 or later; then a screenshot of the cell."""
    found = page.wait_for_function(
        READ_RUNNING_ROW,
        arg=[cell.element_handle(), RUNNING_ROW, MESSAGE, r"Oslo: day [2-4] of 5"],
        timeout=RUN_TIMEOUT,
    )
    seen: dict[str, Any] = found.json_value()
    cell.screenshot(path=ARTIFACTS / shot)
    return seen


def detail_line(cell: Locator) -> Locator:
    """Open the finished trace's get_forecast row; its detail's progress line."""
    trace = cell.locator(FINISHED_TRACE).first
    trace.wait_for(timeout=RUN_TIMEOUT)
    row = trace.locator(ROW).first
    assert row.locator(".jp-codemode-progress").count() == 0, "a finished call keeps no bar on its row"
    row.click()
    return trace.locator(".jp-codemode-call-progress-summary")


@pytest.mark.timeout(300)
def test_a_slow_call_shows_its_progress_then_the_finished_trace_says_how_it_went(app: Page, lab: Lab) -> None:
    # A plain call first, so the servers have started when the screenshots are taken (the first cell
    # would otherwise show "waiting for the MCP servers to start...").
    cells = [nbformat.v4.new_code_cell(WARM_UP)] + [nbformat.v4.new_code_cell(FORECAST) for _ in range(2)]
    panel = open_notebook(app, write_notebook(lab, "progress.ipynb", cells))
    wait_for_kernel_idle(app, panel)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    warm_up, light_cell, dark_cell = (panel.locator(".jp-Notebook .jp-Cell").nth(i) for i in range(3))
    run_cell(app, panel, 0)
    wait_until_ran(app, warm_up)
    lines: dict[str, Locator] = {}
    ratios: dict[str, float] = {}
    try:
        for theme, cell, index in ((LIGHT, light_cell, 1), (DARK, dark_cell, 2)):
            name = "light" if theme == LIGHT else "dark"
            set_theme(app, theme)
            cell.evaluate(WATCH_PROGRESS, [RUNNING_ROW, MESSAGE])
            run_cell(app, panel, index)
            running = watch_while_it_runs(app, cell, f"progress_running_{name}.png")
            colours = running.pop("colours")
            ratios[f"running message in {theme}"] = round(contrast(colours["text"], colours["background"]), 2)
            print(f"{name}, while it ran: {running}")
            day = int(re.search(r"day (\d) of 5", running["message"]).group(1))  # type: ignore[union-attr]
            assert running["status"] == "… running" and running["role"] == "progressbar"
            assert float(running["fill"].rstrip("%")) == pytest.approx(day * 20, abs=20.1)
            assert running["title"].endswith(f"of 5: Oslo: day {day} of 5")
            assert re.fullmatch(r".* · 1 call: 0 done, 1 running", running["header"]), running["header"]

            wait_until_ran(app, cell)
            lines[name] = line = detail_line(cell)
            assert line.inner_text() == "progress: 5 updates, last: Oslo: day 5 of 5"
            values = cell.locator(f"{FINISHED_TRACE} .jp-codemode-value-section").first.inner_text()
            assert "5 items" in values and "20.5" in values, values  # the forecast came back
            seen: list[dict[str, str]] = app.evaluate("() => window.__codemodeProgress")
            print(f"{name}, progress seen: {seen}")
            days = [int(m.group(1)) for s in seen if (m := re.search(r"day (\d) of 5", s["text"]))]
            assert len(days) >= 3 and days == sorted(days), f"the bar did not follow the days: {seen}"
            cell.locator(FINISHED_TRACE).first.scroll_into_view_if_needed()
            cell.screenshot(path=ARTIFACTS / f"progress_finished_{name}.png")

        # The row's message and the detail's line read well on both themes.
        for theme in (DARK, LIGHT):
            set_theme(app, theme)
            for name, line in lines.items():
                colours = read_colours(line)
                ratios[f"{name} run's line in {theme}"] = round(
                    contrast(colours["text"], colours["background"]), 2
                )
        print(f"contrast ratios: {ratios}")
        assert all(ratio >= 4.5 for ratio in ratios.values()), ratios  # WCAG AA for text
    finally:
        set_theme(app, LIGHT)
