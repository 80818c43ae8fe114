"""The artifacts as ordinary tools, for classic mode with ``offerInClassic`` (seed 004's parity).

In code mode a program has ``store_artifact``, ``get_artifact`` and ``list_artifacts``; a model in classic
mode gets the same three as tools, answered from the workspace's store by the agent (no server is called).
"""

from __future__ import annotations

import json
from typing import Any

from ..artifacts import ArtifactStore
from ..core.errors import ArtifactError

__all__ = ["ARTIFACT_TOOLS", "run_artifact_tool"]

ARTIFACT_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "store_artifact": (
        "Store data (any JSON value, or text) in the workspace beyond this conversation's turn; returns its "
        "id. A program (execute_python) reads it back with get_artifact(id_or_name).",
        {
            "type": "object",
            "properties": {
                "data": {"description": "The data: any JSON value or a string."},
                "name": {"type": "string", "description": "A name to find it by later."},
                "description": {"type": "string", "description": "What it holds, for whoever lists it."},
            },
            "required": ["data", "name"],
        },
    ),
    "list_artifacts": (
        "List the stored artifacts, newest first: id, name, type, description, size, created.",
        {"type": "object", "properties": {}},
    ),
    "get_artifact": (
        "Read a stored artifact by id or name: its text, or its JSON.",
        {
            "type": "object",
            "properties": {"id_or_name": {"type": "string", "description": "An artifact's id or name."}},
            "required": ["id_or_name"],
        },
    ),
}
"""name -> (description, input schema)."""


def run_artifact_tool(store: ArtifactStore, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """Answer one artifact tool call: the text for the model, and whether it is an error."""
    try:
        if name == "store_artifact":
            if "data" not in arguments or not isinstance(arguments.get("name"), str):
                return 'store_artifact needs "data" and a "name" (a string).', True
            artifact = store.put(
                arguments["data"], name=arguments["name"], description=str(arguments.get("description") or "")
            )
            return json.dumps(artifact.to_dict()), False
        if name == "list_artifacts":
            return json.dumps([a.to_dict() for a in store.list()]), False
        key = arguments.get("id_or_name")
        if not isinstance(key, str):
            return 'get_artifact needs "id_or_name": an artifact\'s id or name (a string).', True
        value = store.load(key)
    except ArtifactError as exc:
        return f"{type(exc).__name__}: {exc}", True
    if isinstance(value, bytes):
        return (
            f"[{len(value):,} bytes of binary data: read it in a program with get_artifact({key!r})]",
            False,
        )
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr), False
