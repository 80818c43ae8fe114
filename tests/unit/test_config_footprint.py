"""The files a config's servers run: what trust digests and the sandbox makes read-only."""

from __future__ import annotations

from pathlib import Path

from codemode_kernel.config import Config, ServerConfig
from codemode_kernel.config.footprint import ABSENT, digest_path, run_files, server_files


def _server(**fields: object) -> ServerConfig:
    return ServerConfig.model_validate({"name": "s", **fields})


def test_scripts_modules_commands_and_env_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("print('hi')\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "pyproject.toml").write_text("")
    (tmp_path / "data").mkdir()  # served as data: programs keep writing it
    (tmp_path / "notes.db").write_text("")
    files = server_files(
        _server(
            command="./run.sh",
            args=[
                "server.py",
                "-m",
                "pkg.main",
                "--directory=srv",
                "-v",
                "not-a-file",
                "/nonexistent/x",
                "data",
                "--db",
                "notes.db",
            ],
            envFile=str(tmp_path / ".env.mcp"),
        ),
        tmp_path,
    )
    assert files == (
        tmp_path / "run.sh",
        tmp_path / "server.py",
        tmp_path / "pkg",
        tmp_path / "srv",
        tmp_path / ".env.mcp",  # named though it does not exist: creating it would change what runs
    )


def test_the_servers_own_cwd_is_where_relative_names_start(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "main.py").write_text("")
    server = _server(command="python", args=["main.py"], cwd=str(tmp_path / "sub"))
    assert server_files(server, Path("/")) == (tmp_path / "sub" / "main.py",)


def test_remote_disabled_and_fetching_launchers_name_nothing(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text("")
    config = Config(
        workspace=tmp_path,
        servers={
            "remote": _server(name="remote", url="https://example.com/mcp"),
            "off": _server(name="off", command="python", args=["server.py"], disabled=True),
            "npx": _server(name="npx", command="npx", args=["-y", "@modelcontextprotocol/server-memory"]),
        },
    )
    assert run_files(config, tmp_path) == ()


def test_digest_changes_with_content_names_and_existence(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    assert digest_path(script) == ABSENT
    script.write_text("a")
    first = digest_path(script)
    script.write_text("b")
    assert digest_path(script) != first
    tree = tmp_path / "pkg"
    tree.mkdir()
    (tree / "a.py").write_text("x")
    before = digest_path(tree)
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "a.pyc").write_bytes(b"compiled")
    assert digest_path(tree) == before  # byte-code caches are not what runs
    (tree / "sitecustomize.py").write_text("import os")
    assert digest_path(tree) != before


def test_the_script_an_interpreter_runs_is_code_whatever_its_name(tmp_path: Path) -> None:
    """``bash -e run`` runs ``run``: no suffix, no executable bit, and a program must still not rewrite it."""
    (tmp_path / "run").write_text("echo serving\n")
    (tmp_path / "notes.db").write_text("")
    files = server_files(_server(command="bash", args=["-e", "run", "--db", "notes.db"]), tmp_path)
    assert files == (tmp_path / "run",)  # the data file named after it stays the program's to write
    served = server_files(_server(command="mcp-server-x", args=["notes.db"]), tmp_path)
    assert served == ()  # a server's own positional argument is data unless it is code by name or mode
