"""The Code Mode sidebar's REST API (/codemode/api/) in a real JupyterLab, against a real Code Mode kernel.

The kernel is started through the server's own API, as JupyterLab starts one; cells run through
jupyter_client on the kernel's connection file (what the notebook's websocket carries is the same).
"""

from __future__ import annotations

import json
import queue
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from lab_session import Lab

from tests.kernel.kernel_session import wait_for_printed

TRACE_MIME = "application/vnd.codemode.trace.v1+json"
API = "/codemode/api/kernels"
PROGRAM = (
    'store_artifact({"rows": 3}, name="summary")\n'
    'store_artifact("<script>alert(1)</script><b>bold</b>", name="page", type="text/html")\n'
    'store_artifact(\'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>\', name="drawing", '
    'type="image/svg+xml")\n'
    'get_weather(city="Oslo", unit="celsius")["temperature"]'
)


@dataclass
class Answer:
    status: int
    headers: Any
    body: bytes
    seconds: float

    def json(self) -> Any:
        return json.loads(self.body)


def call(lab: Lab, method: str, path: str, *, token: str | None = "", timeout: float = 30) -> Answer:
    """One request; ``token=None`` sends none, ``""`` the server's own."""
    headers = {} if token is None else {"Authorization": f"token {token or lab.token}"}
    data = b"{}" if method == "POST" else None
    request = urllib.request.Request(f"{lab.url}{path}", method=method, headers=headers, data=data)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
            return Answer(response.status, response.headers, body, time.monotonic() - started)
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers, error.read(), time.monotonic() - started)


def start_kernel(lab: Lab) -> str:
    request = urllib.request.Request(
        f"{lab.url}/api/kernels",
        method="POST",
        headers={"Authorization": f"token {lab.token}", "Content-Type": "application/json"},
        data=json.dumps({"name": "codemode"}).encode(),
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return str(json.loads(response.read())["id"])


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    """The first true value of ``check()``, asked every 0.2 s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def ready_state(lab: Lab, kernel_id: str, *, other_than_pid: int | None = None) -> Callable[[], Any]:
    """A check: the kernel's state once every server is ready and its tools are built (the kernel writes
    the servers' states as they change, and the tools once its executor is prepared, a moment later), and,
    if given, from a new process."""

    def check() -> Any:
        answer = call(lab, "GET", f"{API}/{kernel_id}/state")
        if answer.status != 200:
            return None
        state = answer.json()
        ready = state["servers"] and all(s["state"] == "ready" for s in state["servers"]) and state["tools"]
        return state if ready and state["pid"] != other_than_pid else None

    return check


@pytest.fixture(scope="module")
def kernel_id(lab: Lab) -> Iterator[str]:
    kernel = start_kernel(lab)
    wait_for(ready_state(lab, kernel), "the kernel's servers")
    yield kernel
    call(lab, "DELETE", f"/api/kernels/{kernel}")


@pytest.fixture(scope="module")
def client(lab: Lab, kernel_id: str) -> Iterator[BlockingKernelClient]:
    """A client on the kernel's connection file, in the server's runtime directory."""
    kc = BlockingKernelClient(connection_file=str(lab.root.parent / "runtime" / f"kernel-{kernel_id}.json"))
    kc.load_connection_file()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    yield kc
    kc.stop_channels()


@pytest.fixture(scope="module")
def cell_run(client: BlockingKernelClient) -> dict[str, Any]:
    """Run the cell that stores three artifacts; what it displayed (the record's bundle)."""
    shown: list[dict[str, Any]] = []

    def keep(message: dict[str, Any]) -> None:
        # The record: a display of its own, or the live view's display updated in place to it.
        displayed = message["msg_type"] in ("display_data", "update_display_data")
        if displayed and TRACE_MIME in message["content"]["metadata"]:
            shown.append(message["content"])

    reply = client.execute_interactive(f"%%codemode\n{PROGRAM}", timeout=60, output_hook=keep)
    assert reply["content"]["status"] == "ok", reply["content"]
    (bundle,) = shown
    return bundle


def test_state_lists_the_demo_servers_and_their_tools(lab: Lab, kernel_id: str) -> None:
    answer = call(lab, "GET", f"{API}/{kernel_id}/state")
    assert answer.status == 200 and answer.headers["Content-Type"].startswith("application/json")
    state = answer.json()
    assert state["kernel_id"] == kernel_id and state["workspace"] == str(lab.root)
    assert [(s["name"], s["state"], s["error"]) for s in state["servers"]] == [
        ("weather", "ready", None),
        ("workspace", "ready", None),
        ("sqlite", "ready", None),
    ]
    tools = {t["name"]: t for t in state["tools"]}
    assert {"get_weather", "get_city", "read_file", "query"} <= set(tools)
    assert tools["get_weather"]["call"] == 'get_weather(city=..., unit="celsius")'
    assert tools["get_weather"]["signature"].startswith("def get_weather(city: str, unit: Literal[")


@pytest.mark.parametrize("token", [None, "not-the-token"])
@pytest.mark.parametrize("endpoint", ["state", "artifacts", "artifacts/0123456789ab", "history", "history/x"])
def test_every_endpoint_wants_the_token(lab: Lab, kernel_id: str, endpoint: str, token: str | None) -> None:
    answer = call(lab, "GET", f"{API}/{kernel_id}/{endpoint}", token=token)
    assert answer.status in (401, 403)
    assert b"workspace" not in answer.body and b"get_weather" not in answer.body


@pytest.mark.parametrize(
    "path",
    [
        "not-a-kernel/state",
        "x%2F..%2F..%2Fdecoy/state",  # codemode-x/../../decoy.json: the decoy, if the id reached a path
        "x%2F..%2F..%2Fdecoy/history",
        "..%2F..%2Fetc/artifacts",
        "a-b-c-d-e%00/state",
        "{kernel}/artifacts/..%2F..%2Fsecret",
        "{kernel}/history/..%2Fdecoy",
    ],
)
def test_a_bad_id_is_refused_before_any_file_is_read(lab: Lab, kernel_id: str, path: str) -> None:
    runtime = lab.root.parent / "runtime"
    (runtime / "codemode-x").mkdir(exist_ok=True)
    decoy = {"version": 1, "kernel_id": "x/../../decoy", "workspace": "/", "servers": ["DECOY"], "tools": []}
    (lab.root.parent / "decoy.json").write_text(json.dumps(decoy))
    answer = call(lab, "GET", f"{API}/{path.format(kernel=kernel_id)}")
    assert answer.status == 400, answer.body
    assert b"DECOY" not in answer.body and answer.json()["message"].startswith("not a")


def test_an_unknown_kernel_has_no_state(lab: Lab) -> None:
    for endpoint in ("state", "artifacts", "history"):
        answer = call(lab, "GET", f"{API}/00000000-0000-4000-8000-000000000000/{endpoint}")
        assert answer.status == 404 and "no Code Mode state" in answer.json()["message"]


def test_a_cells_artifacts_and_run_are_listed(lab: Lab, kernel_id: str, cell_run: dict[str, Any]) -> None:
    execution_id = cell_run["metadata"][TRACE_MIME]["execution_id"]
    artifacts = call(lab, "GET", f"{API}/{kernel_id}/artifacts").json()["artifacts"]
    assert [(a["name"], a["type"]) for a in artifacts[:3]] == [
        ("drawing", "image/svg+xml"),
        ("page", "text/html"),
        ("summary", "application/json"),
    ]  # newest first
    assert all(a["execution_id"] == execution_id for a in artifacts[:3])
    assert set(artifacts[0]) == {"id", "name", "type", "description", "size", "created", "execution_id"}

    runs = call(lab, "GET", f"{API}/{kernel_id}/history").json()["runs"]
    newest = runs[0]
    assert newest["id"] == execution_id and newest["kind"] == "codemode" and newest["kernel_id"] == kernel_id
    assert newest["code"].strip() == PROGRAM and newest["status"] == "ok" and newest["tool_calls"] == 1
    assert "bundle" not in newest and newest["number"] >= 1 and newest["replayed"] is False
    record = call(lab, "GET", f"{API}/{kernel_id}/history/{execution_id}").json()
    assert record["bundle"] == {"data": cell_run["data"], "metadata": cell_run["metadata"]}
    assert call(lab, "GET", f"{API}/{kernel_id}/history/no-such-run").status == 404


def _artifact_id(lab: Lab, kernel_id: str, name: str) -> str:
    artifacts = call(lab, "GET", f"{API}/{kernel_id}/artifacts").json()["artifacts"]
    return str(next(a["id"] for a in artifacts if a["name"] == name))


@pytest.mark.parametrize("name", ["page", "drawing"])
def test_html_and_svg_artifacts_are_served_as_inert_bytes(
    lab: Lab, kernel_id: str, cell_run: dict[str, Any], name: str
) -> None:
    answer = call(lab, "GET", f"{API}/{kernel_id}/artifacts/{_artifact_id(lab, kernel_id, name)}")
    assert answer.status == 200
    assert answer.headers["Content-Type"] == "application/octet-stream"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    directives = [d.strip() for d in answer.headers["Content-Security-Policy"].split(";")]
    assert "sandbox" in directives
    extension = {"page": "html", "drawing": "svg"}[name]
    assert answer.headers["Content-Disposition"] == f"attachment; filename*=UTF-8''{name}.{extension}"
    assert b"alert(1)" in answer.body  # the bytes as stored: only how they are sent makes them inert


def test_a_json_artifact_is_shown_inline_or_downloaded(
    lab: Lab, kernel_id: str, cell_run: dict[str, Any]
) -> None:
    path = f"{API}/{kernel_id}/artifacts/{_artifact_id(lab, kernel_id, 'summary')}"
    inline = call(lab, "GET", path)
    assert inline.status == 200 and json.loads(inline.body) == {"rows": 3}
    assert inline.headers["Content-Type"] == "application/json; charset=utf-8"
    assert inline.headers["Content-Disposition"] == "inline; filename*=UTF-8''summary.json"
    assert inline.headers["X-Content-Type-Options"] == "nosniff"
    download = call(lab, "GET", f"{path}?download=1")
    assert download.headers["Content-Disposition"] == "attachment; filename*=UTF-8''summary.json"
    assert call(lab, "GET", f"{API}/{kernel_id}/artifacts/0123456789ab").status == 404


def test_the_api_answers_within_a_second_while_a_cell_runs(
    lab: Lab, kernel_id: str, client: BlockingKernelClient, cell_run: dict[str, Any]
) -> None:
    code = "%%codemode --timeout 60\nimport time\nprint('sleeping', flush=True)\ntime.sleep(6)\n'slept'"
    msg_id = client.execute(code)
    wait_for_printed(client, msg_id, "sleeping")  # the program is in its sleep
    wait_for(
        lambda: call(lab, "GET", f"/api/kernels/{kernel_id}").json()["execution_state"] == "busy",
        "the kernel to be busy",
        timeout=10,
    )
    for endpoint in ("state", "history", "artifacts"):
        answer = call(lab, "GET", f"{API}/{kernel_id}/{endpoint}")
        assert answer.status == 200 and answer.seconds < 1.0, (endpoint, answer.seconds)
    assert call(lab, "GET", f"/api/kernels/{kernel_id}").json()["execution_state"] == "busy"
    with pytest.raises(queue.Empty):
        client.get_shell_msg(timeout=0)  # the cell has not finished: these answers did not wait for it
    reply = client.get_shell_msg(timeout=60)
    assert reply["parent_header"]["msg_id"] == msg_id and reply["content"]["status"] == "ok"


def test_history_is_still_listed_after_a_restart(
    lab: Lab, kernel_id: str, client: BlockingKernelClient, cell_run: dict[str, Any]
) -> None:
    execution_id = cell_run["metadata"][TRACE_MIME]["execution_id"]
    pid = call(lab, "GET", f"{API}/{kernel_id}/state").json()["pid"]
    assert call(lab, "POST", f"/api/kernels/{kernel_id}/restart", timeout=90).status == 200
    runs = call(lab, "GET", f"{API}/{kernel_id}/history").json()["runs"]
    assert execution_id in [run["id"] for run in runs]
    wait_for(ready_state(lab, kernel_id, other_than_pid=pid), "the restarted kernel's state")
    runs = call(lab, "GET", f"{API}/{kernel_id}/history").json()["runs"]
    assert execution_id in [run["id"] for run in runs]
    names = [a["name"] for a in call(lab, "GET", f"{API}/{kernel_id}/artifacts").json()["artifacts"]]
    assert {"summary", "page", "drawing"} <= set(names)


def test_a_kernel_shut_down_keeps_its_history_and_artifacts_listed(lab: Lab) -> None:
    kernel = start_kernel(lab)
    wait_for(ready_state(lab, kernel), "the second kernel's servers")
    state_file = lab.root.parent / "runtime" / f"codemode-{kernel}.json"
    assert state_file.exists()
    assert call(lab, "DELETE", f"/api/kernels/{kernel}").status == 204
    assert not state_file.exists()  # the kernel removed it as it shut down
    assert call(lab, "GET", f"{API}/{kernel}/state").status == 404
    history = call(lab, "GET", f"{API}/{kernel}/history")  # the workspace the server last read
    assert history.status == 200 and isinstance(history.json()["runs"], list)
    assert call(lab, "GET", f"{API}/{kernel}/artifacts").status == 200
