"""Write tests/fixtures/github_tools.json from the GitHub MCP server's tool snapshots.

    python scripts/github_tools_fixture.py SNAPSHOT_DIR --commit SHA [--out tests/fixtures/github_tools.json]

github/github-mcp-server (MIT license) keeps one JSON file per tool under ``pkg/github/__toolsnaps__/``
(``<tool>.snap``: the tool's name, description, inputSchema, annotations as the server lists them); its own
tests compare the live definitions with them. ``SNAPSHOT_DIR`` is that directory, or a checkout of the
repository (the directory is found inside it). The output is a ``tools/list`` result, ``{"tools": [...]}``
sorted by name, which ``codemode tools --tools-json`` and the tests read: a real, large tool list with
nothing fetched at run time. Each tool is copied as it is (no edits to names, descriptions or schemas);
the source, commit and license go into the result's ``_meta``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "github_tools.json"
SNAPSHOTS = Path("pkg") / "github" / "__toolsnaps__"
SOURCE = "https://github.com/github/github-mcp-server"


def read_snapshots(directory: Path) -> list[dict[str, Any]]:
    """Every ``*.snap`` of ``directory`` (or of its ``pkg/github/__toolsnaps__``), sorted by tool name."""
    if (directory / SNAPSHOTS).is_dir():
        directory = directory / SNAPSHOTS
    files = sorted(directory.glob("*.snap"))
    if not files:
        raise SystemExit(f"{directory}: no *.snap files; pass the repository or its {SNAPSHOTS} directory")
    tools: dict[str, dict[str, Any]] = {}
    for file in files:
        tool = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise SystemExit(f"{file}: not a tool definition (an object with a string name)")
        if tool["name"] in tools:
            raise SystemExit(f"{file}: tool {tool['name']!r} is in two snapshots")
        tools[tool["name"]] = tool
    return [tools[name] for name in sorted(tools)]


def main(argv: list[str] | None = None) -> int:
    """Read the snapshots, write the tools/list result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("snapshots", type=Path, help="pkg/github/__toolsnaps__, or the repository")
    parser.add_argument("--commit", required=True, help="the github-mcp-server commit the snapshots are from")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    tools = read_snapshots(args.snapshots)
    meta = {"source": SOURCE, "commit": args.commit, "path": str(SNAPSHOTS), "license": "MIT"}
    text = json.dumps({"_meta": meta, "tools": tools}, indent=1, ensure_ascii=False) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(f"{args.out}: {len(tools)} tools", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
