"""The execution limits are stated once (codemode_kernel/core/limits.py): changing one changes every use."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codemode_kernel.config import CodeModeSettings, ServeSettings
from codemode_kernel.core import limits

ROOT = Path(__file__).resolve().parents[2]

# Loads limits.py with other numbers before anything imports it, then reports what the config, the agent's
# execute_python and the CLI say: each must follow.
_PROBE = r"""
import importlib.util, json, sys
from pathlib import Path

path = Path(sys.argv[1])
source = path.read_text(encoding="utf-8")
changes = {"MAX_TIMEOUT": "120.0", "DEFAULT_TIMEOUT": "20.0", "MIN_TIMEOUT": "2.0", "DEFAULT_GRACE": "3.0"}
for name, value in changes.items():
    old, new = f"\n{name} = ", f"\n{name} = {value}  # "
    assert old in source, old
    source = source.replace(old, new)
spec = importlib.util.spec_from_loader("codemode_kernel.core.limits", loader=None, origin=str(path))
module = importlib.util.module_from_spec(spec)
exec(compile(source, str(path), "exec"), module.__dict__)
sys.modules["codemode_kernel.core.limits"] = module

import contextlib, io
import pydantic
from codemode_kernel.agent import AgentOptions, build_toolset
from codemode_kernel.cli import _parser
from codemode_kernel.config import CodeModeSettings

settings = CodeModeSettings()
rejected = []
for value in (1.5, 121.0):
    try:
        CodeModeSettings(timeout=value)
    except pydantic.ValidationError:
        rejected.append(value)
execute = build_toolset([], [], settings, AgentOptions()).execute_python
cli = io.StringIO()
with contextlib.redirect_stdout(cli), contextlib.suppress(SystemExit):
    _parser().parse_args(["run", "--help"])
print(json.dumps({
    "default": settings.timeout,
    "grace": settings.grace,
    "rejected": rejected,
    "description": execute.description,
    "parameter": execute.parameters["properties"]["timeout"],
    "cli": cli.getvalue(),
}))
"""


def test_every_use_follows_a_change_in_limits_py() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(ROOT / "codemode_kernel" / "core" / "limits.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["default"] == 20.0 and seen["grace"] == 3.0
    assert seen["rejected"] == [1.5, 121.0]
    assert 'stopped after 20 seconds unless you pass a longer "timeout" (2 to 120)' in seen["description"]
    assert seen["parameter"]["minimum"] == 2 and seen["parameter"]["maximum"] == 120
    assert seen["parameter"]["description"] == "Seconds the program may run, 2 to 120 (default 20)."
    assert "seconds, 2 to 120 (default 20)" in " ".join(seen["cli"].split())


def test_the_config_uses_the_limits() -> None:
    settings = CodeModeSettings()
    assert (settings.timeout, settings.grace) == (limits.DEFAULT_TIMEOUT, limits.DEFAULT_GRACE)
    assert ServeSettings().session_idle == limits.DEFAULT_SESSION_IDLE
    assert settings.max_timeout == limits.MAX_TIMEOUT
    properties = CodeModeSettings.model_json_schema()["properties"]
    for key in ("timeout", "maxTimeout"):
        assert (properties[key]["minimum"], properties[key]["maximum"]) == (
            limits.MIN_TIMEOUT,
            limits.LONGEST_TIMEOUT,
        )
    grace = properties["grace"]
    assert (grace["minimum"], grace["maximum"]) == (limits.MIN_GRACE, limits.MAX_GRACE)
    assert f"{limits.MIN_TIMEOUT:g} to {limits.MAX_TIMEOUT:g}" == limits.TIMEOUT_RANGE


def test_the_configuration_reference_states_the_limits() -> None:
    # Markdown cannot import the numbers, so the reference table is checked against them.
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {
        "timeout": (f"number, {limits.MIN_TIMEOUT:g} to `maxTimeout`", limits.DEFAULT_TIMEOUT),
        "maxTimeout": (f"number, {limits.timeout_range(limits.LONGEST_TIMEOUT)}", limits.MAX_TIMEOUT),
        "grace": (f"number, {limits.MIN_GRACE:g} to {limits.MAX_GRACE:g}", limits.DEFAULT_GRACE),
        "sessionIdle": ("number > 0", limits.DEFAULT_SESSION_IDLE),
        "wait": (f"number 0-{limits.MAX_WAIT:g}", limits.DEFAULT_WAIT),
    }
    for key, (kind, default) in rows.items():
        row = re.search(rf"^\| `{key}` \| ([^|]+) \| `([^`]+)` \|", text, re.MULTILINE)
        assert row is not None, key
        assert (row[1].strip(), float(row[2])) == (kind, default), key


@pytest.mark.parametrize(
    ("asked", "field", "message"),
    [
        (0.5, "--timeout", "--timeout: 0.5 seconds is outside 1 to 300; "),
        ("ten", "timeout", "timeout: 'ten' is not a number of seconds; "),
        (True, "timeout", "timeout: True is not a number of seconds; "),
        (3601, "timeout", "timeout: 3601 seconds is outside 1 to 300; "),
        ("inf", "timeout", "timeout: inf is not a number of seconds; "),
        (float("nan"), "timeout", "timeout: nan is not a number of seconds; "),
    ],
)
def test_a_timeout_outside_the_rule_is_refused_naming_the_field_and_the_fix(
    asked: object, field: str, message: str
) -> None:
    with pytest.raises(limits.TimeoutValueError) as refused:
        limits.check_timeout(asked, field=field)
    fix = f"pass a number of seconds from {limits.TIMEOUT_RANGE}, or leave {field} out for the default"
    assert str(refused.value) == message + fix


@pytest.mark.parametrize(("asked", "shown"), [(301, "301"), ("900", "900"), (3600, "3600")])
def test_a_timeout_a_config_could_allow_is_refused_with_the_setting_that_allows_it(
    asked: object, shown: str
) -> None:
    with pytest.raises(limits.TimeoutValueError) as refused:
        limits.check_timeout(asked)
    assert str(refused.value) == (
        f"timeout: {shown} seconds is outside 1 to 300; pass a number of seconds from 1 to 300, or leave "
        f"timeout out for the default; or allow it: set defaults.codeMode.maxTimeout to {shown} or more "
        "(up to 3600) in codemode.json"
    )


def test_the_maximum_is_the_settings_one() -> None:
    assert limits.check_timeout(1200, maximum=1800) == 1200.0
    with pytest.raises(limits.TimeoutValueError, match=r"outside 1 to 1800; .*\.maxTimeout to 2000 or more"):
        limits.check_timeout(2000, maximum=1800)
    with pytest.raises(limits.TimeoutValueError) as beyond:
        limits.check_timeout(3601, maximum=limits.LONGEST_TIMEOUT)
    assert "outside 1 to 3600" in str(beyond.value) and "maxTimeout" not in str(beyond.value)


def test_a_timeout_within_the_rule_is_taken_as_seconds() -> None:
    assert limits.check_timeout(limits.MIN_TIMEOUT) == limits.MIN_TIMEOUT
    assert limits.check_timeout(300) == 300.0 and isinstance(limits.check_timeout(300), float)
    assert limits.check_timeout(" 60 ") == 60.0  # a model's JSON number sent as a string
