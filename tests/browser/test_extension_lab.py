"""The JupyterLab extension as a user meets it: the trace renderer, the live trace, the sidebar, the themes.

The session's JupyterLab (conftest's ``lab``: ``window.jupyterapp`` is exposed, so tests can run its
commands) and one page (``app``) serve the whole module; each test opens notebooks it writes into the
served directory at run time. What
is read from the page is what a user reads: rows, badges, text, colours. Screenshots go to
``test-artifacts/browser/extension_*.png``.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from lab_session import ARTIFACTS, ROOT, Lab
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page

from codemode_kernel.views.display import TRACE_MIME

SERVER_START_TIMEOUT = 90.0  # seconds, as in conftest: a cold JupyterLab on two busy cores
KERNEL_TIMEOUT = 90_000  # ms: a Code Mode kernel and its demo MCP servers starting
RUN_TIMEOUT = 60_000  # ms: one %%codemode cell
UI_TIMEOUT = 15_000  # ms: the page reacting to a click or a command
VIEWPORT = {"width": 1400, "height": 1100}

TRACE_OUTPUT = f'.jp-OutputArea-output[data-mime-type="{TRACE_MIME}"]'
TRACE = f"{TRACE_OUTPUT} .jp-codemode-trace"
BADGE = ".jp-codemode-header .jp-codemode-badge"
ROW = ".jp-codemode-call-row"
FINISHED_TRACE = f'{TRACE}:not(:has({BADGE}[data-status="running"]))'
SIDEBAR = "#codemode-sidebar"
DEMO_SERVERS = {"weather", "workspace", "sqlite"}

# Strings a hostile tool, server or program could hand the renderer.
IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "</script><script>window.__pwned=2</script>"
RLO = "\u202e"
HOSTILE = f"{IMG}{SCRIPT}{RLO}gpj.exe"
MEGABYTE_LINE = "A" * 1_000_000


# -- a screenshot after each test --------------------------------------------------------------


@pytest.fixture(autouse=True)
def screenshot(app: Page, lab: Lab, request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, a screenshot of the module's page, and on failure the server log too."""
    failed_before = request.session.testsfailed
    yield
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.removeprefix("test_")
    app.screenshot(path=ARTIFACTS / f"extension_{name}.png")
    if request.session.testsfailed > failed_before:
        lab.save_log()


# -- helpers ------------------------------------------------------------------------------------


def run_command(page: Page, command: str, args: dict[str, Any] | None = None) -> None:
    """Run a JupyterLab command (what a palette entry or menu item does) and wait until it finished."""
    page.evaluate(
        "async ([command, args]) => { await window.jupyterapp.commands.execute(command, args); }",
        [command, args or {}],
    )


def open_notebook(page: Page, path: str) -> Locator:
    """Open a notebook of the served directory in the main area; its panel, once its cells show."""
    opening = """async (path) => {
            const widget = await window.jupyterapp.commands.execute('docmanager:open', {path});
            await widget.context.ready;
            window.jupyterapp.shell.activateById(widget.id);
            return widget.id;
        }"""
    try:
        panel_id: str = page.evaluate(opening, path)
    except PlaywrightError as exc:
        # Chromium dropped the page function's promise (seen once in CI on a loaded machine, as the
        # notebook opened): opening it again finds the widget already open, or opens it.
        if "garbage collected" not in str(exc):
            raise
        panel_id = page.evaluate(opening, path)
    panel = page.locator(f'.jp-NotebookPanel[id="{panel_id}"]')
    panel.locator(".jp-Cell").first.wait_for(timeout=UI_TIMEOUT)
    return panel


def wait_for_kernel_idle(page: Page, panel: Locator) -> None:
    """Wait until the panel's kernel is the Code Mode kernel, connected and idle."""
    page.wait_for_function(
        """(id) => {
            const widget = [...window.jupyterapp.shell.widgets('main')].find((w) => w.id === id);
            const kernel = widget?.sessionContext.session?.kernel;
            return kernel?.name === 'codemode' && kernel.connectionStatus === 'connected'
                && kernel.status === 'idle';
        }""",
        arg=panel.get_attribute("id"),
        timeout=KERNEL_TIMEOUT,
    )


def cell_source(page: Page, panel: Locator, index: int) -> str:
    """The source of the panel's cell ``index``, from the notebook's model."""
    source: str = page.evaluate(
        """([id, index]) => {
            const widget = [...window.jupyterapp.shell.widgets('main')].find((w) => w.id === id);
            return widget.content.widgets[index].model.sharedModel.getSource();
        }""",
        [panel.get_attribute("id"), index],
    )
    return source


def select_cell(panel: Locator, index: int) -> Locator:
    """Click cell ``index``'s prompt, as a user selects a cell (command mode)."""
    cell = panel.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputPrompt").click()
    return cell


def run_cell(page: Page, panel: Locator, index: int) -> Locator:
    """Select cell ``index`` and press Shift+Enter; the cell."""
    cell = select_cell(panel, index)
    page.keyboard.press("Shift+Enter")
    return cell


def wait_until_ran(page: Page, cell: Locator) -> None:
    """Wait until ``cell`` shows an execution count (not ``[*]``): the kernel answered its execution."""
    prompt = cell.locator(".jp-InputPrompt")
    page.wait_for_function(
        "(prompt) => /^\\[\\d+\\]:$/.test(prompt.textContent.trim())",
        arg=prompt.element_handle(),
        timeout=RUN_TIMEOUT,
    )


def write_notebook(lab: Lab, name: str, cells: list[Any]) -> str:
    """Write a Code Mode notebook of ``cells`` into the served directory; its path there."""
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "name": "codemode",
        "display_name": "Code Mode (Python 3)",
        "language": "python",
    }
    nbformat.write(notebook, lab.root / name)
    return name


def shut_down_kernel(lab: Lab, path: str) -> None:
    """Delete the session (and its kernel) of the notebook at ``path`` through the REST API."""
    for session in lab.api("GET", "/api/sessions"):
        if session["path"] == path:
            lab.api("DELETE", f"/api/sessions/{session['id']}", timeout=30)


KERNEL_STATE_JS = """(id) => {
    const widget = [...window.jupyterapp.shell.widgets('main')].find((w) => w.id === id);
    const kernel = widget?.sessionContext.session?.kernel;
    return kernel ? kernel.status : null;
}"""


def kernel_state(page: Page, panel: Locator) -> str | None:
    """The status of the panel's kernel (``idle``, ``busy``, ``starting``...), or None without one."""
    state: str | None = page.evaluate(KERNEL_STATE_JS, panel.get_attribute("id"))
    return state


def rows_text(trace: Locator) -> list[str]:
    """The call rows a trace shows, each as ``#seq tool(arguments)``."""
    texts: list[str] = trace.locator(ROW).evaluate_all(
        """rows => rows.map((r) => r.querySelector('.jp-codemode-call-seq').textContent + ' '
            + r.querySelector('.jp-codemode-call-name').textContent)"""
    )
    return texts


# -- 1. a saved notebook, no kernel -------------------------------------------------------------


def test_saved_notebook_renders_without_kernel(app: Page, lab: Lab) -> None:
    """A notebook saved with its traces shows them with the extension's renderer, kernel or not."""
    shutil.copyfile(ROOT / "notebooks" / "errors_and_timeouts.ipynb", lab.root / "saved_errors.ipynb")
    panel = open_notebook(app, "saved_errors.ipynb")
    traces = panel.locator(TRACE)
    traces.first.wait_for(timeout=UI_TIMEOUT)
    kernel_then = kernel_state(app, panel)
    assert kernel_then != "idle", "the traces must show before the kernel is up"
    # Its kernel (started by opening it) is shut down from outside; the traces stay and still work.
    app.wait_for_function(
        f"() => ({KERNEL_STATE_JS})({json.dumps(panel.get_attribute('id'))}) !== null", timeout=KERNEL_TIMEOUT
    )
    shut_down_kernel(lab, "saved_errors.ipynb")
    app.evaluate("() => window.jupyterapp.serviceManager.sessions.refreshRunning()")
    app.wait_for_function(
        f"() => ({KERNEL_STATE_JS})({json.dumps(panel.get_attribute('id'))}) === null", timeout=UI_TIMEOUT
    )
    stored = nbformat.read(ROOT / "notebooks" / "errors_and_timeouts.ipynb", as_version=4)
    expected = sum(
        TRACE_MIME in output.get("data", {}) for cell in stored.cells for output in cell.get("outputs", [])
    )
    assert traces.count() == expected
    mime_types = panel.locator(".jp-OutputArea-output:has(.jp-codemode-trace)").evaluate_all(
        "nodes => nodes.map((n) => n.dataset.mimeType)"
    )
    assert mime_types == [TRACE_MIME] * expected
    assert panel.locator(".jp-OutputArea-output .codemode-result").count() == 0, "the HTML fallback shows"

    failing = panel.locator(f'{TRACE}:has({BADGE}[data-status="error"])').first
    error = failing.locator(".jp-codemode-error")
    assert "ZeroDivisionError" in (error.text_content() or "")
    assert "line 3" in (error.text_content() or "")
    failing_line = failing.locator(".jp-codemode-code-line-failing")
    assert failing_line.locator(".jp-codemode-line-number").text_content() == "3"
    assert "average / (len(readings) - 2)" in (failing_line.text_content() or "")

    # A row opens to its call: the arguments as a tree.
    assert rows_text(failing)[0] == '#1 get_weather(city="Oslo", unit="celsius")'
    failing.locator(ROW).first.click()
    detail = failing.locator(".jp-codemode-call-detail")
    detail.wait_for(timeout=UI_TIMEOUT)
    assert "Oslo" in (detail.text_content() or "")
    assert "celsius" in (detail.text_content() or "")

    # The parallel() cell: two calls ok, one tool error; the status filter keeps only the chosen ones.
    mixed = panel.locator(TRACE).filter(has=app.locator(".jp-codemode-calls-count", has_text="3 tool calls"))
    mixed = mixed.first
    assert len(rows_text(mixed)) == 3
    status_filter = mixed.locator(".jp-codemode-calls-filter-status")
    status_filter.select_option("tool_error")
    assert rows_text(mixed) == ['#2 read_file(path="missing.txt")']
    assert mixed.locator(".jp-codemode-calls-count").text_content() == "1 of 3 tool calls"
    status_filter.select_option("ok")
    assert [row.split("(")[0] for row in rows_text(mixed)] == ["#1 get_weather", "#3 get_weather"]
    status_filter.select_option("")
    assert len(rows_text(mixed)) == 3
    # The tool filter, too.
    mixed.locator(".jp-codemode-calls-filter-tool").fill("read_file")
    assert rows_text(mixed) == ['#2 read_file(path="missing.txt")']
    assert kernel_state(app, panel) is None, "the page must still be without a kernel"


# -- the notebook with a kernel that tests 2-4 run cells of ---------------------------------------

SLOW_CELL = """%%codemode
import time
for i, city in enumerate(["Oslo", "Lima", "Nairobi"]):
    if i:
        time.sleep(0.7)
    get_weather(city=city, unit="celsius")
"""
ARTIFACT_CELL = """%%codemode
w = get_weather(city="Oslo", unit="celsius")
store_artifact({"city": w.city, "temperature": w.temperature}, name="oslo reading",
               description="stored by the browser test")
"""
PLAIN_CELL = 'get_weather(city="Lima", unit="celsius").temperature'
# A program that fails, a right-to-left override in the line above the failing one: the trace shows the error
# badge and, in the failing line's context, the override as a marker in the warn colour (the themes' test).
FAILING_CELL = """%%codemode
# a right-to-left override, shown as a marker: \u202e
raise ValueError("no forecast for Oslo")
"""
SLOW, STORE, EMPTY, PLAIN, FAILING = range(5)


@pytest.fixture(scope="module")
def live_notebook(app: Page, lab: Lab) -> Locator:
    """A notebook of cells to run (the slow one, the artifact one, an empty one, plain Python, a failing
    program), opened."""
    cells = [
        nbformat.v4.new_code_cell(SLOW_CELL.strip()),
        nbformat.v4.new_code_cell(ARTIFACT_CELL.strip()),
        nbformat.v4.new_code_cell(""),
        nbformat.v4.new_code_cell(PLAIN_CELL),
        nbformat.v4.new_code_cell(FAILING_CELL.strip()),
    ]
    panel = open_notebook(app, write_notebook(lab, "extension_live.ipynb", cells))
    wait_for_kernel_idle(app, panel)
    return panel


def activate(page: Page, panel: Locator) -> None:
    """Bring the notebook's tab to the front (other tests open other notebooks)."""
    page.evaluate("(id) => window.jupyterapp.shell.activateById(id)", panel.get_attribute("id"))
    panel.wait_for(state="visible", timeout=UI_TIMEOUT)


# Records each change of each trace under an element: (status of its badge, rows it lists), in order.
WATCH_TRACES = """(root, [trace, badge, row]) => {
    const events = [];
    const last = new Map();
    const look = () => root.querySelectorAll(trace).forEach((el) => {
        const status = el.querySelector(badge)?.dataset.status ?? '';
        const rows = el.querySelectorAll(row).length;
        const key = `${status}/${rows}`;
        if (last.get(el) !== key) {
            last.set(el, key);
            events.push({status, rows});
        }
    });
    const observer = new MutationObserver(look);
    observer.observe(root, {childList: true, subtree: true, characterData: true, attributes: true});
    window.__codemodeTraceEvents = events;
}"""


# -- 2. the live trace --------------------------------------------------------------------------


def test_live_trace_grows_then_the_record_stays(app: Page, live_notebook: Locator) -> None:
    """A running %%codemode cell shows its trace growing call by call, then the finished record only."""
    activate(app, live_notebook)
    wait_for_kernel_idle(app, live_notebook)
    cell = live_notebook.locator(".jp-Notebook .jp-Cell").nth(SLOW)
    cell.evaluate(WATCH_TRACES, [TRACE, BADGE, ROW])
    run_cell(app, live_notebook, SLOW)
    wait_until_ran(app, cell)
    finished = cell.locator(FINISHED_TRACE)
    finished.first.wait_for(timeout=UI_TIMEOUT)
    events: list[dict[str, Any]] = app.evaluate("() => window.__codemodeTraceEvents")
    print(f"trace changes seen: {[(e['status'], e['rows']) for e in events]}")

    running = [i for i, e in enumerate(events) if e["status"] == "running"]
    one = [i for i in running if events[i]["rows"] == 1]
    more = [i for i in running if events[i]["rows"] >= 2]
    done = [i for i, e in enumerate(events) if e["status"] == "ok" and e["rows"] == 3]
    assert one, f"no live trace with one row: {events}"
    assert more and more[-1] > one[0], f"the live trace did not grow: {events}"
    assert done and done[-1] > more[-1], f"the record did not come after the live trace: {events}"

    assert finished.count() == 1
    assert rows_text(finished) == [
        f'#{n} get_weather(city="{city}", unit="celsius")'
        for n, city in enumerate(["Oslo", "Lima", "Nairobi"], start=1)
    ]
    assert finished.locator(BADGE).get_attribute("data-status") == "ok"
    assert app.locator(f'{BADGE}[data-status="running"]').count() == 0, "a live trace was left behind"


def test_replay_cell_reruns_the_record_without_calling_a_server(app: Page, live_notebook: Locator) -> None:
    """ "Replay Cell" (the context menu) re-runs the slow cell on its record; its text stays as it was."""
    activate(app, live_notebook)
    wait_for_kernel_idle(app, live_notebook)
    cell = live_notebook.locator(".jp-Notebook .jp-Cell").nth(SLOW)
    if cell.locator(FINISHED_TRACE).count() == 0:  # run alone: the slow cell has not run yet
        run_cell(app, live_notebook, SLOW)
        wait_until_ran(app, cell)
        cell.locator(FINISHED_TRACE).first.wait_for(timeout=UI_TIMEOUT)
    before = cell_source(app, live_notebook, SLOW)
    cell.locator(".jp-InputPrompt").click(button="right")
    app.locator(".lm-Menu-item:visible", has_text="Replay Cell from Its Record").first.click()
    # Replayed: no server is called, so there is no 0.7 s wait between the calls and no live trace.
    replayed = cell.locator(f"{FINISHED_TRACE}:has-text('replayed')")
    replayed.first.wait_for(timeout=RUN_TIMEOUT)
    assert cell.locator(FINISHED_TRACE).count() == 1
    assert rows_text(replayed.first) == [
        f'#{n} get_weather(city="{city}", unit="celsius")'
        for n, city in enumerate(["Oslo", "Lima", "Nairobi"], start=1)
    ]
    assert cell_source(app, live_notebook, SLOW) == before, "replaying must not change the cell"


# -- 3. the sidebar -----------------------------------------------------------------------------


def open_sidebar(page: Page) -> Locator:
    """Open the Code Mode sidebar with its command; the sidebar."""
    run_command(page, "codemode:open-sidebar")
    sidebar = page.locator(SIDEBAR)
    sidebar.wait_for(state="visible", timeout=UI_TIMEOUT)
    return sidebar


def sidebar_servers(sidebar: Locator) -> dict[str, tuple[str, str]]:
    """The servers the sidebar lists: name -> (state, ``transport · N tools``)."""
    rows: list[list[str]] = sidebar.locator(".jp-codemode-sidebar-server").evaluate_all(
        """rows => rows.map((r) => ['server-name', 'server-state', 'server-meta'].map(
            (c) => r.querySelector('.jp-codemode-sidebar-' + c).textContent))"""
    )
    return {name: (state, meta) for name, state, meta in rows}


def test_sidebar_servers_tools_artifacts_history(app: Page, live_notebook: Locator) -> None:
    """The sidebar shows the kernel's servers and tools, inserts a call, lists artifacts and runs."""
    activate(app, live_notebook)
    wait_for_kernel_idle(app, live_notebook)
    sidebar = open_sidebar(app)

    # Servers: the three demo servers, ready, each with its tools.
    app.wait_for_function(
        """() => [...document.querySelectorAll('#codemode-sidebar .jp-codemode-sidebar-server-state')]
            .filter((s) => s.textContent === 'ready').length === 3""",
        timeout=KERNEL_TIMEOUT,
    )
    servers = sidebar_servers(sidebar)
    assert set(servers) == DEMO_SERVERS, servers
    for name, (state, meta) in servers.items():
        assert state == "ready", name
        assert re.search(r"\b[1-9]\d* tools?\b", meta), f"{name}: {meta!r}"

    # Tools: get_weather among them; a search narrows the list.
    names = sidebar.locator(".jp-codemode-sidebar-tool-name")
    assert "get_weather" in names.all_text_contents()
    total = names.count()
    assert total == sum(int(re.findall(r"\d+", meta)[0]) for _, meta in servers.values())
    search = sidebar.locator(".jp-codemode-sidebar-search")
    count = sidebar.locator(".jp-codemode-sidebar-count")
    search.fill("get_weather")  # its name, and the docstrings that mention it
    shown = names.all_text_contents()
    assert "get_weather" in shown and len(shown) < total, shown
    assert count.text_content() == f"{len(shown)} of {total} tools"
    search.fill("no such tool anywhere")
    assert names.count() == 0
    assert count.text_content() == f"0 of {total} tools"
    search.fill("")
    assert names.count() == total

    # "Insert a call" puts a call of get_weather into the active cell.
    select_cell(live_notebook, EMPTY)
    assert cell_source(app, live_notebook, EMPTY) == ""
    tool = sidebar.locator(".jp-codemode-sidebar-tool").filter(
        has=app.locator(".jp-codemode-sidebar-tool-name", has_text=re.compile(r"^get_weather$"))
    )
    tool.locator(".jp-codemode-sidebar-tool-summary").click()
    tool.locator(".jp-codemode-sidebar-insert").click()
    assert "get_weather(" in cell_source(app, live_notebook, EMPTY)
    assert sidebar.locator(".jp-codemode-sidebar-status").text_content() == "Inserted into the active cell."
    editor = live_notebook.locator(".jp-Notebook .jp-Cell").nth(EMPTY).locator(".jp-InputArea-editor")
    assert "get_weather(" in (editor.text_content() or "")

    # A program stores an artifact: the sidebar lists it, the trace's link opens it there.
    cell = run_cell(app, live_notebook, STORE)
    wait_until_ran(app, cell)
    trace = cell.locator(FINISHED_TRACE)
    trace.wait_for(timeout=UI_TIMEOUT)
    assert trace.locator(BADGE).get_attribute("data-status") == "ok"
    artifact_names = sidebar.locator(".jp-codemode-sidebar-artifact-name")
    artifact_names.filter(has_text="oslo reading").first.wait_for(timeout=UI_TIMEOUT)
    trace.locator(".jp-codemode-artifact-link", has_text="oslo reading").click()
    opened = sidebar.locator(".jp-codemode-sidebar-artifact-open")
    opened.wait_for(timeout=UI_TIMEOUT)
    assert opened.locator(".jp-codemode-sidebar-artifact-name").text_content() == "oslo reading"
    preview = opened.locator(".jp-codemode-sidebar-preview")
    preview.filter(has_text="Oslo").wait_for(timeout=UI_TIMEOUT)
    assert "stored by the browser test" in (opened.text_content() or "")

    # History lists the run; opening it shows its record with the same renderer.
    runs = sidebar.locator(".jp-codemode-sidebar-run")
    run = runs.filter(has=app.locator(".jp-codemode-sidebar-run-summary", has_text="w = get_weather(")).first
    run.wait_for(timeout=UI_TIMEOUT)
    assert re.fullmatch(r"codemode #\d+", run.locator(".jp-codemode-sidebar-run-kind").text_content() or "")
    run.click()
    record = sidebar.locator(".jp-codemode-sidebar-run-output .jp-codemode-trace")
    record.wait_for(timeout=UI_TIMEOUT)
    assert rows_text(record) == ['#1 get_weather(city="Oslo", unit="celsius")']

    # "Run Cell as %%codemode" makes a plain cell a program and runs it: its output is a trace.
    select_cell(live_notebook, PLAIN)
    run_command(app, "codemode:run-cell-as-codemode")
    plain = live_notebook.locator(".jp-Notebook .jp-Cell").nth(PLAIN)
    wait_until_ran(app, plain)
    assert cell_source(app, live_notebook, PLAIN) == f"%%codemode\n{PLAIN_CELL}"
    converted = plain.locator(FINISHED_TRACE)
    converted.wait_for(timeout=UI_TIMEOUT)
    assert rows_text(converted) == ['#1 get_weather(city="Lima", unit="celsius")']
    assert converted.locator(BADGE).get_attribute("data-status") == "ok"


# -- 4. light and dark themes -------------------------------------------------------------------

LIGHT, DARK = "JupyterLab Light", "JupyterLab Dark"
# The text colour of an element as painted (its alpha blended over the colour behind it) and that colour
# (the first ancestor's background that is not transparent), each as [r, g, b] from 0 to 255. Computed
# colours read `rgb(r, g, b)` or `rgba(r, g, b, a)`, or, for a color-mix() result, `color(srgb r g b)` or
# `color(srgb r g b / a)` with channels from 0 to 1; anything else fails rather than being misread. Null
# for an element no longer in the page, whose computed colours are empty: a view that re-rendered replaced
# it after the locator found it (read_colours looks again).
COLOURS = """(el) => {
    if (!el.isConnected) {
        return null;
    }
    const rgba = (text) => {
        const scale = text.startsWith('rgb') ? 1 : text.startsWith('color(srgb ') ? 255 : null;
        if (scale === null) {
            throw new Error(`a colour this test cannot read: ${text}`);
        }
        const [r, g, b, a] = (text.match(/[\\d.]+(?:e-?\\d+)?/g) || []).map(Number);
        return [r * scale, g * scale, b * scale, a ?? 1];
    };
    let back = el;
    while (back && rgba(getComputedStyle(back).backgroundColor)[3] === 0) {
        back = back.parentElement;
    }
    const background = back ? rgba(getComputedStyle(back).backgroundColor).slice(0, 3) : [255, 255, 255];
    const [r, g, b, a] = rgba(getComputedStyle(el).color);
    const text = [r, g, b].map((c, i) => a * c + (1 - a) * background[i]);
    return {text, background};
}"""


READ_ATTEMPTS = 20


def read_colours(locator: Locator) -> dict[str, list[float]]:
    """``COLOURS`` of the element ``locator`` finds. A locator finds its element, then reads it: a view that
    re-renders in between (a live trace replaces a row at each update) leaves the element read out of the
    page, so it looks again, as often as the page keeps replacing it, up to ``READ_ATTEMPTS`` times."""
    for _ in range(READ_ATTEMPTS):
        colours: dict[str, list[float]] | None = locator.evaluate(COLOURS)
        if colours is not None:
            return colours
    raise AssertionError(f"{locator} was replaced each of {READ_ATTEMPTS} times its colours were read")


def contrast(first: list[float], second: list[float]) -> float:
    """The WCAG 2 contrast ratio of two sRGB colours (1 to 21; 4.5 is the minimum for body text)."""

    def luminance(rgb: list[float]) -> float:
        linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def set_theme(page: Page, theme: str) -> None:
    """Switch JupyterLab's theme with its command and wait until the page wears it."""
    run_command(page, "apputils:change-theme", {"theme": theme})
    page.wait_for_function(
        "(theme) => document.body.dataset.jpThemeName === theme", arg=theme, timeout=UI_TIMEOUT
    )
    page.locator("#jupyterlab-splash").wait_for(state="detached", timeout=UI_TIMEOUT)  # the change's splash


# Text in the warn colour: a running badge, a call's warning, the trace's notice, a bidi control's marker.
WARN_COLOURED = (
    ".jp-codemode-badge-running, .jp-codemode-warning, .jp-codemode-notice:not([hidden]), .jp-codemode-bidi"
)


def test_light_and_dark_themes_read_well(app: Page, live_notebook: Locator) -> None:
    """The trace and the sidebar follow JupyterLab's theme, and their text keeps a readable contrast."""
    activate(app, live_notebook)
    slow = live_notebook.locator(".jp-Notebook .jp-Cell").nth(SLOW)
    if slow.locator(FINISHED_TRACE).count() == 0:  # run alone, without test 2 before it
        wait_for_kernel_idle(app, live_notebook)
        run_cell(app, live_notebook, SLOW)
        wait_until_ran(app, slow)
    failing = live_notebook.locator(".jp-Notebook .jp-Cell").nth(FAILING)
    if failing.locator(FINISHED_TRACE).count() == 0:
        wait_for_kernel_idle(app, live_notebook)
        select_cell(live_notebook, FAILING)
        run_command(app, "notebook:run-cell")  # run, staying on the last cell (no new cell below)
        wait_until_ran(app, failing)
    failed = failing.locator(FINISHED_TRACE).first
    failed.wait_for(timeout=UI_TIMEOUT)
    assert failed.locator(BADGE).get_attribute("data-status") == "error"
    header = slow.locator(f"{FINISHED_TRACE} .jp-codemode-header").first
    header.wait_for(timeout=UI_TIMEOUT)
    server_name = open_sidebar(app).locator(".jp-codemode-sidebar-server-name").first
    server_name.wait_for(timeout=KERNEL_TIMEOUT)
    live_notebook.locator(".jp-Notebook .jp-Cell").first.scroll_into_view_if_needed()
    trace = slow.locator(FINISHED_TRACE).first
    # What a user reads; each part's text colour against what is behind it.
    parts = {
        "trace title": header.locator(".jp-codemode-title"),
        "trace summary": header.locator(".jp-codemode-summary"),
        "call name": trace.locator(".jp-codemode-call-name").first,
        "call arguments": trace.locator(".jp-codemode-call-args").first,
        "sidebar server": server_name,
        "sidebar server facts": app.locator(f"{SIDEBAR} .jp-codemode-sidebar-server-meta").first,
    }
    warn = live_notebook.locator(WARN_COLOURED).first
    assert warn.count(), "the failing cell's context should show its override as a marker"
    parts.update(
        {
            "ok badge": header.locator(".jp-codemode-badge-ok"),
            "call ok badge": trace.locator(".jp-codemode-call-status .jp-codemode-badge-ok").first,
            "error badge": failed.locator(f"{BADGE}.jp-codemode-badge-failed"),
            "error message": failed.locator(".jp-codemode-error-head"),
            "warn-coloured text": warn,
        }
    )
    seen: dict[str, dict[str, dict[str, list[float]]]] = {}
    try:
        for theme, shot in ((LIGHT, "extension_light.png"), (DARK, "extension_dark.png")):
            before = header.evaluate("(el) => getComputedStyle(el).color")
            set_theme(app, theme)
            if theme == DARK:  # wait until the theme's stylesheet has reached the trace
                app.wait_for_function(
                    "([el, before]) => getComputedStyle(el).color !== before",
                    arg=[header.element_handle(), before],
                    timeout=UI_TIMEOUT,
                )
            seen[theme] = {part: read_colours(locator) for part, locator in parts.items()}
            app.screenshot(path=ARTIFACTS / shot)
    finally:
        set_theme(app, LIGHT)
    ratios = {
        theme: {part: round(contrast(c["text"], c["background"]), 2) for part, c in seen[theme].items()}
        for theme in seen
    }
    print(f"contrast ratios: {json.dumps(ratios)}")
    for part in ("trace title", "sidebar server"):
        assert seen[LIGHT][part]["text"] != seen[DARK][part]["text"], part
        assert seen[LIGHT][part]["background"] != seen[DARK][part]["background"], part
    for theme, by_part in ratios.items():
        for part, ratio in by_part.items():
            # WCAG AA for text, the status colours too (trace.css picks darker shades on the light theme).
            assert ratio >= 4.5, f"{part} in {theme}: contrast {ratio:.2f} ({seen[theme][part]})"


# -- 5. hostile strings -------------------------------------------------------------------------


def hostile_bundle() -> tuple[dict[str, Any], dict[str, Any]]:
    """A stored trace output (data, metadata): every string a tool, server or program controls is hostile."""
    big = HOSTILE + MEGABYTE_LINE
    trace = {
        "status": "error",
        "code": f"x = '{HOSTILE}'\nraise ValueError(x)\n",  # the override raw, not escaped by repr()
        "error": {
            "type": f"ValueError{IMG}",
            "message": big,
            "line": 2,
            "column": 1,
            "source_line": "raise ValueError(x)",
            "traceback": f"Traceback (most recent call last):\n{SCRIPT}\nValueError: {big}",
        },
        "stdout": f"{HOSTILE}\n{big}\n",
        "stderr": SCRIPT,
        "output_truncated": False,
        "pending_calls": [],
        "timeout_s": 30.0,
        "tool_calls": [
            {
                "seq": 1,
                "server": f"srv{IMG}",
                "tool": f"tool{SCRIPT}{RLO}",
                "arguments": {IMG: SCRIPT, "name": f"{RLO}gpj.exe", "line": big},
                "status": "ok",
                "result": {"content": [{"type": "text", "text": big}], "isError": False},
                "error": None,
                "warnings": [IMG],
            },
            {
                "seq": 2,
                "server": SCRIPT,
                "tool": IMG,
                "arguments": {"html": HOSTILE},
                "status": f"failed{IMG}",
                "result": {
                    "content": [
                        {"type": "text", "text": SCRIPT},
                        {"type": "image", "mimeType": "image/svg+xml", "data": "eA=="},
                    ],
                    "structuredContent": {IMG: [SCRIPT, {"k": HOSTILE}]},
                    "isError": True,
                },
                "error": big,
                "warnings": [],
            },
        ],
        "artifacts": [
            {"name": IMG, "type": "text/html", "description": SCRIPT, "size": 10, "sha256": HOSTILE}
        ],
        "value": {"kind": "text", "text": big},
    }
    metadata = {
        "tool_calls": [
            {"id": IMG, "duration_ms": 1.0},
            {"id": SCRIPT, "duration_ms": 2.0, "artifact_id": IMG},
        ],
        "artifacts": [{"id": SCRIPT, "created": IMG}],
        "execution_id": HOSTILE,
        "duration_ms": 3.0,
        "protections": [IMG],
    }
    return {TRACE_MIME: trace, "text/plain": HOSTILE}, {TRACE_MIME: metadata}


# Records every element added to the page that could run code or fetch: scripts, images and frames not
# from JupyterLab itself (its code chunks load as same-origin scripts), objects, and any element with an
# inline event handler attribute.
WATCH_INJECTIONS = """() => {
    const found = [];
    const check = (node) => {
        if (node.nodeType !== Node.ELEMENT_NODE) {
            return;
        }
        for (const el of [node, ...node.querySelectorAll('*')]) {
            const handlers = [...el.attributes].filter((a) => a.name.startsWith('on')).map((a) => a.name);
            const source = el.getAttribute('src') || '';
            const own = source.startsWith('data:') || (el.src || '').startsWith(location.origin + '/');
            if (['OBJECT', 'EMBED'].includes(el.tagName) || handlers.length
                || (['SCRIPT', 'IFRAME', 'IMG'].includes(el.tagName) && !own)) {
                found.push(`${el.tagName} ${handlers.join(' ')} ${el.outerHTML.slice(0, 200)}`);
            }
        }
    };
    new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach(check)))
        .observe(document.documentElement, {childList: true, subtree: true});
    window.__codemodeInjected = found;
}"""


# The page's scripts that JupyterLab did not load from its own server (its inline configuration, say).
FOREIGN_SCRIPTS = """() => [...document.scripts]
    .filter((s) => !s.src.startsWith(location.origin + '/')).map((s) => s.outerHTML.slice(0, 300))"""


def responds_within(page: Page, seconds: float) -> float:
    """How long the page took to answer a trivial evaluate; fails beyond ``seconds``."""
    started = time.monotonic()
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done(1)))")
    took = time.monotonic() - started
    assert took < seconds, f"the page took {took:.1f} s to answer"
    return took


def test_hostile_strings_show_as_text(app: Page, lab: Lab) -> None:
    """Markup, script ends, RTL overrides and 1 MB lines from a record show as text; nothing runs."""
    data, metadata = hostile_bundle()
    output = nbformat.v4.new_output("display_data", data=data, metadata=metadata)
    cell = nbformat.v4.new_code_cell("%%codemode\nraise ValueError(x)", outputs=[output])
    path = write_notebook(lab, "hostile.ipynb", [cell])
    app.evaluate(WATCH_INJECTIONS)
    scripts_before = app.evaluate(FOREIGN_SCRIPTS)

    panel = open_notebook(app, path)
    trace = panel.locator(TRACE)
    trace.wait_for(timeout=UI_TIMEOUT)
    answers = [responds_within(app, 5)]

    # Open each call, the folded blocks, and the whole 1 MB texts.
    for key in trace.locator(ROW).evaluate_all("rows => rows.map((r) => r.dataset.key)"):
        trace.locator(f'{ROW}[data-key="{key}"]').click()
    assert trace.locator(".jp-codemode-call-detail").count() == 2
    folded = trace.locator("details:not([open]) > summary")
    for _ in range(50):  # stdout, stderr, traceback, the whole message, trees: opening one shows more
        if not folded.count():
            break
        folded.first.click()
    assert folded.count() == 0
    shown_all = 0
    while trace.locator(".jp-codemode-show-all").count() and shown_all < 20:
        trace.locator(".jp-codemode-show-all").first.click()
        shown_all += 1
    assert shown_all >= 3, "the 1 MB texts should start cut, with 'show all'"
    answers.append(responds_within(app, 5))
    trace.locator(".jp-codemode-artifact-link").first.click()  # no such artifact: the sidebar says so
    status = app.locator(f"{SIDEBAR} .jp-codemode-sidebar-status", has_text="No artifact")
    status.wait_for(timeout=UI_TIMEOUT)
    assert status.text_content() == f"No artifact {IMG} in this workspace."
    answers.append(responds_within(app, 5))
    print(f"the page answered in {', '.join(f'{t:.2f}' for t in answers)} s")

    # Nothing ran, nothing was injected.
    assert app.evaluate("() => window.__pwned") is None
    assert app.locator('img[src="x"]').count() == 0
    assert app.evaluate(FOREIGN_SCRIPTS) == scripts_before
    assert app.evaluate("() => window.__codemodeInjected") == []
    assert app.evaluate("() => document.querySelectorAll('[onerror]').length") == 0

    # The strings are there, as the characters they are made of.
    rows = rows_text(trace)
    assert rows[0].startswith("#1 tool</script><script>window.__pwned=2</script>⟨U+202E⟩(")
    assert rows[1].startswith('#2 <img src=x onerror="window.__pwned=1">(')
    assert '<img src=x onerror="window.__pwned=1">' in (trace.locator(ROW).first.text_content() or "")
    error_head = trace.locator(".jp-codemode-error-head").text_content() or ""
    assert error_head.startswith('line 2: ValueError<img src=x onerror="window.__pwned=1">: <img src=x')
    assert MEGABYTE_LINE in (trace.locator(".jp-codemode-calls-detail").text_content() or "")
    artifact = trace.locator(".jp-codemode-artifact-link").first.text_content()
    assert artifact == IMG
    text = trace.text_content() or ""
    assert SCRIPT in text and IMG in text and "⟨U+202E⟩" in text
    # The override is a visible marker in the program's code, not a reordering of what follows it.
    assert trace.locator(".jp-codemode-code-context .jp-codemode-bidi").count() == 1
    trace.locator(".jp-codemode-header").scroll_into_view_if_needed()  # for the screenshot
