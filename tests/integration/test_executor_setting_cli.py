"""Choosing where programs run from the command line (issue 26): ``--executor local|ray[=ADDRESS]`` on
``codemode run`` and ``codemode serve``, and a project config's executor, which needs trust.

No Ray cluster is started here (the Ray executor's own tests do that): these check what a person reads
and that a local choice runs programs here whatever the config says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, stdio_client

from codemode_kernel.config.executor_choice import CHOICE_FORMS
from tests.conftest import run_cli as codemode
from tests.integration.serve_support import serve_env, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

RAY_MISSING = 'codemode: the Ray executor needs Ray: pip install "codemode-kernel[ray]"\n'
UNREACHABLE = {"backend": "ray", "address": "ray://127.0.0.1:1"}
"""A Ray cluster nobody runs: a program sent there would fail, so a result means it ran here."""


def write_config(folder: Path, name: str, data: dict[str, object]) -> Path:
    (folder / name).write_text(json.dumps(data))
    return folder / name


def test_help_says_what_executor_does() -> None:
    for command in ("run", "serve"):
        shown = codemode(command, "--help", cwd=Path.cwd()).stdout
        flat = " ".join(shown.split())
        assert "--executor local|ray[=ADDRESS]" in flat
        assert 'where programs run, over the config\'s "executor": local (a worker process on this' in flat
        assert 'pip install "codemode-kernel[ray]"' in flat


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("rey", "'rey' is not an executor"),
        ("ray=", "'ray=' is not an executor"),
        ("ray=head.example", '"head.example" has no port'),
        ("ray=http://head:8265", '"http://head:8265" is not a Ray address'),
    ],
)
def test_a_bad_executor_is_a_usage_error_naming_the_accepted_forms(
    tmp_path: Path, value: str, problem: str
) -> None:
    for command in (["run", "-"], ["serve"]):
        result = codemode(*command, "--executor", value, cwd=tmp_path, stdin="1")
        assert result.returncode == 2, result.stderr
        assert f"argument --executor: {problem}" in result.stderr
        assert result.stderr.endswith(f"; write {CHOICE_FORMS}\n")
        assert "Traceback" not in result.stderr


def test_run_with_executor_local_runs_here_over_a_configs_ray(tmp_path: Path) -> None:
    config = write_config(tmp_path, "c.json", {"mcpServers": {}, "executor": UNREACHABLE})
    result = codemode("run", "--config", str(config), "--executor", "local", "-", cwd=tmp_path, stdin="6 * 7")
    assert result.returncode == 0, result.stderr
    assert "42" in result.stdout


def test_serve_with_executor_local_runs_here_over_a_configs_ray(tmp_path: Path) -> None:
    config = write_serve_config(tmp_path, {}, executor=UNREACHABLE)

    async def session() -> None:
        params = stdio_params(tmp_path, config, "--executor", "local")
        with (tmp_path / "serve.stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                result = await client.call_tool("execute_python", {"code": "6 * 7"})
                assert not result.is_error, result.content
                assert result.structured_content is not None
                assert result.structured_content["value"]["data"] == 42

    anyio.run(session)


def without_ray(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``codemode ARGV`` in a Python where ``import ray`` fails, as where the [ray] extra is not installed."""
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from codemode_kernel.cli import main\n"
        f"sys.exit(main({list(argv)!r}))\n"
    )
    return subprocess.run(
        [sys.executable, "-P", "-c", code],
        cwd=folder,
        env=serve_env(folder),
        input="1",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_ray_choosing_it_exits_2_with_the_install_line(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    local = write_config(tmp_path, "local.json", {"mcpServers": {}})
    ray = write_config(tmp_path, "ray.json", {"mcpServers": {}, "executor": {"backend": "ray"}})
    for argv in (
        ["run", "--config", str(local), "--executor", "ray", "-"],
        ["run", "--config", str(local), "--executor", "ray=10.0.0.5:6379", "-"],
        ["run", "--config", str(ray), "-"],
        ["serve", "--config", str(local), "--executor", "ray=auto"],
        ["serve", "--config", str(ray)],
    ):
        result = without_ray(tmp_path, *argv)
        assert (result.returncode, result.stderr, result.stdout) == (2, RAY_MISSING, ""), argv
    # Ray missing matters only when it is chosen: the same Python runs a program here.
    here = without_ray(tmp_path, "run", "--config", str(ray), "--executor", "local", "-")
    assert here.returncode == 0 and here.stdout.startswith("1\n[ok in "), here.stderr


def test_an_untrusted_project_config_sending_programs_to_ray_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, "codemode.json", {"mcpServers": {}, "executor": {"backend": "ray"}})
    loosened = (
        "is not trusted yet; it would loosen protections (executor: programs and their tool results go to "
        "the machines of the Ray cluster at auto)"
    )
    fix = f"codemode trust {tmp_path.resolve() / 'codemode.json'}"
    run = codemode("run", "-", cwd=tmp_path, stdin="1")
    assert run.returncode == 2
    assert f"codemode: codemode.json: {loosened}\n  fix: read the file, then run: {fix}" in run.stderr
    doctor = codemode("doctor", cwd=tmp_path)
    assert doctor.returncode == 1
    assert f"config: codemode.json (project, NOT TRUSTED)\n  problem: {loosened}" in doctor.stdout


def test_a_trusted_project_configs_executor_is_listed_by_trust_and_doctor(tmp_path: Path) -> None:
    # An address alone: listed (a switch to ray would go there) while programs still run here.
    write_config(tmp_path, "codemode.json", {"mcpServers": {}, "executor": {"address": "10.0.0.5:6379"}})
    effect = (
        "executor: programs and their tool results go to the machines of the Ray cluster at 10.0.0.5:6379 "
        "once switched to ray"
    )
    trusted = codemode("trust", cwd=tmp_path)
    assert trusted.returncode == 0, trusted.stderr
    assert f"it may now:\n  {effect}\n" in trusted.stdout
    doctor = codemode("doctor", cwd=tmp_path)
    assert f"loosened protections (1, by your settings):\n  codemode.json: {effect}\n" in doctor.stdout
