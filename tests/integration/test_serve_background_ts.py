"""Long programs in ``codemode serve`` through the official TypeScript SDK client, as a Node host runs it.

``tests/node/long_program_client.mjs`` drives a real ``codemode serve`` over stdio (it starts the process,
as a host does) and a second one over Streamable HTTP (two MCP sessions), running every part at once, and
prints what it got as JSON; the tests here read it. The SDK checks every structured answer against the
tool's output schema, so a ``running`` record the schema did not admit would fail the script. The program
and the project are ``test_serve_background``'s, so both SDK clients see the same behaviour.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_executable
from tests.integration.serve_support import served_http, stdio_params
from tests.integration.test_serve_background import TWENTY_SECONDS, _project, _without_timings

pytestmark = pytest.mark.integration

NODE = Path(__file__).resolve().parents[1] / "node"
SCRIPT = NODE / "long_program_client.mjs"
SDK = NODE / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
GRACE_S = 2  # _project's codeMode.grace


def _text(answer: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in answer["content"])


def _record(answer: dict[str, Any]) -> dict[str, Any]:
    assert answer.get("structuredContent") is not None, answer
    record: dict[str, Any] = answer["structuredContent"]
    return record


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The stdio server's project and the HTTP server's, each counting its calls in its own file."""
    return tmp_path_factory.mktemp("ts-stdio"), tmp_path_factory.mktemp("ts-http")


@pytest.fixture(scope="module")
def seen(folders: tuple[Path, Path]) -> dict[str, Any]:
    """What the TypeScript client printed after every part ran (about 25 s: the long program's 20)."""
    node = require_executable("node")
    if not SDK.is_file():
        pytest.fail(f"{SDK.parent} is missing: run scripts/test.sh, which installs tests/node (npm ci)")
    on_stdio, on_http = folders
    # Six places: every part's program gets one at once (at most four run together on either server).
    params = stdio_params(on_stdio, _project(on_stdio, poolSize=6))
    with served_http(on_http, _project(on_http, poolSize=6)) as (_, url):
        stdio = {"command": params.command, "args": params.args, "env": params.env, "cwd": str(params.cwd)}
        spec = {"program": TWENTY_SECONDS, "stdio": stdio, "url": url}
        done = subprocess.run(
            [node, str(SCRIPT), json.dumps(spec)], cwd=NODE, capture_output=True, text=True, timeout=240
        )
    assert done.returncode == 0, f"the TypeScript client exited {done.returncode}:\n{done.stderr[-6000:]}"
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_twenty_second_program_answers_running_then_comes_back_whole(
    seen: dict[str, Any], folders: tuple[Path, Path], transport: str
) -> None:
    run = seen[f"{transport}_background"]
    answers = run["answers"]
    first = _record(answers[0])
    assert first["status"] == "running" and run["first_took_s"] < 10, (first, run["first_took_s"])
    assert first["stdout"].startswith("second 0\nsecond 1\n")
    assert "execution_id" in _text(answers[0]) and "wait_execution" in _text(answers[0])
    running = [_record(a) for a in answers[:-1]]
    assert all(r["execution_id"] == first["execution_id"] for r in running)
    # Each answer holds what came since the one before: together they are the whole output, once.
    streamed = "".join(r["stdout"] for r in running)
    final = _record(answers[-1])
    assert final["status"] == "ok" and final["value"]["text"] == "done"
    assert final["stdout"].startswith(streamed) and final["stdout"].count("second 0\n") == 1
    assert [n["message"] for r in running for n in r["notes"]] in ([], ["halfway"])
    assert any(r["running"]["tool_calls_so_far"] > 0 for r in running)
    # The final record is the one a foreground run of the same program makes.
    assert _without_timings(final) == _without_timings(_record(seen["stdio_foreground"]["final"]))
    calls = (folders[0 if transport == "stdio" else 1] / "calls.txt").read_text().splitlines()
    assert calls.count("tick-19") == (2 if transport == "stdio" else 1)  # once per run, no more


def test_the_note_reaches_the_waiting_client_as_progress_and_a_log_message(seen: dict[str, Any]) -> None:
    progress = seen["stdio_foreground"]["progress"]
    assert any("halfway" in str(message) for message in progress), progress
    logs = seen["stdio_logs"]
    assert any(log["logger"] == "note" and str(log["data"]).startswith("halfway") for log in logs), logs


def test_a_note_wakes_a_waiting_call_at_once(seen: dict[str, Any]) -> None:
    part = seen["note_wakes"]
    first, cancelled = _record(part["first"]), _record(part["cancelled"])
    assert first["status"] == "running" and part["took_s"] < 10, (first, part["took_s"])  # wait_s was 20
    assert [(n["message"], n["data"]) for n in first["notes"]] == [("ready", {"rows": 3})]
    assert cancelled["status"] == "cancelled" and cancelled["notes"][0]["message"] == "ready"


def test_cancel_stops_a_program_within_the_grace_and_keeps_its_calls(
    seen: dict[str, Any], folders: tuple[Path, Path]
) -> None:
    part = seen["cancel"]
    assert _record(part["running"])["status"] == "running", part["running"]
    record = _record(part["cancelled"])
    assert record["status"] == "cancelled" and part["took_s"] < GRACE_S + 3, part["took_s"]
    assert "stopped by the client (cancel_execution)" in record["error"]["message"]
    assert "cleaned" in record["stdout"]
    assert [(c["tool"], c["status"]) for c in record["tool_calls"]] == [
        ("count", "ok"),
        ("slow_count", "cancelled"),
    ]
    assert part["gone"]["isError"] and "no execution" in _text(part["gone"])
    calls = (folders[0] / "calls.txt").read_text().splitlines()
    assert calls.count("made") == 1 and "never" not in calls


def test_another_http_session_cannot_see_wait_on_or_cancel_the_owners_program(seen: dict[str, Any]) -> None:
    part = seen["owners_only"]
    owner_session, other_session = seen["sessions"]
    assert owner_session and other_session and owner_session != other_session  # two MCP sessions
    ident = _record(part["started"])["execution_id"]
    assert ident in _text(part["owner_list"]) and ident not in _text(part["other_list"])
    for refused in ("other_wait", "other_cancel"):
        assert part[refused]["isError"] and "no execution" in _text(part[refused]), part[refused]
    owner_wait = _record(part["owner_wait"])
    assert owner_wait["status"] == "running" and owner_wait["stdout"] == ""  # sent with the first answer
    owner_cancel = _record(part["owner_cancel"])
    assert owner_cancel["status"] == "cancelled" and owner_cancel["stdout"] == "mine\n"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_program_started_with_no_wait_on_a_free_server_is_not_said_to_wait_for_a_place(
    seen: dict[str, Any], transport: str
) -> None:
    """wait_s=0 answers at once. Each program has its place, so the answer says it runs (or, done already,
    gives its record), never that it is queued behind other programs (clients were told that on an idle
    server when the answer was made before the program's task had started)."""
    runs = seen["started_at_once"][transport]
    firsts = [_record(answers[0])["status"] for answers in runs]
    assert set(firsts) <= {"running", "ok"}, [_text(answers[0]) for answers in runs]
    for answers in runs:
        final = _record(answers[-1])
        assert final["status"] == "ok" and final["value"]["text"] == "started"
        assert (
            len(answers) <= 2
        )  # one wait_execution (its 30 s wait is longer than the program) brings the end
