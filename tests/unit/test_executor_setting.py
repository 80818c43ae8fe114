"""The "executor" setting (issue 26): read from codemode.json or the user config, checked, trusted like
any relaxation; and the ``local | ray | ray=ADDRESS`` choice of ``--executor`` and ``%codemode executor``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel.config import Config, load_config, trust_config
from codemode_kernel.config.executor_choice import CHOICE_FORMS, ExecutorChoice, parse_choice
from codemode_kernel.config.models import ExecutorResources, ExecutorSettings
from codemode_kernel.core.errors import ConfigError, UntrustedConfigError

RAY = {"backend": "ray", "address": "ray://head.example:10001"}


@pytest.fixture
def user(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".config" / "codemode"


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def load(tmp_path: Path, user: Path, path: Path | None = None) -> Config:
    return load_config(path, cwd=tmp_path, env={}, user_config_dir=user)


def test_without_the_key_programs_run_here_and_nothing_is_loosened(tmp_path: Path, user: Path) -> None:
    config = load(tmp_path, user, write(tmp_path / "c.json", {"mcpServers": {}, "defaults": {}}))
    assert config.executor == ExecutorSettings(backend="local", address=None)
    assert config.relaxations == []


def test_a_ray_executor_is_read_with_its_resources_and_listed_as_loosened(tmp_path: Path, user: Path) -> None:
    resources = {"cpus": 2, "memoryMb": 4096, "gpus": 0.5, "custom": {"bigmem": 1}}
    path = write(tmp_path / "c.json", {"mcpServers": {}, "executor": {**RAY, "resources": resources}})
    config = load(tmp_path, user, path)
    assert config.executor == ExecutorSettings(
        backend="ray",
        address="ray://head.example:10001",
        resources=ExecutorResources(cpus=2, memory_mb=4096, gpus=0.5, custom={"bigmem": 1}),
    )
    (relaxation,) = config.relaxations
    assert relaxation.describe() == (
        "c.json: executor: programs and their tool results go to the machines of the Ray cluster at "
        "ray://head.example:10001"
    )


def test_a_file_with_only_an_executor_is_in_codemodes_format(tmp_path: Path, user: Path) -> None:
    # Not named codemode.json, no other setting: the key alone makes it codemode's, so it is read.
    config = load(tmp_path, user, write(tmp_path / "c.json", {"executor": {"backend": "ray"}}))
    assert config.executor.backend == "ray" and config.executor.address is None
    assert config.relaxations[0].effect.endswith("the Ray cluster at auto")


def test_an_address_alone_is_listed_since_a_switch_to_ray_goes_there(tmp_path: Path, user: Path) -> None:
    path = write(tmp_path / "c.json", {"executor": {"address": "10.0.0.5:6379"}})
    (relaxation,) = load(tmp_path, user, path).relaxations
    assert relaxation.setting == "executor"
    assert relaxation.effect == (
        "programs and their tool results go to the machines of the Ray cluster at 10.0.0.5:6379 once "
        "switched to ray"
    )


def test_another_tools_file_takes_the_executor_from_the_user_config(tmp_path: Path, user: Path) -> None:
    write(user / "config.json", {"executor": {"backend": "ray", "address": "auto"}})
    config = load(tmp_path, user, write(tmp_path / "servers" / ".mcp.json", {"mcpServers": {}}))
    assert config.executor.backend == "ray" and config.executor.address == "auto"
    (relaxation,) = config.relaxations
    assert relaxation.file == "home/.config/codemode/config.json" and relaxation.setting == "executor"


@pytest.mark.parametrize(
    ("executor", "where", "problem", "fix"),
    [
        (
            {"backend": "rey"},
            "executor.backend",
            'unknown value "rey"',
            'write "local" (worker processes on this machine) or "ray"',
        ),
        (
            {"backend": "ray", "resources": {"cpus": -1}},
            "executor.resources.cpus",
            "must be at least 0 (got -1)",
            "write a number at least 0",
        ),
        (None, "executor", "must be an object, not null", 'write an object, e.g. {"backend": "ray"'),
        (
            {"backend": "ray", "address": "head.example"},
            "executor.address",
            '"head.example" has no port',
            'write "auto" (the cluster this machine joined with ray start), "HOST:PORT"',
        ),
        (
            {"backend": "ray", "address": "http://head:8265"},
            "executor.address",
            '"http://head:8265" is not a Ray address',
            '"ray://HOST:10001" (Ray Client), or remove it',
        ),
        (
            {"backend": "ray", "address": "head:99999"},
            "executor.address",
            '"head:99999" has no valid port (a number from 1 to 65535',
            'write "auto"',
        ),
    ],
)
def test_a_mistake_names_the_file_the_field_and_the_fix(
    tmp_path: Path, user: Path, executor: Any, where: str, problem: str, fix: str
) -> None:
    path = write(tmp_path / "c.json", {"mcpServers": {}, "executor": executor})
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, user, path)
    error = caught.value
    assert (error.file, error.path) == ("c.json", where)
    assert error.reason.startswith(problem), error.reason
    assert error.fix is not None and fix in error.fix, error.fix


def test_an_unknown_key_is_a_warning_with_the_nearest_one(tmp_path: Path, user: Path) -> None:
    executor = {"backend": "ray", "adress": "auto", "resources": {"cpu": 2}}
    config = load(tmp_path, user, write(tmp_path / "c.json", {"executor": executor}))
    assert config.warnings == [
        'c.json: executor.adress: unknown key; did you mean "address"?',
        'c.json: executor.resources.cpu: unknown key; did you mean "cpus"?',
    ]
    assert config.executor.backend == "ray" and config.executor.address is None


def test_an_untrusted_project_file_with_a_ray_executor_is_refused(tmp_path: Path, user: Path) -> None:
    path = write(tmp_path / "codemode.json", {"mcpServers": {}, "executor": RAY})
    with pytest.raises(UntrustedConfigError) as caught:
        load(tmp_path, user)
    assert caught.value.reason == (
        "is not trusted yet; it would loosen protections (executor: programs and their tool results go to "
        "the machines of the Ray cluster at ray://head.example:10001)"
    )
    assert caught.value.fix is not None
    assert caught.value.fix.endswith(f"codemode trust {shlex.quote(str(path.resolve()))}")
    trust_config(path, user_config_dir=user)
    config = load(tmp_path, user)
    assert config.executor.backend == "ray"
    assert [r.setting for r in config.relaxations] == ["executor"]


def test_a_local_executor_in_a_project_file_needs_no_trust(tmp_path: Path, user: Path) -> None:
    resources = {"cpus": 4}
    write(
        tmp_path / "codemode.json",
        {"mcpServers": {}, "executor": {"backend": "local", "resources": resources}},
    )
    config = load(tmp_path, user)
    assert config.executor.resources.cpus == 4 and config.relaxations == []


@pytest.mark.parametrize(
    ("text", "choice"),
    [
        ("local", ExecutorChoice("local")),
        ("ray", ExecutorChoice("ray")),
        ("ray=auto", ExecutorChoice("ray", "auto")),
        ("ray=10.0.0.5:6379", ExecutorChoice("ray", "10.0.0.5:6379")),
        ("ray=ray://head.example:10001", ExecutorChoice("ray", "ray://head.example:10001")),
        ("ray=ray://head.example", ExecutorChoice("ray", "ray://head.example")),
    ],
)
def test_the_accepted_choices(text: str, choice: ExecutorChoice) -> None:
    assert parse_choice(text) == choice


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Ray", "'Ray' is not an executor"),
        ("local=x", "'local=x' is not an executor"),
        ("ray=", "'ray=' is not an executor"),
        ("ray=head", '"head" has no port'),
        ("ray=https://head:10001", '"https://head:10001" is not a Ray address'),
    ],
)
def test_a_bad_choice_names_the_accepted_forms(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_choice(text)
    assert str(caught.value).startswith(problem) and str(caught.value).endswith(f"write {CHOICE_FORMS}")


def test_a_choice_keeps_the_configs_resources_and_its_address_unless_it_names_one() -> None:
    config = ExecutorSettings(address="10.0.0.5:6379", resources=ExecutorResources(cpus=3))
    assert parse_choice("ray").apply(config) == config.model_copy(update={"backend": "ray"})
    chosen = parse_choice("ray=auto").apply(config)
    assert (chosen.backend, chosen.address, chosen.resources.cpus) == ("ray", "auto", 3)
    assert parse_choice("local").apply(config).backend == "local"
