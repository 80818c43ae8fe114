"""What the model reads back: output, value, errors with line numbers, statuses, cut to a budget."""

from __future__ import annotations

from codemode_kernel.agent.feedback import ResultText, execution_text, failure_text, tool_result_text
from codemode_kernel.core.errors import ToolArgumentError
from codemode_kernel.executor import ExecutionResult


def result(**fields: object) -> ExecutionResult:
    base: dict[str, object] = {"status": "ok", "execution_id": "e1", "duration_ms": 230.0, "timeout_s": 30.0}
    return ExecutionResult(**{**base, **fields})  # type: ignore[arg-type]


def test_output_value_and_status_line() -> None:
    text = execution_text(
        result(stdout="Oslo: 4°C\n", value={"kind": "json", "data": {"n": 1}}, tool_calls=[{}, {}])
    )
    assert not text.is_error
    assert text.whole == 'Oslo: 4°C\nvalue: {"n": 1}\n[ok in 0.23 s, 2 tool calls]\n'


def test_an_error_keeps_its_line_and_says_what_to_do() -> None:
    error = {
        "type": "ZeroDivisionError",
        "message": "division by zero",
        "line": 3,
        "source_line": "x = 1 / 0",
        "traceback": 'Traceback (most recent call last):\n  File "<code>", line 3, in <module>\n'
        "    x = 1 / 0\nZeroDivisionError: division by zero",
    }
    text = execution_text(result(status="error", stdout="before\n", error=error))
    assert text.is_error
    assert "line 3" in text.tail and "ZeroDivisionError: division by zero" in text.tail
    assert text.tail.endswith("fix the program and call execute_python again]\n")


def test_a_timeout_says_so_and_keeps_the_output_so_far() -> None:
    text = execution_text(result(status="timeout", stdout="started\n", timeout_s=1.0))
    assert text.is_error
    assert text.whole.startswith("started\n")
    assert "[timeout: stopped after 1 s, 0 tool calls;" in text.tail


def test_artifacts_are_listed() -> None:
    artifacts = [{"id": "a1", "name": "rows", "type": "application/json", "size": 99}]
    text = execution_text(result(artifacts=artifacts))
    assert "[stored artifact a1: rows, application/json, 99 bytes]\n" in text.tail


def test_a_long_body_is_cut_in_the_middle_and_the_tail_is_kept() -> None:
    body = "".join(f"line {i}\n" for i in range(5000))
    view = ResultText(body, "[ok in 1.00 s, 0 tool calls]\n")
    rendered = view.render(2000, saved_as="abc")
    assert len(rendered) <= 2000
    assert rendered.startswith("line 0\n") and rendered.endswith("[ok in 1.00 s, 0 tool calls]\n")
    assert "line 4999\n" in rendered
    assert "characters cut here; the whole is artifact abc: read parts with get_artifact('abc')" in rendered
    assert "artifact" not in view.render(2000).split("cut here")[1].split("]")[0]


def test_a_short_result_is_not_touched() -> None:
    view = ResultText("hello\n", "[ok]\n")
    assert not view.overflows(100) and view.render(100) == "hello\n[ok]\n"


def test_a_huge_traceback_is_cut_too() -> None:
    view = ResultText("x\n", "T" * 10_000 + "\n[error]\n", is_error=True)
    rendered = view.render(1000)
    assert len(rendered) < 1200 and rendered.endswith("[error]\n")


def test_classic_results_structured_text_media_and_errors() -> None:
    structured = {
        "content": [{"type": "text", "text": '{"temperature": 20}'}],
        "structuredContent": {"t": 20},
    }
    assert tool_result_text(structured).whole == '{"t":20}\n'
    mixed = {
        "content": [
            {"type": "text", "text": "a chart"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "inside"}},
        ]
    }
    assert tool_result_text(mixed).whole == "a chart\n[image image/png, about 3 bytes; not shown]\ninside\n"
    failed = tool_result_text({"content": [{"type": "text", "text": "no such city"}], "isError": True})
    assert failed.is_error and "no such city" in failed.whole
    kept = tool_result_text({"content": [{"type": "text", "text": "x"}]}, artifact_id="big1")
    assert kept.tail == "[the whole result is artifact big1]\n"
    refused = failure_text(ToolArgumentError("unit: 'kelvin' is not one of ...", tool="get_weather"))
    assert refused.is_error and refused.whole.startswith("ToolArgumentError: unit:")
