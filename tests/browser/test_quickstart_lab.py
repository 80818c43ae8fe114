"""The quickstart as a user runs it: JupyterLab, the Code Mode kernel, Run All Cells, then read the page.

The notebook is served without its outputs (see conftest), so every output found here came from this run.
What the page must show is taken from the stored notebook, which nbval already checks against the kernel:
the same execute results, the same printed lines, and for each ``%%codemode`` cell a rendered trace that
lists the same tool calls as its stored trace record.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from lab_session import ROOT, Lab
from playwright.sync_api import Locator, Page

from codemode_kernel.kernel.app import DISPLAY_NAME
from codemode_kernel.kernel.display import TRACE_MIME
from codemode_kernel.kernel.render import arguments_text

NOTEBOOK = "quickstart.ipynb"
# Bounded but generous waits (ms): two noisy cores; JupyterLab's first load takes 10-20 s, the first cell
# waits for the demo MCP servers, and the whole run is a few seconds once they are up.
LOAD_TIMEOUT = 90_000
KERNEL_TIMEOUT = 90_000
RUN_TIMEOUT = 150_000

# Where a %%codemode execution shows on the page (codemode_kernel/kernel/display.py, live.py, render.py):
# while it runs, the live ipywidgets trace (root ``.codemode-trace``), emptied when the program ends; then
# the static record of the result bundle (``.codemode-result``), which stays. Both list one
# ``.codemode-call`` per tool call, whose ``<summary>`` reads ``tool(arguments) status duration server``.
# A change of that markup belongs in these selectors and helpers, not in the test.
TRACE_SELECTOR = ".codemode-result"
LIVE_TRACE_SELECTOR = ".codemode-trace"
CALL_SELECTOR = ".codemode-call"
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
# Collects, from before Run All, each live trace that reaches the DOM and the most calls it listed. The live
# view may come and go faster than one polling round, so a MutationObserver watches instead.
WATCH_LIVE_TRACES = """([root, call]) => {
    const seen = new Map();
    const outermost = (el) => [...el.querySelectorAll(call)].filter((c) => !c.parentElement.closest(call));
    const look = () => document.querySelectorAll(root).forEach((el) => {
        seen.set(el, Math.max(seen.get(el) ?? 0, outermost(el).length));
    });
    new MutationObserver(look).observe(document.body, {childList: true, subtree: true, characterData: true});
    window.__codemodeLiveTraces = () => [...seen.values()];
}"""


def codemode_traces(scope: Page | Locator) -> Locator:
    """Every finished Code Mode trace (the static record) in an output area under ``scope``."""
    return scope.locator(f".jp-OutputArea-output {TRACE_SELECTOR}")


def trace_tool_calls(trace: Locator) -> list[str]:
    """Each tool call one trace lists, in its order, as its one-line summary.

    Only outermost rows count (a live row is a widget wrapping the static row's HTML). Text content, not
    visible text, is read: the rows are collapsed ``<details>`` and nothing needs expanding.
    """
    rows = trace.locator(f"{CALL_SELECTOR}:not({CALL_SELECTOR} {CALL_SELECTOR})")
    texts: list[str] = rows.evaluate_all(
        "rows => rows.map((r) => (r.querySelector('summary') ?? r).textContent)"
    )
    return [" ".join(text.split()) for text in texts]


def trace_status(trace: Locator) -> str:
    """The status word the trace's header shows (``codemode ✓ ok · 6 tool calls`` gives ``ok``)."""
    match = re.match(r"\s*codemode\W*(\w+)", trace.text_content() or "")
    return match.group(1) if match else ""


def watch_live_traces(page: Page) -> None:
    """Start recording live trace widgets (see ``live_traces_seen``); call before running cells."""
    page.evaluate(WATCH_LIVE_TRACES, [LIVE_TRACE_SELECTOR, CALL_SELECTOR])


def live_traces_seen(page: Page) -> list[int]:
    """For each live trace widget that appeared since ``watch_live_traces``: the most call rows it showed."""
    counts: list[int] = page.evaluate("() => window.__codemodeLiveTraces()")
    return counts


@dataclass
class Expected:
    """What one cell of the stored notebook shows: its execute result, printed lines and traced tool calls."""

    code: bool
    source: str
    result: str | None
    printed: list[str]
    calls: list[str]  # ``#seq tool(arguments)``, in the record's order (the program's)


def expected_cells(path: Path) -> list[Expected]:
    """Read the stored notebook's cells into what the page must show for each of them, in order."""
    cells = []
    for cell in nbformat.read(path, as_version=4).cells:
        result, printed, calls = None, [], []
        for output in cell.get("outputs", []):
            if output.output_type == "execute_result":
                result = output.data["text/plain"]
            elif output.output_type == "stream" and output.name == "stdout":
                printed += output.text.splitlines()
            elif output.output_type == "display_data" and TRACE_MIME in output.data:
                for call in output.data[TRACE_MIME]["tool_calls"]:
                    calls.append(f"#{call['seq']} {call['tool']}({arguments_text(call['arguments'])})")
        # A plain cell's stdout can be the kernel's "waiting for the MCP servers" note: timing, not content.
        printed = printed if cell.source.startswith("%%codemode") else []
        cells.append(Expected(cell.cell_type == "code", cell.source, result, printed, calls))
    return cells


def open_notebook(page: Page, lab: Lab) -> None:
    """Open the notebook in JupyterLab and wait until its cells are on the page."""
    page.goto(f"{lab.url}/lab/tree/{NOTEBOOK}?token={lab.token}", timeout=LOAD_TIMEOUT)
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=LOAD_TIMEOUT)


def ensure_code_mode_kernel(page: Page) -> None:
    """Wait until the notebook's kernel is Code Mode and idle; answer the kernel dialog if JupyterLab asks."""
    panel = page.locator(".jp-NotebookPanel")
    dialog = page.locator(".jp-Dialog")
    kernel_name = panel.locator(".jp-Toolbar-kernelName")
    deadline = time.monotonic() + KERNEL_TIMEOUT / 1000
    while time.monotonic() < deadline:
        if dialog.count() and dialog.locator("select").count():
            dialog.locator("select").select_option(label=DISPLAY_NAME)
            dialog.locator("button.jp-mod-accept").click()
            dialog.wait_for(state="detached", timeout=10_000)
        label = kernel_name.text_content(timeout=1000) if kernel_name.count() else None
        status = page.locator(".jp-Notebook-ExecutionIndicator").first.get_attribute("data-status")
        if label is not None and label.strip() == DISPLAY_NAME and status == "idle":
            return
        page.wait_for_timeout(250)
    pytest.fail(f"the notebook's kernel did not become {DISPLAY_NAME!r} and idle within {KERNEL_TIMEOUT} ms")


def run_all_cells(page: Page) -> None:
    """Run > Run All Cells from the menu bar, as a user would."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^\s*Run\s*$")).click()
    page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first.click()


def wait_until_executed(page: Page, code_cells: int) -> None:
    """Wait until every code cell shows an execution count (none queued ``[*]``, none unrun), kernel idle."""
    page.wait_for_function(
        """(count) => {
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')];
            const indicator = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
            return prompts.length === count
                && prompts.every((p) => /^\\[\\d+\\]:$/.test(p.textContent.trim()))
                && indicator !== null && indicator.dataset.status === 'idle';
        }""",
        arg=code_cells,
        timeout=RUN_TIMEOUT,
    )


@pytest.mark.timeout(420)  # the bounded waits above, plus the server's start and stop
def test_quickstart(page: Page, lab: Lab) -> None:
    expected = expected_cells(ROOT / "notebooks" / NOTEBOOK)
    open_notebook(page, lab)
    ensure_code_mode_kernel(page)
    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    assert cells.count() == len(expected)
    assert codemode_traces(page).count() == 0, "the served copy must start without outputs"

    watch_live_traces(page)
    run_all_cells(page)
    wait_until_executed(page, sum(e.code for e in expected))

    errors = [
        text for text in page.locator(STDERR).all_text_contents() if "Traceback" in text or "Error" in text
    ]
    assert not errors, f"error outputs on the page: {errors}"
    assert page.locator(".jp-OutputArea-output .codemode-error").count() == 0
    for index, want in enumerate(expected):
        cell = cells.nth(index)
        where = f"cell {index} ({want.source.splitlines()[0] if want.source else ''!r})"
        outputs = cell.locator(".jp-OutputArea")
        if want.result is not None:
            result = outputs.locator(".jp-OutputArea-executeResult .jp-OutputArea-output")
            assert [" ".join(t.split()) for t in result.all_text_contents()] == [
                " ".join(want.result.split())
            ], where
        shown = outputs.all_text_contents()
        for line in want.printed:
            assert any(line in text for text in shown), f"{where}: {line!r} not printed"
        traces = codemode_traces(cell)
        if want.calls:
            assert traces.count() == 1, f"{where}: {traces.count()} traces"
            assert trace_status(traces.first) == "ok", where
            rows = trace_tool_calls(traces.first)  # each "#1 tool(arguments) ✓ ok 3 ms server"
            assert [row[: len(call)] for row, call in zip(rows, want.calls, strict=False)] == want.calls, (
                f"{where}: {rows}"
            )
            assert len(rows) == len(want.calls), f"{where}: {rows}"
        else:
            assert traces.count() == 0, where
    assert codemode_traces(page).count() == sum(bool(e.calls) for e in expected)
    # The live view: one per %%codemode cell, each listing the cell's calls before it gave way to the record.
    live = live_traces_seen(page)
    print(f"live traces seen while running: {live}")
    assert live == [len(e.calls) for e in expected if e.calls], "live trace widgets (most calls shown, each)"
