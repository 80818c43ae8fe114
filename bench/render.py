"""Time to first paint of a 10,000-call trace in JupyterLab: the extension's renderer against the HTML.

One JupyterLab (started as the browser tests start it, on Debian's chromium under Playwright) serves three
saved notebooks with the same record of ``--calls`` tool calls in one output: one keeps the trace MIME type
(``application/vnd.codemode.trace.v1+json``, drawn by the extension), one only the ``text/html`` and
``text/plain`` a frontend without the extension gets, and a baseline carries the same record under a type
nothing draws, shown as one line of ``text/plain``: what opening a notebook that large costs JupyterLab
before any renderer runs. Each round opens a notebook through JupyterLab's own
``docmanager:open`` command and times, in the page, from the command to the frame after the output is in
the DOM (two animation frames), then closes it; rounds alternate (ABC CBA). Prints JSON: medians in
milliseconds, the ratio renderer/HTML and each one's time beyond the baseline. A benchmark, not a test:
timing never fails CI; the exit code is 1 only when
an output never appears or is drawn by the wrong renderer.

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
from codemode_kernel.kernel.display import TRACE_MIME, result_bundle  # noqa: E402

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
    """The two notebooks (trace, html), same record; their paths relative to the server's root."""
    data, metadata = result_bundle(record(calls), code="results = parallel(...)\nlen(results)")
    variants = {
        "trace": data,
        "html": {k: v for k, v in data.items() if k != TRACE_MIME},
        "plain": {"application/x-codemode-bench+json": data[TRACE_MIME], "text/plain": "the same record"},
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
    times: dict[str, list[float]] = {"trace": [], "html": [], "plain": []}
    mimes = {"trace": TRACE_MIME, "html": "text/html", "plain": "text/plain"}
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
                order = ["trace", "html", "plain"]
                for round_ in range(rounds):
                    turn = order if round_ % 2 == 0 else order[::-1]  # ABC CBA
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
        "first_paint_ms": {
            "renderer": round(medians["trace"], 1),
            "html_fallback": round(medians["html"], 1),
            "baseline_open_only": round(medians["plain"], 1),
        },
        "ratio_renderer_to_html": round(medians["trace"] / medians["html"], 3),
        "beyond_baseline_ms": {
            "renderer": round(medians["trace"] - medians["plain"], 1),
            "html_fallback": round(medians["html"] - medians["plain"], 1),
        },
        "samples_ms": {k: [round(v, 1) for v in values] for k, values in times.items()},
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
