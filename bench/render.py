"""Time to first paint of a 10,000-call trace in JupyterLab: the extension's renderer against the HTML.

One JupyterLab (started as the browser tests start it, on Debian's chromium under Playwright) serves
notebooks with the same record of ``--calls`` tool calls in one output, each carrying the whole record:
``trace``, the bundle the kernel displays (the extension's renderer draws the trace MIME type,
``application/vnd.codemode.trace.v1+json``); ``html_all``, every call drawn as HTML (what the fallback
drew before it was capped at ``HTML_CALLS`` calls); ``html``, the capped fallback a frontend without the
extension draws now; and ``baseline``, one line of ``text/plain``: what opening a notebook that large
costs JupyterLab before any renderer runs. Outside ``trace``, the record rides under a type nothing draws.
Each round opens a notebook through JupyterLab's own ``docmanager:open`` command and times, in the page,
from the command to the frame after the output is in the DOM (two animation frames), then closes it;
rounds alternate (ABCD DCBA). Prints JSON: medians in milliseconds, the ratio of the renderer to every
call as HTML, and each one's time beyond the baseline. A benchmark, not a test: timing never fails CI;
the exit code is 1 only when an output never appears or is drawn by the wrong renderer.

    python bench/render.py [--calls 10000] [--rounds 6] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from lab_session import start_lab, stop_lab  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from codemode_kernel.executor import ExecutionResult  # noqa: E402
from codemode_kernel.views import display  # noqa: E402
from codemode_kernel.views.display import TRACE_MIME, result_bundle  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
TIME_OPEN = """async ([path, mime]) => {
    const app = window.jupyterapp;
    const start = performance.now();
    const widget = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
    const selector = `.jp-OutputArea-output[data-mime-type="${mime}"]`;
    await new Promise((resolve, reject) => {
        const found = () => {
            const node = widget.node.querySelector(selector);
            return node !== null && node.childElementCount > 0;
        };
        if (found()) { resolve(); return; }
        const observer = new MutationObserver(() => { if (found()) { observer.disconnect(); resolve(); } });
        observer.observe(widget.node, {childList: true, subtree: true});
        setTimeout(() => { observer.disconnect(); reject(new Error(`no ${mime} output in 120 s`)); }, 120000);
    });
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const elapsed = performance.now() - start;
    await widget.context.sessionContext.shutdown().catch(() => {});
    widget.dispose();
    return elapsed;
}"""


def record(calls: int) -> ExecutionResult:
    """An execution with ``calls`` small weather calls, as a notebook stores it."""
    tool_calls = [
        {
            "id": f"c{i}",
            "seq": i + 1,
            "server": "weather",
            "tool": "get_weather",
            "arguments": {"city": f"City {i}", "unit": "celsius"},
            "status": "ok",
            "started": 1_700_000_000 + i / 1000,
            "duration_ms": 2.5,
            "result": {
                "content": [{"type": "text", "text": json.dumps({"city": f"City {i}", "temperature": 6.1})}],
                "structuredContent": {"city": f"City {i}", "temperature": 6.1},
                "isError": False,
            },
            "error": None,
            "warnings": [],
            "execution_id": "bench",
        }
        for i in range(calls)
    ]
    return ExecutionResult(
        status="ok", execution_id="bench", value={"kind": "json", "data": calls}, tool_calls=tool_calls
    )


def write_notebooks(root: Path, calls: int) -> dict[str, str]:
    """The notebooks (see the module's docstring); their paths relative to the server's root."""
    code = "results = parallel(...)\nlen(results)"
    data, metadata = result_bundle(record(calls), code=code)
    capped = display.HTML_CALLS
    display.HTML_CALLS = calls
    try:
        every_call_html = result_bundle(record(calls), code=code)[0]["text/html"]
    finally:
        display.HTML_CALLS = capped
    hidden = {"application/x-codemode-bench+json": data[TRACE_MIME], "text/plain": "the same record"}
    variants = {
        "trace": data,
        "html_all": {**hidden, "text/html": every_call_html},
        "html": {**hidden, "text/html": data["text/html"]},
        "baseline": hidden,
    }
    paths = {}
    for name, bundle in variants.items():
        notebook = nbformat.v4.new_notebook()
        kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
        notebook.metadata["kernelspec"] = kernelspec
        cell = nbformat.v4.new_code_cell("%%codemode\nresults = parallel(...)\nlen(results)")
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle, metadata=metadata)]
        notebook.cells = [cell]
        path = root / f"bench_render_{name}.ipynb"
        nbformat.write(notebook, path)
        paths[name] = path.name
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=6, help="openings of each notebook (ABBA order)")
    parser.add_argument("--quick", action="store_true", help="2 rounds, for the test command")
    args = parser.parse_args(argv)
    rounds = 2 if args.quick else args.rounds
    mimes = {"trace": TRACE_MIME, "html_all": "text/html", "html": "text/html", "baseline": "text/plain"}
    times: dict[str, list[float]] = {name: [] for name in mimes}
    with tempfile.TemporaryDirectory() as tmp:
        lab = start_lab(Path(tmp), 120, ["--LabApp.expose_app_in_browser=True"])
        try:
            paths = write_notebooks(lab.root, args.calls)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
                )
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.goto(f"{lab.url}/lab?token={lab.token}", timeout=120_000)
                page.wait_for_function("() => window.jupyterapp !== undefined", timeout=120_000)
                page.evaluate("() => window.jupyterapp.restored")
                order = list(mimes)
                for round_ in range(rounds):
                    turn = order if round_ % 2 == 0 else order[::-1]  # ABCD DCBA
                    for which in turn:
                        ms: float = page.evaluate(TIME_OPEN, [paths[which], mimes[which]])
                        times[which].append(ms)
                browser.close()
        finally:
            stop_lab(lab)
    medians = {name: statistics.median(values) for name, values in times.items()}
    report: dict[str, Any] = {
        "benchmark": "render",
        "calls": args.calls,
        "rounds": rounds,
        "html_calls": display.HTML_CALLS,
        "first_paint_ms": {name: round(median, 1) for name, median in medians.items()},
        "ratio_renderer_to_html_all": round(medians["trace"] / medians["html_all"], 3),
        "beyond_baseline_ms": {
            name: round(median - medians["baseline"], 1)
            for name, median in medians.items()
            if name != "baseline"
        },
        "samples_ms": {k: [round(v, 1) for v in values] for k, values in times.items()},
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
