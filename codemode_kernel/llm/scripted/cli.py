"""``python -m codemode_kernel.llm.scripted --script turns.json [--port N]``: serve a script until Ctrl-C."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from ._script import ScriptedTurn
from ._server import ScriptedModelServer

__all__ = ["load_script", "main"]


def load_script(path: str | Path) -> list[ScriptedTurn]:
    """Read a script file: a JSON list of turns, or an object with a ``"turns"`` list (docs/llm.md)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    turns = data.get("turns") if isinstance(data, dict) else data
    if not isinstance(turns, list):
        raise ValueError(f'{path}: expected a list of turns, or {{"turns": [...]}}')
    return [ScriptedTurn.from_json(turn) for turn in turns]


def main(argv: list[str] | None = None) -> int:
    """Start the server, print its base URL (the first line of stdout), serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m codemode_kernel.llm.scripted", description=__doc__)
    parser.add_argument("--script", required=True, help="JSON file: a list of turns (see docs/llm.md)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--model", action="append", help="a model name GET /v1/models lists (repeatable)")
    args = parser.parse_args(argv)
    try:
        turns = load_script(args.script)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {args.script}: {exc}", file=sys.stderr)
        return 2
    server = ScriptedModelServer(turns, port=args.port, models=args.model or ("scripted",)).start()
    print(server.base_url, flush=True)
    print(
        f"# OpenAI baseUrl: {server.base_url}  Anthropic baseUrl: {server.url}", file=sys.stderr, flush=True
    )
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
