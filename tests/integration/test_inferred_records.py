"""A real third-party tool that answers JSON records without an outputSchema gets a typed result.

npm server-everything's ``get-env`` publishes no outputSchema and answers a JSON object (the server's
environment): after one call its stub is a TypedDict of the fields seen, marked inferred, in the kernel's
stubs and in the next program's ``tool_schema()``; what the call returns is unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor

pytestmark = pytest.mark.integration


def test_get_env_becomes_a_typed_record_after_one_call(tmp_path: Path, everything_bin: str) -> None:
    config = {"mcpServers": {"everything": {"command": everything_bin}}, "workspace": str(tmp_path)}
    (tmp_path / "codemode.json").write_text(json.dumps(config))
    with Toolbox(load_config(tmp_path / "codemode.json")) as toolbox, Executor(toolbox) as executor:
        toolbox.wait_for_servers()
        assert "def get_env() -> Any:" in toolbox.stubs()
        first = executor.run("env = get_env()\nsorted(env)")
        assert first.status == "ok", first.error
        assert first.value is not None
        fields = first.value["data"]
        assert "PATH" in fields
        toolbox.refresh()
        stubs = toolbox.stubs()
        assert "def get_env() -> GetEnvOutput:  # result inferred from 1 call" in stubs
        record = stubs[stubs.index("class GetEnvOutput(TypedDict):") : stubs.index("def get_env(")]
        assert '"""Inferred from 1 call: fields seen in results (no outputSchema)."""' in record
        assert all(f"    {name}: str" in record for name in fields if name.isidentifier())
        second = executor.run('[tool_schema("get_env")["inferred_output"], sorted(get_env())]')
    assert second.status == "ok", second.error
    assert second.value is not None
    inferred, again = second.value["data"]
    assert inferred["calls"] == 1
    assert inferred["schema"]["type"] == "object"
    assert sorted(inferred["schema"]["required"]) == fields == again
