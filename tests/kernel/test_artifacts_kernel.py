"""Artifacts seen from the kernel: the record, the ``artifacts`` object, the browser widget."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kernel_session import WIDGET_MIME, Kernel, Reply

from codemode_kernel.views.display import TRACE_MIME


def _states(reply: Reply) -> dict[str, dict[str, Any]]:
    states: dict[str, dict[str, Any]] = {}
    for message in reply.of_type("comm_open", "comm_msg"):
        data = message["content"].get("data", {})
        if "state" in data:
            states.setdefault(message["content"]["comm_id"], {}).update(data["state"])
    return states


def _send_to_widget(kernel: Kernel, comm_id: str, data: dict[str, Any]) -> None:
    """What JupyterLab sends when a person uses a widget: a comm_msg on the shell channel."""
    client = kernel.client
    message = client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    client.shell_channel.send(message)


def test_artifacts_stored_by_a_program_show_in_the_record_and_load_in_the_kernel(kernel: Kernel) -> None:
    reply = kernel.run(
        "%%codemode\n"
        "temps = {c: get_weather(city=c, unit='celsius').temperature for c in ['Oslo', 'Lima']}\n"
        "store_artifact(temps, name='temps', description='two cities')\n"
        "store_artifact('city,temp\\nOslo,6.1\\nLima,17.9\\n', name='temps.csv', type='text/csv')\n"
        "len(list_artifacts())"
    )
    assert reply.status == "ok", reply.content
    text = reply.data()[-1]  # the record (a start-up status may come first)
    assert "artifact: temps (application/json, 27 bytes, two cities)" in text
    assert "artifact: temps.csv (text/csv, 29 bytes)" in text
    trace = reply.data(TRACE_MIME)[0]
    assert [a["name"] for a in trace["artifacts"]] == ["temps", "temps.csv"]
    assert "id" not in trace["artifacts"][0]  # ids change from run to run: metadata only
    assert kernel.run("artifacts['temps']").data() == ["{'Oslo': 6.1, 'Lima': 17.9}"]
    frame = kernel.run("df = artifacts.load('temps.csv'); type(df).__name__, list(df.columns), len(df)")
    assert frame.data() == ["('DataFrame', ['city', 'temp'], 2)"]
    listing = kernel.run("print(repr(artifacts))").stream()
    assert "temps.csv  text/csv  29 B" in listing and "temps  application/json  27 B  two cities" in listing


def test_the_browser_previews_and_loads_into_the_namespace(kernel: Kernel) -> None:
    kernel.run("%%codemode\nstore_artifact([{'city': 'Oslo', 'temp': 6.1}], name='browse me')")
    reply = kernel.run("%codemode artifacts")
    assert reply.status == "ok", reply.content
    bundle = next(m["content"]["data"] for m in reply.of_type("display_data"))
    assert WIDGET_MIME in bundle and "browse me" in bundle["text/plain"]
    assert "<td>browse me</td>" in bundle["text/html"]
    states = _states(reply)
    root = states[bundle[WIDGET_MIME]["model_id"]]
    assert "codemode-artifacts" in root["_dom_classes"]
    listbox = next(c for c, s in states.items() if s.get("_model_name") == "SelectModel")
    assert states[listbox]["_options_labels"][0].startswith("browse me · application/json")
    preview = next(s for s in states.values() if "codemode-artifact-preview" in s.get("_dom_classes", ()))
    assert "<th>city</th>" in preview["value"] and "<td>Oslo</td>" in preview["value"]  # a table of records
    name_box = next(s for s in states.values() if s.get("_model_name") == "TextModel")
    assert name_box["value"] == "browse_me"
    # A person clicks "Load into namespace": the value appears under the suggested name.
    button = next(c for c, s in states.items() if s.get("description") == "Load into namespace")
    _send_to_widget(kernel, button, {"method": "custom", "content": {"event": "click"}})
    deadline = time.monotonic() + 10
    while kernel.run("'browse_me' in dir()").data() != ["True"]:
        assert time.monotonic() < deadline, "the click did not load the artifact"
        time.sleep(0.2)
    assert kernel.run("browse_me").data() == ["[{'city': 'Oslo', 'temp': 6.1}]"]


def test_a_large_tool_result_is_stored_whole_and_shown_as_a_preview(kernel: Kernel, tmp_path: Path) -> None:
    kernel.run("from pathlib import Path; Path('big.txt').write_text('x' * 200_000)")
    reply = kernel.run("%%codemode\nlen(read_file(path='big.txt'))")
    assert reply.status == "ok", reply.content
    assert reply.data()[0].startswith("codemode: ok, 1 tool call\nvalue: 200000")  # the program got it all
    html = reply.data("text/html")[0]
    assert "the whole result is stored as an artifact" in html and len(html) < 20_000
    assert "x" * 500 in html and "empty result" not in html  # the record shows the preview
    call = reply.data(TRACE_MIME)[0]["tool_calls"][0]
    assert "artifact_id" not in call  # in the metadata: ids change from run to run
    whole = kernel.run(
        "a = artifacts.list()[0]; a['type'], artifacts[a['id']]['content'][0]['text'] == 'x' * 200_000"
    )
    assert whole.data() == ["('application/json', True)"]  # the whole CallToolResult, as the server sent it


def test_a_preview_never_renders_markup_a_program_stored(kernel: Kernel) -> None:
    kernel.run("%%codemode\nstore_artifact('<img src=x onerror=alert(1)>', name='evil', type='text/html')")
    html = kernel.run(
        "from codemode_kernel.views.artifacts import preview_html\n"
        "a = artifacts.store.get('evil'); preview_html(a, lambda: artifacts.store.read_bytes(a.id))"
    ).data()[0]
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
