"""The Code Mode kernel through jupyter_client: tools in the namespace, %%codemode, interrupt, status."""

from __future__ import annotations

import json

from kernel_session import Kernel, run_and_interrupt

from codemode_kernel.views.display import TRACE_MIME


def test_the_kernel_says_what_it_is(kernel: Kernel) -> None:
    kernel.client.kernel_info()
    reply = kernel.client.get_shell_msg(timeout=10)["content"]
    assert reply["implementation"] == "codemode"
    assert reply["language_info"]["name"] == "python"


def test_tools_are_in_the_namespace_and_hidden_from_who(kernel: Kernel) -> None:
    reply = kernel.run('get_weather(city="Oslo", unit="celsius")["temperature"]')
    assert reply.status == "ok", reply.content
    assert reply.data() == ["6.1"]
    assert kernel.run("tools.get_weather.__name__").data() == ["'get_weather'"]
    assert "get_weather" not in kernel.run("%who").stream()
    signature = kernel.run("import inspect; str(inspect.signature(get_weather))").data()[0]
    assert "city" in signature and "unit" in signature


def test_a_name_the_user_bound_is_not_overwritten(kernel: Kernel) -> None:
    # A cell that names a tool waits for the servers (one that names none runs at once, before the tools
    # are placed, and the note would come with whichever cell first finds them ready).
    assert kernel.run("callable(get_weather)").data() == ["True"]
    assert kernel.run("search_files = 'mine'").status == "ok"
    reply = kernel.run("search_files")
    assert reply.data() == ["'mine'"]
    assert "search_files already bound" in reply.stream("stderr")
    assert kernel.run("callable(tools.search_files)").data() == ["True"]
    assert kernel.run("search_files").stream("stderr") == ""  # said once


def test_reset_puts_the_tools_back(kernel: Kernel) -> None:
    assert kernel.run("%reset -f").status == "ok"
    assert kernel.run("callable(get_weather) and 'tools' in dir()").data() == ["True"]


def test_codemode_cell_shows_the_result(kernel: Kernel) -> None:
    reply = kernel.run(
        '%%codemode\nr = get_weather(city="Oslo", unit="celsius")\nprint("got", r.city)\nr.temperature'
    )
    assert reply.status == "ok", reply.content
    assert reply.stream() == "got Oslo\n"
    assert reply.data() == ["codemode: ok, 1 tool call\nvalue: 6.1"]
    trace = reply.data(TRACE_MIME)[0]
    assert trace["status"] == "ok" and trace["value"] == {"kind": "json", "data": 6.1}
    assert "duration_ms" not in json.dumps(trace) and "execution_id" not in trace
    assert trace["tool_calls"][0]["arguments"] == {"city": "Oslo", "unit": "celsius"}


def test_the_record_lists_calls_in_the_order_the_program_made_them(kernel: Kernel) -> None:
    reply = kernel.run(
        "%%codemode\n"
        'get_weather(city="Zurich", unit="celsius")\n'
        'get_weather(city="Athens", unit="celsius")\n'
        'parallel([lambda c=c: get_weather(city=c, unit="celsius") for c in ["Paris", "Berlin", "Cairo"]])'
    )
    assert reply.status == "ok", reply.content
    calls = reply.data(TRACE_MIME)[0]["tool_calls"]
    order = ["Zurich", "Athens", "Paris", "Berlin", "Cairo"]
    assert [c["arguments"]["city"] for c in calls] == order
    assert [c["seq"] for c in calls] == [1, 2, 3, 4, 5]
    html = reply.data("text/html")[0]
    assert sorted(order, key=html.index) == order


def test_a_failed_program_fails_the_cell_at_its_line(kernel: Kernel) -> None:
    reply = kernel.run("%%codemode\nx = 1\ny = x / 0\n")
    assert reply.status == "error"
    assert reply.content["ename"] == "CodeModeCellError"
    assert reply.content["evalue"] == "line 2: ZeroDivisionError: division by zero"
    assert any("y = x / 0" in line for line in reply.content["traceback"])
    assert reply.data()[0].startswith("codemode: error, 0 tool calls\nline 2: ZeroDivisionError")


def test_out_and_in_move_values_between_kernel_and_program(kernel: Kernel) -> None:
    kernel.run("cities = ['Oslo', 'Paris']")
    reply = kernel.run(
        "%%codemode --in cities --out temps --quiet\n"
        '{c: get_weather(city=c, unit="celsius").temperature for c in cities}'
    )
    assert reply.status == "ok", reply.content
    assert reply.data() == []  # --quiet
    assert kernel.run("sorted(temps)").data() == ["['Oslo', 'Paris']"]
    assert kernel.run("%%codemode --in nothing_here\n1").status == "error"


def test_output_streams_while_the_program_runs(kernel: Kernel) -> None:
    reply = kernel.run(
        '%%codemode\nimport time\nprint("first", flush=True)\ntime.sleep(1.5)\nprint("second")'
    )
    assert reply.status == "ok"
    streams = [m for m in reply.messages if m["msg_type"] == "stream"]
    assert streams[0]["content"]["text"].startswith("first")
    done = max(m["at"] for m in reply.messages)
    assert done - streams[0]["at"] > 1.0  # "first" arrived before the program ended


def test_an_interrupt_stops_the_worker_and_the_next_cell_works(kernel: Kernel) -> None:
    code = "%%codemode --timeout 120\nimport time\nprint('busy', flush=True)\ntime.sleep(100)"
    reply, delay = run_and_interrupt(kernel, code, started="busy")  # once the program runs
    assert reply["status"] == "error"
    assert reply["ename"] == "KeyboardInterrupt"
    assert delay < 5 + 2  # the grace period plus 2 s
    assert kernel.run("%%codemode\n1 + 1").data()[0] == "codemode: ok, 0 tool calls\nvalue: 2"


def test_status_and_tools_magics(kernel: Kernel) -> None:
    status = kernel.run("%codemode status").stream()
    assert "none found: the embedded demo servers" in status
    assert "weather [stdio]: ready" in status
    assert "Python functions" in status and "sandbox:" in status
    tools = kernel.run("%codemode tools weather").stream()
    assert "\nget_weather(city: str, unit: Literal" in tools and "Get the current weather" in tools


def test_html_escapes_what_tools_and_programs_return(kernel: Kernel) -> None:
    reply = kernel.run("%%codemode\n'<img src=x onerror=alert(1)>'")
    html = reply.data("text/html")[0]
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_cell_timeout_out_of_range_is_refused_with_the_rule_every_front_door_uses(kernel: Kernel) -> None:
    for given in ("0", "301"):
        reply = kernel.run(f"%%codemode --timeout {given}\nprint('ran')")
        assert reply.status == "error" and reply.content["ename"] == "UsageError", reply.content
        assert f"--timeout: {given} seconds is outside 1 to 300" in reply.content["evalue"]
        assert "pass a number of seconds from 1 to 300" in reply.content["evalue"]
        assert "ran" not in reply.stream()
