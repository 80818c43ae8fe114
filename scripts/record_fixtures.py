"""The JupyterLab extension's jest fixtures, built from real records: each a run as the kernel records it.

``scripts/record_types.py`` writes each as ``labextension/src/__tests__/fixtures/<name>.json``: the trace
a cell displays (``views/display.py``'s ``result_bundle``, its data and metadata), made from an
``ExecutionResult`` whose calls are ``CallRecord``s, approvals ``Decision``s, artifacts ``Artifact``s and
tool results the MCP SDK's own types, so a fixture can never hold a field the kernel no longer writes.
The runs are those of the example notebooks and the demo servers, with their ids and timings fixed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from mcp.types import CallToolResult, ContentBlock, ImageContent, TextContent

from codemode_kernel.approvals import Decision
from codemode_kernel.artifacts import Artifact
from codemode_kernel.calllog import CallProgress, CallRecord, CallStatus
from codemode_kernel.core.records import ErrorRecord, JsonEnvelope, NodeAttempt, TableEnvelope, TextEnvelope
from codemode_kernel.executor import ExecutionResult

__all__ = ["FIXTURES", "Fixture"]

PROTECTIONS = [
    "max_processes:cgroup",
    "pid_namespace",
    "network_namespace",
    "mount_namespace:hidden_paths",
    "env_scrubbed",
    "fds_closed",
    "rlimits",
    "no_new_privs",
    "landlock:fs_write",
    "landlock:net",
    "landlock:scoped",
    "seccomp",
    "capabilities_dropped",
]
"""Every layer a worker entered on the machine the runs were recorded on."""


@dataclass(frozen=True)
class Fixture:
    """One recorded run: where it comes from, its result, and what the cell held."""

    source: str
    result: ExecutionResult
    code: str | None = None
    replayed: bool = False
    running: tuple[tuple[tuple[CallRecord, ...], float], ...] = ()
    """The live updates the cell showed before the end: the calls so far and the time elapsed (ms)."""


def _text(text: str) -> TextContent:
    return TextContent(type="text", text=text)


def _json_text(data: Any) -> TextContent:
    """A text block holding JSON as the demo servers write it (2-space indents)."""
    return _text(json.dumps(data, indent=2, ensure_ascii=False))


def _image(data: str, mime_type: str) -> ImageContent:
    return ImageContent(type="image", data=data, mime_type=mime_type)


def _result(
    content: list[ContentBlock], *, structured: dict[str, Any] | None = None, is_error: bool = False
) -> dict[str, Any]:
    """A tool result as the call log keeps it: the SDK's wire JSON (hub/connection.py drops resultType)."""
    result = CallToolResult(content=content, structured_content=structured, is_error=is_error)
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    dumped.pop("resultType", None)
    return dumped


def _structured(data: dict[str, Any]) -> dict[str, Any]:
    """A result with structured content, its text block the same JSON as the demo servers write it."""
    return _result([_json_text(data)], structured=data)


def _call(
    execution_id: str,
    seq: int,
    server: str,
    tool: str,
    arguments: dict[str, Any],
    result: dict[str, Any] | None,
    *,
    times: tuple[str, float, float | None],
    status: CallStatus = "ok",
    error: str | None = None,
    warnings: tuple[str, ...] = (),
    artifact_id: str | None = None,
    approval: Any = None,
    progress: CallProgress | None = None,
    asked: tuple[dict[str, Any], ...] = (),
) -> CallRecord:
    """A finished call of a run: ``times`` is its id, when it started and how long it took."""
    call_id, started, duration_ms = times
    return CallRecord(
        id=call_id,
        server=server,
        tool=tool,
        arguments=arguments,
        started=started,
        status=status,
        duration_ms=duration_ms,
        result=result,
        error=error,
        warnings=warnings,
        artifact_id=artifact_id,
        execution_id=execution_id,
        seq=seq,
        approval=approval,
        progress=progress,
        asked=asked,
    )


def _approval() -> Fixture:
    execution_id = "a5d6611b5f8f"
    calls = [
        _call(
            execution_id,
            1,
            "memory",
            "create_entities",
            {
                "entities": [
                    {"name": "Oslo", "entityType": "city", "observations": []},
                    {"name": "Lima", "entityType": "city", "observations": []},
                ]
            },
            _result(
                [
                    _json_text(
                        [
                            {"name": "Oslo", "entityType": "city", "observations": []},
                            {"name": "Lima", "entityType": "city", "observations": []},
                        ]
                    )
                ],
                structured={
                    "entities": [
                        {"name": "Oslo", "entityType": "city", "observations": []},
                        {"name": "Lima", "entityType": "city", "observations": []},
                    ]
                },
            ),
            times=("5488ee0ec49f", 1795534187.222565, 13.178586959838867),
        ),
        _call(
            execution_id,
            2,
            "memory",
            "delete_entities",
            {"entityNames": ["Oslo"]},
            _result(
                [_text("Entities deleted successfully")],
                structured={"success": True, "message": "Entities deleted successfully"},
            ),
            times=("00ee21f8a7be", 1795534187.236577, 21.671295166015625),
            approval=Decision(allowed=True, by="the user", scope="once").to_json(
                "its server marks it destructive (destructiveHint)"
            ),
        ),
        _call(
            execution_id,
            3,
            "memory",
            "delete_entities",
            {"entityNames": ["Lima"]},
            None,
            times=("2cc35ce11248", 1795534187.2596571, 3.5359859466552734),
            status="denied",
            error="memory/delete_entities was denied by the user; nothing was sent",
            approval=Decision(allowed=False, by="the user", scope="once").to_json(
                "its server marks it destructive (destructiveHint)"
            ),
        ),
        _call(
            execution_id,
            4,
            "memory",
            "read_graph",
            {},
            _structured(
                {"entities": [{"name": "Lima", "entityType": "city", "observations": []}], "relations": []}
            ),
            times=("4fff7205261b", 1795534187.2641907, 2.7751922607421875),
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=JsonEnvelope(kind="json", data=["Lima"]),
        error=None,
        stdout="memory/delete_entities was denied by the user; nothing was sent\n",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=71.079,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    return Fixture(
        ("a %%codemode cell on npm server-memory, its two delete_entities calls answered y, then n"),
        result,
        code=(
            'create_entities(entities=[{"name": n, "entityType": "city", '
            '"observations": []} for n in ("Oslo", "Lima")])\n'
            'delete_entities(entityNames=["Oslo"])\n'
            "try:\n"
            '    delete_entities(entityNames=["Lima"])\n'
            "except ToolError as e:\n"
            "    print(e)\n"
            'sorted(e["name"] for e in read_graph().entities)\n'
        ),
    )


def _artifact_result() -> Fixture:
    execution_id = "707680f695f6"
    calls = [
        _call(
            execution_id,
            1,
            "sqlite",
            "query",
            {
                "limit": 1000,
                "sql": (
                    "\n"
                    "    SELECT r.*, s.name AS station, s.elevation_m, c.name AS "
                    "city, c.country\n"
                    "    FROM readings r JOIN stations s ON s.id = r.station_id "
                    "JOIN cities c ON c.id = s.city_id\n"
                ),
            },
            {
                "bytes": 111565,
                "preview": (
                    "{\n"
                    '  "columns": [\n'
                    '    "id",\n'
                    '    "station_id",\n'
                    '    "day",\n'
                    '    "temperature_c",\n'
                    '    "humidity_pct",\n'
                    '    "precipitation_mm",\n'
                    '    "station",\n'
                    '    "elevation_m",\n'
                    '    "city",\n'
                    '    "country"\n'
                    "  ],\n"
                    '  "rows": [\n'
                    "    [\n"
                    "      1,\n"
                    "      1,\n"
                    '      "2026-01-01",\n'
                    "      0.1,\n"
                    "      27,\n"
                    "      0.0,\n"
                    '      "New York Hills",\n'
                    "      29,\n"
                    '      "New York",\n'
                    '      "United States"\n'
                    "    ],\n"
                    "    [\n"
                    "      2,\n"
                    "      1,\n"
                    '      "2026-01-02",\n'
                    "      1.4,\n"
                    "      76,\n"
                    "      3.6,\n"
                    '      "New York Hills",\n'
                    "      29,\n"
                    '      "New York",\n'
                    '      "United States"\n'
                    "    ],\n"
                    "    [\n"
                    "      3,\n"
                    "      1,\n"
                    '      "2026-01-03",\n'
                    "      4.1,\n"
                    "      56,\n"
                    "      0.0,\n"
                    '      "New Y'
                ),
            },
            times=("75ee12761546", 1795491821.2354808, 50.15087127685547),
            artifact_id="6dd100dc13b5",
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=JsonEnvelope(data=["Sydney", "Australia"], kind="json"),
        error=None,
        stdout="420 rows, 10 columns\n",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        artifacts=[
            Artifact(
                id="6dd100dc13b5",
                name="query result",
                type="application/json",
                description="the whole result of a sqlite/query call",
                size=111565,
                created="2026-11-24T03:43:41.286+00:00",
                sha256="17bf410d7128ae4fa61b81e2bc5ad51dddedc719744505242212317952caefbe",
                execution_id=execution_id,
            ).to_dict()
        ],
        duration_ms=60.008,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    return Fixture("notebooks/artifacts_and_history.ipynb, cell 9; trimmed", result)


def _asked() -> Fixture:
    execution_id = "ff4a12454059"
    calls = [
        _call(
            execution_id,
            1,
            "asking",
            "book_table",
            {"restaurant": "Chez Nous"},
            _structured(
                {
                    "action": "accept",
                    "content": {"date": "2026-12-24", "guests": 4, "vegetarian": False, "seating": "terrace"},
                }
            ),
            times=("1dcda2718449", 1795805596.885014, 16.687870025634766),
            asked=(
                {
                    "kind": "elicitation",
                    "question": {
                        "server": "asking",
                        "mode": "form",
                        "message": "Booking at Chez Nous: when, and for how many?",
                        "fields": [
                            {"name": "date", "type": "string", "required": True, "default": "2026-12-24"},
                            {"name": "guests", "type": "integer", "required": True, "default": 2},
                            {"name": "vegetarian", "type": "boolean", "required": False, "default": False},
                            {
                                "name": "seating",
                                "type": "one of inside, terrace",
                                "required": False,
                                "default": "inside",
                            },
                        ],
                    },
                    "answer": {
                        "action": "accept",
                        "by": "the user",
                        "content": {
                            "date": "2026-12-24",
                            "guests": 4,
                            "vegetarian": False,
                            "seating": "terrace",
                        },
                    },
                },
            ),
        ),
        _call(
            execution_id,
            2,
            "asking",
            "summarize",
            {"text": "a long story"},
            _structured({"text": "Two words.", "model": "scripted"}),
            times=("544979bb524e", 1795805596.9033256, 397.9475498199463),
            asked=(
                {
                    "kind": "sampling",
                    "request": {
                        "messages": 1,
                        "last": "Summarize: a long story",
                        "maxTokens": 100,
                        "system": "Answer in one line.",
                    },
                    "allowed": {"by": "the user", "scope": "once"},
                    "answer": {"model": "scripted", "chars": 10},
                },
            ),
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=JsonEnvelope(kind="json", data=[4, "Two words."]),
        error=None,
        stdout="",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=517.04,
        timeout_s=30.0,
        protections=[*PROTECTIONS[:4], "mount_namespace:read_only_paths", *PROTECTIONS[4:]],
    )
    return Fixture(
        (
            "a %%codemode cell on tests/servers/asking_server.py: "
            "book_table's form answered Enter, 4, Enter, terrace; "
            "summarize's sampling allowed with y"
        ),
        result,
        code=(
            'booked = book_table(restaurant="Chez Nous")\n'
            'summary = summarize(text="a long story")\n'
            '[booked["content"]["guests"], summary["text"]]\n'
        ),
    )


def _error() -> Fixture:
    execution_id = "e1fb1e2408ec"
    calls = [
        _call(
            execution_id,
            1,
            "weather",
            "get_weather",
            {"city": "Oslo", "unit": "celsius"},
            _structured({"city": "Oslo", "temperature": 6.1, "unit": "celsius", "conditions": "rain"}),
            times=("152f1d3c69d9", 1795491829.3179224, 5.353689193725586),
        ),
        _call(
            execution_id,
            2,
            "weather",
            "get_weather",
            {"city": "Lima", "unit": "celsius"},
            _structured({"city": "Lima", "temperature": 17.9, "unit": "celsius", "conditions": "windy"}),
            times=("eddfadc9d14b", 1795491829.3247724, 1.7209053039550781),
        ),
    ]
    result = ExecutionResult(
        status="error",
        execution_id=execution_id,
        value=None,
        error=ErrorRecord(
            column=1,
            line=3,
            message="float division by zero",
            source_line="average / (len(readings) - 2)",
            traceback=(
                "Traceback (most recent call last):\n"
                '  File "<code>", line 3, in <module>\n'
                "    average / (len(readings) - 2)\n"
                "ZeroDivisionError: float division by zero"
            ),
            type="ZeroDivisionError",
        ),
        stdout="",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=13.367,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    return Fixture(
        ("notebooks/errors_and_timeouts.ipynb, cell 4; code is the cell's source without its magic line"),
        result,
        code=(
            'readings = [get_weather(city=c, unit="celsius").temperature '
            'for c in ["Oslo", "Lima"]]\n'
            "average = sum(readings) / len(readings)\n"
            "average / (len(readings) - 2)"
        ),
    )


def _invalid_arguments() -> Fixture:
    execution_id = "e5e3c9a7d093"
    calls = [
        _call(
            execution_id,
            1,
            "weather",
            "get_weather",
            {"city": "Oslo", "unit": "kelvin"},
            None,
            times=("b2e2e500ca40", 1795491829.358105, 0.24819374084472656),
            status="invalid_arguments",
            error=("get_weather(): argument unit must be one of 'celsius', 'fahrenheit'; got 'kelvin'"),
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=JsonEnvelope(data=None, kind="json"),
        error=None,
        stdout=("get_weather(): argument unit must be one of 'celsius', 'fahrenheit'; got 'kelvin'\n"),
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=12.645,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    return Fixture("notebooks/errors_and_timeouts.ipynb, cell 6", result)


def _parallel() -> Fixture:
    execution_id = "038f680f68bf"
    calls = [
        _call(
            execution_id,
            1,
            "weather",
            "get_weather",
            {"city": "Oslo", "unit": "celsius"},
            _structured({"city": "Oslo", "temperature": 6.1, "unit": "celsius", "conditions": "rain"}),
            times=("0185e73c72a1", 1795491829.4382117, 6.7577362060546875),
        ),
        _call(
            execution_id,
            2,
            "workspace",
            "read_file",
            {"path": "missing.txt"},
            _result([_text("Error executing tool read_file: No such file: 'missing.txt'")], is_error=True),
            times=("6e43d9b157c2", 1795491829.4404778, 5.307435989379883),
            status="tool_error",
        ),
        _call(
            execution_id,
            3,
            "weather",
            "get_weather",
            {"city": "Lima", "unit": "celsius"},
            _structured({"city": "Lima", "temperature": 17.9, "unit": "celsius", "conditions": "windy"}),
            times=("936c6d8dfdd0", 1795491829.4406505, 4.651784896850586),
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=JsonEnvelope(data=[6.1, "ToolError", 17.9], kind="json"),
        error=None,
        stdout="",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=32.087,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    return Fixture("notebooks/errors_and_timeouts.ipynb, cell 10", result)


def _progress() -> Fixture:
    execution_id = "78628dff8bae"
    calls = [
        _call(
            execution_id,
            1,
            "weather",
            "get_forecast",
            {"city": "Oslo", "days": 3, "delay_seconds": 0.5},
            _structured(
                {
                    "city": "Oslo",
                    "unit": "celsius",
                    "days": [
                        {"day": 1, "temperature": 20.5, "conditions": "cloudy"},
                        {"day": 2, "temperature": 5.8, "conditions": "sunny"},
                        {"day": 3, "temperature": 4.9, "conditions": "cloudy"},
                    ],
                }
            ),
            times=("1978a1a8c196", 1795545321.110646, 1509.720802307129),
            progress=CallProgress(count=3, progress=3.0, total=3.0, message="Oslo: day 3 of 3"),
        ),
        _call(
            execution_id,
            2,
            "weather",
            "get_weather",
            {"city": "Oslo", "unit": "celsius"},
            _structured({"city": "Oslo", "temperature": 6.1, "unit": "celsius", "conditions": "rain"}),
            times=("9bde1f91e250", 1795545322.625648, 3.2989978790283203),
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=JsonEnvelope(kind="json", data=[20.5, 5.8, 4.9]),
        error=None,
        stdout="",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=1648.444,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    # The live updates while get_forecast ran: one per day it reported, at the times the cell showed them.
    forecast = replace(calls[0], status="running", duration_ms=None, result=None)
    running = []
    for day, elapsed_ms in ((1, 636.3), (2, 1142.4), (3, 1645.6)):
        message = f"Oslo: day {day} of 3"
        progress = CallProgress(count=day, progress=float(day), total=3.0, message=message)
        running.append(((replace(forecast, progress=progress),), elapsed_ms))
    return Fixture(
        (
            "a %%codemode cell calling the demo weather's "
            'get_forecast(city="Oslo", days=3, delay_seconds=0.5), then '
            "get_weather, with the extension's renderer announced: the "
            "live updates that showed progress, then the finished record"
        ),
        result,
        code=(
            'forecast = get_forecast(city="Oslo", days=3, '
            "delay_seconds=0.5)\n"
            'today = get_weather(city="Oslo", unit="celsius")\n'
            "[d.temperature for d in forecast.days]\n"
        ),
        running=tuple(running),
    )


def _quickstart() -> Fixture:
    execution_id = "718e58157da7"
    calls = [
        _call(
            execution_id,
            1,
            "workspace",
            "read_file",
            {"path": "cities.txt"},
            _result([_text("New York\nLos Angeles\nChicago\nMiami\nSeattle\n")]),
            times=("35080c3caed1", 1795491839.2683675, 4.038333892822266),
        ),
        _call(
            execution_id,
            2,
            "weather",
            "get_weather",
            {"city": "New York", "unit": "celsius"},
            _structured(
                {"city": "New York", "temperature": 2.4, "unit": "celsius", "conditions": "thunderstorms"}
            ),
            times=("a262b44eb117", 1795491839.2731628, 2.206563949584961),
        ),
        _call(
            execution_id,
            3,
            "weather",
            "get_weather",
            {"city": "Los Angeles", "unit": "celsius"},
            _structured(
                {"city": "Los Angeles", "temperature": 3.7, "unit": "celsius", "conditions": "cloudy"}
            ),
            times=("58d5eb1fd07e", 1795491839.276269, 2.427339553833008),
        ),
        _call(
            execution_id,
            4,
            "weather",
            "get_weather",
            {"city": "Chicago", "unit": "celsius"},
            _structured({"city": "Chicago", "temperature": 4.9, "unit": "celsius", "conditions": "rain"}),
            times=("417a01886874", 1795491839.2790647, 1.1680126190185547),
        ),
        _call(
            execution_id,
            5,
            "weather",
            "get_weather",
            {"city": "Miami", "unit": "celsius"},
            _structured({"city": "Miami", "temperature": 24.4, "unit": "celsius", "conditions": "cloudy"}),
            times=("034b2ac4bea7", 1795491839.2811441, 1.9731521606445312),
        ),
        _call(
            execution_id,
            6,
            "weather",
            "get_weather",
            {"city": "Seattle", "unit": "celsius"},
            _structured(
                {"city": "Seattle", "temperature": 2.0, "unit": "celsius", "conditions": "partly cloudy"}
            ),
            times=("4667dc6aaba7", 1795491839.283764, 1.9574165344238281),
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=JsonEnvelope(data=None, kind="json"),
        error=None,
        stdout=("New York 2.4\nLos Angeles 3.7\nChicago 4.9\nMiami 24.4\nSeattle 2.0\n"),
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=1489.671,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    return Fixture("notebooks/quickstart.ipynb, cell 7", result)


def _table_artifacts() -> Fixture:
    execution_id = "387742c442e8"
    calls = [
        _call(
            execution_id,
            1,
            "sqlite",
            "query",
            {
                "sql": (
                    "\n"
                    "    SELECT c.name AS city, ROUND(AVG(r.temperature_c), 1) "
                    "AS mean_c, SUM(r.precipitation_mm) AS rain_mm\n"
                    "    FROM readings r JOIN stations s ON s.id = r.station_id "
                    "JOIN cities c ON c.id = s.city_id\n"
                    "    GROUP BY c.name ORDER BY mean_c DESC\n"
                )
            },
            _structured(
                {
                    "columns": ["city", "mean_c", "rain_mm"],
                    "rows": [
                        ["Sydney", 22.1, 111.5],
                        ["Buenos Aires", 21.9, 119.3],
                        ["Mumbai", 16.1, 102.7],
                        ["Mexico City", 15.5, 91.3],
                        ["Miami", 11.5, 106.80000000000001],
                        ["Cairo", 8.9, 121.89999999999999],
                        ["Los Angeles", 6.9, 143.7],
                        ["Tokyo", 6.4, 99.6],
                        ["New York", 3.6, 94.4],
                        ["Chicago", 3.3, 69.2],
                        ["Toronto", 1.6, 147.7],
                        ["Seattle", -0.7, 69.60000000000001],
                        ["Paris", -0.8, 87.5],
                        ["London", -1.9, 60.1],
                        ["Berlin", -3.2, 128.6],
                    ],
                    "row_count": 15,
                    "truncated": False,
                }
            ),
            times=("a53de1d59a89", 1795491820.8676426, 8.302688598632812),
        ),
        _call(
            execution_id,
            2,
            "sqlite",
            "chart",
            {
                "sql": (
                    "SELECT c.name, AVG(r.temperature_c) FROM readings r JOIN "
                    "stations s ON s.id = r.station_id JOIN cities c ON c.id = "
                    "s.city_id GROUP BY c.name ORDER BY 2 DESC"
                )
            },
            _result(
                [
                    _image(
                        (
                            "iVBORw0KGgoAAAANSUhEUgAAAeAAAADwCAIAAABXFyDtAAAEiklEQVR42u3W"
                            "uw2EMBRFQVfn2AW4GmqiDdcEHRA8+Sc8I+IboH2HTQ8AW0peAYBAAyDQAAIN"
                            "gEADCDQAAg1AJND5urs/3jjA1oEesaz+gEALNIBACzQg0AININACDSDQAAIt"
                            "0AACLdCAQAs0gEALNIBAAwi0QAMItEADAi3QAAIt0IBACzSAQAs0gEADCLRA"
                            "Awi0QAMCLdAAAi3QAAININACDSDQAg0ItEADCLRAAwg0gEALNIBAAwi0QAMI"
                            "tEADAi3QAAIt0AACDSDQAg0g0AINCLRAAwi0QAMINIBACzSAQAs0INACDSDQ"
                            "Ag0ItEADCLRAAwg0gEALNIBACzQg0AININACDSDQAAK9LNDqDwi0QAMItEAD"
                            "Ai3QAg0ItEADCLT6AwIt0AINCLRAAwKtoQINCLRAAwi0QAMCLdACDQi0QAMC"
                            "LdACDQi0QAMCLdACDQi0QAs0INACDQi0QAs0INACDQi0hgo0INDGAQRaoAGB"
                            "FmiBBgRaoAGBFmiBBgRaoAGBFmiBBgRaoAUaEGiBBgRaoAUaEGiBBgRaoAUa"
                            "EGjjAg0ItEADAi3QAg0ItEADAq2hAg0ItEADCLRAAwIt0AINCLRx9QeB1lCB"
                            "BgTauECDQAu0QAMCbVygAYE2Dgi0hgo0INDGBRoEWuYEGhBo4wINCLRAAwKt"
                            "oQINCLRxgQaB1lCBBgTauECDQAu0QAMCraECDQi0cYEGgdZQgQYE2rhAg0DL"
                            "nEADAm1coAGBNq7+INAyJ9CAQBsXaBBomTMu0CDQxgUaBFqgjQs0CLTMCTQg"
                            "0MYFGgRa5gQaEGjjAg0CLdDGBRoE2rhAAwJtXKBBoGVOoAGBNi7QINBKZFyg"
                            "QaCNCzQg0MbVHwRaiYwLNAi0cYEGgVYi4wINAm1coEGgBdq4+oNAGzcu0CDQ"
                            "xo0LNAItFsYFGgTauHGBRqDds3GBBoE2blygQaCNGweBFgvjAg0Cbdy4QCPQ"
                            "YmFcoEGgjRsXaARaoI0LNAi0WBgXaBBo48YFGoEWC+MCDQJt3LhAI9Du2bhA"
                            "g0AbNy7QINDGjQs0Ai0WxgUaBNq4cYFGoMXCuECDQBs3LtAItEAbF2gQaLEw"
                            "rv4g0MaNCzQC7Z6NGxdoBNq4ceMItEAbNy7QCLRx48YFGoE2blygEWgnZ9y4"
                            "QCPQxo0LNALtKowbF2gE2rhx4wKNQBs3LtAItJMzblygEWjjxgUagXZyxo0L"
                            "NAJt3LhxgRZogTZuXKARaOPGjQs0Am3cuHH1F2hXYdy4QCPQxo0bF2iB9sM1"
                            "blygEWjjxo0LNAJt3LhxgRZoV2HcuEAj0MaNGxdogXYVxo0LNAJt3LhxgRZo"
                            "gTZu3DgC7SqMGxdoBNq4ceMC/bNAFwCmiPyDBs7Uah3xGP8YF2hAoAUaEGiB"
                            "FmhAoAUaEGiBFmhAoAVaoAGBFmgAnxaBBgRaoAEEWqABBBpAoAUaQKAFGhBo"
                            "gQYQaIEGEGgAgRZogCPrL9AAAg0g0AININAAAi3QAAIt0AACDSDQAg0g0AAC"
                            "LdAAAg2AQAMg0AACDYBAAwg0AAINgEADCDQAES+0KckEgCHmzQAAAABJRU5E"
                            "rkJggg=="
                        ),
                        "image/png",
                    )
                ]
            ),
            times=("5dbc71f0ebc5", 1795491821.1761682, 7.346153259277344),
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=TableEnvelope(
            columns=["city", "mean_c", "rain_mm"],
            dtypes=["str", "float64", "float64"],
            kind="table",
            origin="dataframe",
            row_count=3,
            rows=[["Sydney", 22.1, 111.5], ["Buenos Aires", 21.9, 119.3], ["Mumbai", 16.1, 102.7]],
            truncated=False,
        ),
        error=None,
        stdout="",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        artifacts=[
            Artifact(
                id="da24cdff83d0",
                name="city averages",
                type="text/csv",
                description="mean temperature and total rain per city",
                size=333,
                created="2026-11-24T03:43:41.172+00:00",
                sha256="2015c470d4c32be033028cb4ac434f45c88686504bcdd237de95fe5518423aea",
                execution_id=execution_id,
            ).to_dict(),
            Artifact(
                id="f6cceb77203c",
                name="averages chart",
                type="image/png",
                description="",
                size=1219,
                created="2026-11-24T03:43:41.184+00:00",
                sha256="56c9079b9f548e4ef9916fb672f71e2c7fd498b545d6684c275616695bcb9109",
                execution_id=execution_id,
            ).to_dict(),
        ],
        duration_ms=2025.871,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    return Fixture("notebooks/artifacts_and_history.ipynb, cell 3", result)


def _text_value() -> Fixture:
    execution_id = "ed6333dc9751"
    calls = [
        _call(
            execution_id,
            1,
            "weather",
            "get_weather",
            {"city": "Miami", "unit": "celsius"},
            _structured({"city": "Miami", "temperature": 24.4, "unit": "celsius", "conditions": "cloudy"}),
            times=("b85dcce3fcd1", 1795491813.3996062, 3.4322738647460938),
        ),
        _call(
            execution_id,
            2,
            "codemode",
            "llm",
            {"prompt": "Describe cloudy weather at 24.4 °C in three words"},
            _result([_text("Warm, humid, sunny")]),
            times=("d319cc4ee93f", 1795491813.4035432, 23.984670639038086),
        ),
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=TextEnvelope(kind="text", text="Warm, humid, sunny"),
        error=None,
        stdout="",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=31.374,
        timeout_s=30.0,
        protections=PROTECTIONS,
    )
    return Fixture("notebooks/agent.ipynb, cell 13", result)


def _moved() -> Fixture:
    """A run on a Ray cluster whose node was killed under it: replayed on another node, no call made twice."""
    execution_id = "7c1e55b0a9d3"
    calls = [
        _call(
            execution_id,
            seq,
            "counting",
            "count",
            {"label": label},
            _result([_text("1")], structured={"result": 1}),
            times=times,
        )
        for seq, label, times in (
            (1, "lost-first", ("0d4b7a1e92c6", 1795492210.118, 6.2)),
            (2, "lost-second", ("5a8e03c7f41b", 1795492214.907, 5.8)),
        )
    ]
    result = ExecutionResult(
        status="ok",
        execution_id=execution_id,
        value=JsonEnvelope(kind="json", data=[1, 1]),
        stdout="first call answered\nafter the second call\n",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=5212.7,
        timeout_s=60.0,
        protections=PROTECTIONS,
        nodes=[
            NodeAttempt(
                node="3f9a0c2be81d44a6b07e5c19d2f8a6e3b4c5d6e7f8091a2b3c4d5e6f",
                outcome="lost: ActorDiedError: The actor died unexpectedly before finishing this task.",
            ),
            NodeAttempt(node="b62e17d0c4a9f35e8d1b2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c", outcome="finished"),
        ],
    )
    return Fixture("tests/cluster/test_ray_executor.py, a node removed under a run", result)


def _timeout() -> Fixture:
    execution_id = "5ef0687c4c89"
    calls = []
    result = ExecutionResult(
        status="timeout",
        execution_id=execution_id,
        value=None,
        error=ErrorRecord(
            column=None,
            line=None,
            message=("the program did not finish within 2 s and was stopped; output so far is kept"),
            source_line=None,
            traceback="",
            type="TimeoutError",
        ),
        stdout="",
        stderr="",
        tool_calls=[call.to_json() for call in calls],
        duration_ms=2014.458,
        timeout_s=2.0,
        protections=PROTECTIONS,
    )
    return Fixture("notebooks/errors_and_timeouts.ipynb, cell 12", result)


FIXTURES = {
    "approval": _approval,
    "artifact_result": _artifact_result,
    "asked": _asked,
    "error": _error,
    "invalid_arguments": _invalid_arguments,
    "moved": _moved,
    "parallel": _parallel,
    "progress": _progress,
    "quickstart": _quickstart,
    "table_artifacts": _table_artifacts,
    "text_value": _text_value,
    "timeout": _timeout,
}
"""Each fixture's builder, by the name of its file."""
