"""JSON paths as messages show them: ``mcpServers.github.env.GITHUB_TOKEN``, ``models[1].ref``.

Every config message points at the field with the keys exactly as the user wrote them in the file, so
the user can search the file for the path's last key and find the mistake.
"""

from __future__ import annotations

import json
import re

__all__ = ["join"]

# Keys made of these characters read well without quoting (server names often hold hyphens).
_BARE_KEY = re.compile(r"[A-Za-z0-9_$-]+")


def join(parent: str, *parts: str | int) -> str:
    """Append keys (str) and list indexes (int) to a JSON path; odd keys are quoted as ``["a.b"]``."""
    path = parent
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _BARE_KEY.fullmatch(part):
            path = f"{path}.{part}" if path else part
        else:
            path += f"[{json.dumps(part)}]"
    return path
