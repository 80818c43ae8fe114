"""The sidebar's Executor section as a user meets it in JupyterLab, on the light and the dark theme.

For a kernel that runs its programs on this machine (the local backend) it says ``This machine`` and how
programs run, and a local run's trace names no node. No Ray is started here (the suite must stay quick):
the real kernel's state, as the server extension answers it, gets a Ray cluster's ``executor`` entry in the
second test, to see that a cluster's line, its problem and its node rows fit the narrow panel and read
well; what the view writes for each state is jest's (labextension/src/__tests__/sidebar-views.spec.ts).
Screenshots of the sidebar go to ``test-artifacts/browser/executor_{light,dark}.png`` and
``executor_ray_{light,dark}.png``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab_session import ARTIFACTS, Lab
from playwright.sync_api import Locator, Page, Route
from test_extension_lab import (
    BADGE,
    DARK,
    FINISHED_TRACE,
    KERNEL_TIMEOUT,
    LIGHT,
    SIDEBAR,
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

from codemode_kernel.config.models import ExecutorSettings
from codemode_kernel.kernel.state_file import executor_state

Node = dict[str, Any]

VIEWPORT = {"width": 1280, "height": 900}
PROGRAM = '%%codemode\nget_weather(city="Oslo", unit="celsius").temperature'
EXECUTOR = f"{SIDEBAR} .jp-codemode-sidebar-executor"
SUMMARY = f"{EXECUTOR} .jp-codemode-sidebar-executor-summary"
NODE = f"{EXECUTOR} .jp-codemode-sidebar-node"
STATE_API = "**/codemode/api/kernels/*/state*"


def ray_node(short: str, address: str, alive: bool = True, workers: tuple[int, int] | None = None) -> Node:
    """A node as ``ClusterPool.status()`` lists it: a 56-digit id starting ``short``, 8 CPUs, and
    ``workers`` (prepared, running) there, or none yet (no run used it)."""
    prepared, running = workers or (None, None)
    node = short + "0" * (56 - len(short))
    return {
        "node": node,
        "address": address,
        "alive": alive,
        "resources": {"CPU": 8.0},
        "prepared": prepared,
        "running": running,
    }


# A cluster as the kernel writes it into its state file (from ClusterPool.status()): one node busy, one not
# used yet with an address too long for the panel, one dead, and no answer for a while.
RAY_ADDRESS = "ray://head.cluster.example.org:10001"
LONG_ADDRESS = "ip-10-0-0-12.eu-west-1.compute.internal"
NODE_ADDRESSES = ["10.0.0.11", LONG_ADDRESS, "10.0.0.13"]
CLUSTER_STATUS = {
    "nodes": [
        ray_node("a1b2c3d4", NODE_ADDRESSES[0], workers=(3, 2)),
        ray_node("ffee0011", NODE_ADDRESSES[1]),
        ray_node("0badc0de", NODE_ADDRESSES[2], alive=False),
    ],
    "running": 2,
    "queued": 5,
}
PROBLEM = f"the Ray cluster at {RAY_ADDRESS} has not answered for over 5 s; the nodes shown are from before"
RAY_EXECUTOR = executor_state(ExecutorSettings(backend="ray", address=RAY_ADDRESS), CLUSTER_STATUS)
RAY_EXECUTOR["problem"] = PROBLEM

# What a user sees of an element: its text and title, whether it is drawn within the sidebar's width,
# whether its text is cut (wider than its box) and its height.
SEEN = """(el) => {
    const box = el.getBoundingClientRect();
    const sidebar = el.closest('#codemode-sidebar').getBoundingClientRect();
    return {
        text: el.innerText,
        title: el.title,
        inside: box.left >= sidebar.left && box.right <= sidebar.right + 0.5,
        cut: el.scrollWidth > el.clientWidth + 1,
        height: box.height,
    };
}"""


@pytest.fixture(scope="module")
def notebook(app: Page, lab: Lab) -> Locator:
    """A notebook of one program, open, its Code Mode kernel idle."""
    cells = [nbformat.v4.new_code_cell(PROGRAM)]
    panel = open_notebook(app, write_notebook(lab, "executor.ipynb", cells))
    wait_for_kernel_idle(app, panel)
    return panel


def open_executor_section(page: Page) -> Locator:
    """Open the sidebar, and its Executor section if it is folded; the section, once the kernel said
    where programs run (its state file's ``executor``, written when its tools started)."""
    sidebar = open_sidebar(page)
    title = sidebar.locator(".lm-AccordionPanel-title", has_text="Executor")
    title.wait_for(timeout=UI_TIMEOUT)
    if title.get_attribute("aria-expanded") != "true":
        title.click()
    page.locator(SUMMARY).wait_for(state="visible", timeout=KERNEL_TIMEOUT)
    return page.locator(EXECUTOR)


def colours_by_theme(
    page: Page, parts: dict[str, Locator], shots: dict[str, str], down_to: Locator | None = None
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Each part's text and background colours on the light and the dark theme, with a screenshot of the
    sidebar on each (``shots``: theme -> file name), from its top down to ``down_to`` when given (not the
    empty panel below it); the light theme again afterwards."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    colours = {}
    try:
        for theme in (LIGHT, DARK):
            set_theme(page, theme)
            colours[theme] = {part: read_colours(locator) for part, locator in parts.items()}
            shoot(page, ARTIFACTS / shots[theme], down_to)
    finally:
        set_theme(page, LIGHT)
    return colours


def shoot(page: Page, path: Path, down_to: Locator | None) -> None:
    """A screenshot of the sidebar, or of its part above ``down_to``'s bottom (and a margin)."""
    sidebar = page.locator(SIDEBAR)
    if down_to is None:
        sidebar.screenshot(path=path)
        return
    box, bottom = sidebar.bounding_box(), down_to.bounding_box()
    assert box is not None and bottom is not None, "the sidebar is not shown"
    height = min(box["height"], bottom["y"] + bottom["height"] + 12 - box["y"])
    page.screenshot(path=path, clip={**box, "height": height})


def assert_readable(colours: dict[str, dict[str, dict[str, list[float]]]]) -> None:
    """Every part's text against what is behind it: WCAG AA (4.5:1), on both themes, which differ."""
    ratios = {
        theme: {part: round(contrast(c["text"], c["background"]), 2) for part, c in by_part.items()}
        for theme, by_part in colours.items()
    }
    print(f"contrast ratios: {json.dumps(ratios)}")
    part = next(iter(colours[LIGHT]))
    assert colours[LIGHT][part]["background"] != colours[DARK][part]["background"], "the theme did not change"
    for theme, by_part in ratios.items():
        for part, ratio in by_part.items():
            assert ratio >= 4.5, f"executor {part} in {theme}: contrast {ratio:.2f} ({colours[theme][part]})"


def test_a_local_kernel_runs_its_programs_on_this_machine(app: Page, notebook: Locator) -> None:
    """The section says "This machine" and how programs run, whole and readable on both themes."""
    section = open_executor_section(app)
    parts = {
        "summary": section.locator(".jp-codemode-sidebar-executor-summary"),
        "meta": section.locator(".jp-codemode-sidebar-executor-meta"),
    }
    seen = {part: locator.evaluate(SEEN) for part, locator in parts.items()}
    print(f"executor section: {json.dumps(seen)}")
    assert seen["summary"]["text"] == "This machine"
    assert seen["meta"]["text"] == "Each program runs in a sandboxed worker process here."
    for part, facts in seen.items():
        assert facts["inside"] and not facts["cut"] and facts["height"] > 0, (part, facts)
    assert app.locator(NODE).count() == 0, "a local kernel lists no node"

    # A local run's trace names no node (on a Ray cluster its header says 'on node abcd1234').
    cell = run_cell(app, notebook, 0)
    wait_until_ran(app, cell)
    trace = cell.locator(FINISHED_TRACE).first
    trace.wait_for(timeout=UI_TIMEOUT)
    assert trace.locator(BADGE).get_attribute("data-status") == "ok"
    assert trace.locator(".jp-codemode-nodes").count() == 0
    assert "on node" not in trace.locator(".jp-codemode-header").inner_text()

    shots = {LIGHT: "executor_light.png", DARK: "executor_dark.png"}
    assert_readable(colours_by_theme(app, parts, shots))


@pytest.fixture
def ray_state(app: Page) -> Iterator[None]:
    """The kernel's state, as the server extension answers the sidebar, with ``RAY_EXECUTOR`` as its
    executor and a time of its own, as if the kernel had written it now (the sidebar redraws a state whose
    time changed); the real answer again afterwards."""
    written = datetime.now(UTC).isoformat(timespec="milliseconds")

    def on_ray(route: Route) -> None:
        response = route.fetch()
        state = response.json()
        state.update(executor=RAY_EXECUTOR, updated=written)
        route.fulfill(response=response, body=json.dumps(state))

    app.route(STATE_API, on_ray)
    try:
        yield
    finally:
        app.unroute(STATE_API, on_ray)


@pytest.fixture
def only_the_executor_open(app: Page) -> Iterator[None]:
    """The sidebar's other sections folded, as a user who watches the cluster does: the section gets the
    panel's height (each of five sections open gets a fifth). Opened again afterwards."""
    titles = open_sidebar(app).locator(".lm-AccordionPanel-title").filter(has_not_text="Executor")
    folded = []
    for index in range(titles.count()):
        title = titles.nth(index)
        if title.get_attribute("aria-expanded") == "true":
            title.click()
            folded.append(title)
    try:
        yield
    finally:
        for title in folded:
            title.click()


def test_a_ray_clusters_line_and_nodes_fit_the_sidebar_and_read_well(
    app: Page, notebook: Locator, ray_state: None, only_the_executor_open: None
) -> None:
    """A cluster's line, its problem and a row per node fit the narrow panel and read well on both themes."""
    section = open_executor_section(app)
    rows = app.locator(NODE)
    app.wait_for_function(  # the next poll of the state (every 2 s) brings the cluster
        "(selector) => document.querySelectorAll(selector).length === 3", arg=NODE, timeout=UI_TIMEOUT
    )
    summary = section.locator(".jp-codemode-sidebar-executor-summary")
    assert summary.inner_text() == (
        "Ray cluster at ray://head.cluster.example.org:10001: 2 of 3 nodes alive, 2 running, 5 queued"
    )
    assert section.locator(".jp-codemode-sidebar-executor-problem").inner_text() == PROBLEM
    ids = rows.locator(".jp-codemode-sidebar-node-id")
    assert ids.all_inner_texts() == ["a1b2c3d4", "ffee0011", "0badc0de"]
    assert rows.locator(".jp-codemode-sidebar-node-meta").all_inner_texts() == [
        "8 CPUs · 3 prepared · 2 running",
        "8 CPUs · no runs yet",
        "dead",
    ]
    rows.last.scroll_into_view_if_needed()
    # Each row's id, address and facts within the panel; the long address cut, whole in its title.
    for index in range(3):
        row = rows.nth(index)
        for part in ("node-head", "node-id", "node-meta"):
            facts = row.locator(f".jp-codemode-sidebar-{part}").evaluate(SEEN)
            assert facts["inside"] and not facts["cut"] and facts["height"] > 0, (index, part, facts)
        address = row.locator(".jp-codemode-sidebar-node-address").evaluate(SEEN)
        assert address["inside"] and address["title"] == NODE_ADDRESSES[index], address
    long_address = rows.nth(1).locator(".jp-codemode-sidebar-node-address").evaluate(SEEN)
    assert long_address["cut"], f"the long address fits the panel: make it longer ({long_address})"

    parts = {
        "cluster line": summary,
        "problem": section.locator(".jp-codemode-sidebar-executor-problem"),
        "node id": rows.first.locator(".jp-codemode-sidebar-node-id"),
        "node address": rows.first.locator(".jp-codemode-sidebar-node-address"),
        "node facts": rows.first.locator(".jp-codemode-sidebar-node-meta"),
        "dead node id": rows.last.locator(".jp-codemode-sidebar-node-id"),
        "dead node facts": rows.last.locator(".jp-codemode-sidebar-node-meta"),
    }
    shots = {LIGHT: "executor_ray_light.png", DARK: "executor_ray_dark.png"}
    assert_readable(colours_by_theme(app, parts, shots, down_to=rows.last))
