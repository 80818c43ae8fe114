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
from codemode_kernel.views.display import TRACE_MIME
from codemode_kernel.views.render import arguments_text

NOTEBOOK = "quickstart.ipynb"
# Bounded but generous waits (ms): two noisy cores; JupyterLab's first load takes 10-20 s, the first cell
# waits for the demo MCP servers, and the whole run is a few seconds once they are up.
LOAD_TIMEOUT = 90_000
KERNEL_TIMEOUT = 90_000
RUN_TIMEOUT = 150_000

# Where a %%codemode execution shows on the page (the extension's renderer, labextension/src/trace/): while
# it runs, the live trace (the same renderer, its header's badge ``data-status="running"``), emptied when the
# program ends; then the finished record, which stays. Both draw the trace MIME type's output with one
# ``.jp-codemode-call-row`` per visible tool call: ``#seq``, then ``tool(arguments)``, server, status, time.
# A change of that markup belongs in these selectors and helpers, not in the test.
TRACE_OUTPUT = f'.jp-OutputArea-output[data-mime-type="{TRACE_MIME}"]'
TRACE_SELECTOR = f"{TRACE_OUTPUT} .jp-codemode-trace"
BADGE = ".jp-codemode-header .jp-codemode-badge"
CALL_SELECTOR = ".jp-codemode-call-row"
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
# Collects, from before Run All, each live trace that reaches the DOM and the most calls it listed. The live
# view may come and go faster than one polling round, so a MutationObserver watches instead.
WATCH_LIVE_TRACES = """([root, badge, call]) => {
    const seen = new Map();
    const look = () => document.querySelectorAll(root).forEach((el) => {
        const running = el.querySelector(badge)?.dataset.status === 'running';
        if (running || seen.has(el)) {
            seen.set(el, Math.max(seen.get(el) ?? 0, el.querySelectorAll(call).length));
        }
    });
    new MutationObserver(look).observe(document.body, {childList: true, subtree: true, characterData: true});
    window.__codemodeLiveTraces = () => [...seen.values()];
}"""


def codemode_traces(scope: Page | Locator) -> Locator:
    """Every finished Code Mode trace (not a live one) in an output area under ``scope``."""
    return scope.locator(f'{TRACE_SELECTOR}:not(:has({BADGE}[data-status="running"]))')


def trace_tool_calls(trace: Locator) -> list[str]:
    """Each tool call one trace lists, in its order, as ``#seq tool(arguments)``."""
    texts: list[str] = trace.locator(CALL_SELECTOR).evaluate_all(
        """rows => rows.map((r) => r.querySelector('.jp-codemode-call-seq').textContent + ' '
            + r.querySelector('.jp-codemode-call-name').textContent)"""
    )
    return [" ".join(text.split()) for text in texts]


def trace_status(trace: Locator) -> str:
    """The status word of the trace's header badge (``ok``, ``error``, ``running``...)."""
    return trace.locator(BADGE).first.get_attribute("data-status") or ""


def watch_live_traces(page: Page) -> None:
    """Start recording live traces (see ``live_traces_seen``); call before running cells."""
    page.evaluate(WATCH_LIVE_TRACES, [TRACE_SELECTOR, BADGE, CALL_SELECTOR])


def live_traces_seen(page: Page) -> list[int]:
    """For each live trace that appeared since ``watch_live_traces``: the most call rows it showed."""
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
    assert page.locator(f"{TRACE_OUTPUT} .jp-codemode-error").count() == 0
    assert page.locator(".jp-OutputArea-output .codemode-result").count() == 0, "no HTML fallback"
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
            rows = trace_tool_calls(traces.first)  # each "#1 tool(arguments)"
            assert [row[: len(call)] for row, call in zip(rows, want.calls, strict=False)] == want.calls, (
                f"{where}: {rows}"
            )
            assert len(rows) == len(want.calls), f"{where}: {rows}"
        else:
            assert traces.count() == 0, where
    assert codemode_traces(page).count() == sum(bool(e.calls) for e in expected)
    # The live view: one per %%codemode cell, gone when the record came. How many rows it showed depends on
    # how fast the program ran (updates are throttled); test_extension_lab.py watches a slow one.
    live = live_traces_seen(page)
    print(f"live traces seen while running: {live}")
    calls = [len(e.calls) for e in expected if e.calls]
    assert len(live) == len(calls), f"live traces (most calls shown, each): {live}"
    assert all(shown <= total for shown, total in zip(live, calls, strict=True)), live
    assert page.locator(f'{BADGE}[data-status="running"]').count() == 0, "a live trace was left behind"
