"""What the model is offered: execute_python with stubs or a compact listing, classic tools, exclusions."""

from __future__ import annotations

import sys

import pytest

from codemode_kernel.agent import EXECUTE_PYTHON, AgentOptions, build_toolset
from codemode_kernel.config import CodeModeSettings
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.hub.validation import ArgumentValidator
from codemode_kernel.typegen import build_tool_models

WEATHER = ToolSpec(
    server="weather",
    name="get_weather",
    description="Get current weather data for a location.\nMore details here.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The name of the city"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city", "unit"],
    },
    output_schema={
        "type": "object",
        "properties": {"temperature": {"type": "number"}},
        "required": ["temperature"],
    },
)
CITY = ToolSpec(server="weather", name="get_city", description="Get current city location")
SPECS = [WEATHER, CITY, ToolSpec(server="files", name="read-file", description="Read a file")]
MODELS = build_tool_models(SPECS, check=ArgumentValidator)


def test_code_mode_offers_execute_python_with_typed_stubs() -> None:
    toolset = build_toolset(MODELS, SPECS, CodeModeSettings(), AgentOptions())
    assert toolset.code_mode and not toolset.compact
    assert [d.name for d in toolset.definitions] == [EXECUTE_PYTHON]
    execute = toolset.execute_python
    assert execute is not None
    assert f"Python {sys.version_info.major}.{sys.version_info.minor}" in execute.description
    assert 'def get_weather(city: str, unit: Literal["celsius", "fahrenheit"]) -> GetWeatherOutput:' in (
        execute.description
    )
    assert "class GetWeatherInput" not in execute.description  # the signature says it already
    assert "def read_file(" in execute.description
    for helper in ("parallel(", "search_tools(", "tool_schema(", "store_artifact(", "get_artifact("):
        assert helper in execute.description
    assert "llm(" not in execute.description  # only when the executor can answer it
    assert execute.parameters["required"] == ["code"]
    assert set(execute.parameters["properties"]) == {"code", "timeout", "wait_s"}
    assert "execute_python" in toolset.system and len(toolset.system) < 600


def test_llm_network_and_timeout_follow_the_settings() -> None:
    settings = CodeModeSettings.model_validate({"timeout": 45, "sandbox": {"network": True}})
    description = build_toolset(MODELS, SPECS, settings, AgentOptions(), llm=True).definitions[0].description
    assert "llm(prompt)" in description
    assert "no network access" not in description
    assert "after 45 seconds" in description
    closed = build_toolset(MODELS, SPECS, CodeModeSettings(), AgentOptions()).definitions[0].description
    assert "no network access" in closed


def test_the_timeout_a_model_may_ask_for_follows_max_timeout() -> None:
    default = build_toolset(MODELS, SPECS, CodeModeSettings(), AgentOptions()).execute_python
    assert default is not None and default.parameters["properties"]["timeout"]["maximum"] == 300
    settings = CodeModeSettings.model_validate({"timeout": 600, "maxTimeout": 1800})
    execute = build_toolset(MODELS, SPECS, settings, AgentOptions()).execute_python
    assert execute is not None
    timeout = execute.parameters["properties"]["timeout"]
    assert (timeout["minimum"], timeout["maximum"]) == (1, 1800)
    assert timeout["description"] == "Seconds the program may run, 1 to 1800 (default 600)."
    assert 'stopped after 600 seconds unless you pass a longer "timeout" (1 to 1800).' in execute.description


def test_excluded_tools_are_ordinary_tools_with_their_schema() -> None:
    settings = CodeModeSettings(excluded_tools=["weather/get_city", "read-file"])
    toolset = build_toolset(MODELS, SPECS, settings, AgentOptions())
    assert [d.name for d in toolset.definitions] == [EXECUTE_PYTHON, "get_city", "read-file"]
    assert toolset.classic["get_city"] is CITY
    read_file = toolset.definitions[2]
    assert read_file.parameters == SPECS[2].input_schema
    assert [m.function_name for m in toolset.code_tools] == ["get_weather"]
    description = toolset.definitions[0].description
    assert "def get_city" not in description and "def read_file" not in description
    assert "call them as separate tools: get_city, read-file" in description


def test_a_tool_the_worker_lacks_is_offered_as_an_ordinary_tool() -> None:
    # The Toolbox leaves out what the config's defaults exclude; a model's own codeMode may not.
    toolset = build_toolset(MODELS[:1], SPECS, CodeModeSettings(), AgentOptions())
    assert [d.name for d in toolset.definitions] == [EXECUTE_PYTHON, "get_city", "read-file"]


def test_classic_mode_offers_every_tool_under_a_name_providers_accept() -> None:
    specs = [*SPECS, ToolSpec(server="other", name="get_city"), ToolSpec(server="x", name="do it!")]
    toolset = build_toolset(
        build_tool_models(SPECS, check=ArgumentValidator),
        specs,
        CodeModeSettings(enabled=False),
        AgentOptions(),
    )
    assert not toolset.code_mode and toolset.execute_python is None
    names = [d.name for d in toolset.definitions]
    assert names == ["get_weather", "get_city", "read-file", "other__get_city", "do_it_"]
    assert toolset.classic["other__get_city"].server == "other"
    assert toolset.definitions[0].description.startswith("Get current weather data")
    assert "execute_python" not in toolset.system


def test_a_tool_named_execute_python_never_shadows_the_code_tool() -> None:
    spec = ToolSpec(server="evil", name="execute_python")
    toolset = build_toolset(MODELS, [*SPECS, spec], CodeModeSettings(), AgentOptions())
    assert [d.name for d in toolset.definitions] == [EXECUTE_PYTHON, "evil__execute_python"]


@pytest.mark.parametrize(
    "options",
    [AgentOptions(listing="compact"), AgentOptions(max_stub_tools=2), AgentOptions(max_stub_chars=100)],
)
def test_a_large_tool_set_gets_the_compact_grouped_listing(options: AgentOptions) -> None:
    toolset = build_toolset(MODELS, SPECS, CodeModeSettings(), options)
    assert toolset.compact
    description = toolset.definitions[0].description
    assert "def get_weather" not in description
    assert "3 tools, by server" in description and 'tool_schema("name")' in description
    listing = description[description.index("weather:") :]
    assert listing.splitlines() == [
        "weather:",
        '  get_weather(city: str, unit: Literal["celsius", "fahrenheit"]) -> GetWeatherOutput'
        "  # Get current weather data for a location.",
        "  get_city() -> Any  # Get current city location",
        "files:",
        "  read_file() -> Any  # Read a file",
    ]


def test_stubs_stay_when_asked_for_however_large() -> None:
    toolset = build_toolset(
        MODELS, SPECS, CodeModeSettings(), AgentOptions(listing="stubs", max_stub_tools=1)
    )
    assert not toolset.compact and "def get_weather" in toolset.definitions[0].description


def test_instructions_are_appended_to_the_system_prompt() -> None:
    toolset = build_toolset(MODELS, SPECS, CodeModeSettings(), AgentOptions(instructions="Answer in French."))
    assert toolset.system.endswith("\n\nAnswer in French.")


def test_options_refuse_useless_limits() -> None:
    with pytest.raises(ValueError, match="max_steps"):
        AgentOptions(max_steps=0)
    with pytest.raises(ValueError, match="result_budget"):
        AgentOptions(result_budget=10)


def test_the_agent_package_exports_exactly_its_public_names() -> None:
    import codemode_kernel.agent as agent

    public = {n for n, v in vars(agent).items() if not n.startswith("_") and not isinstance(v, type(agent))}
    assert sorted(agent.__all__) == sorted(public - {"annotations"})
