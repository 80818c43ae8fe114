"""The trust store: which project-local config files the user has agreed to run, by path and content.

A ``.mcp.json`` that arrives with a cloned repository can name any command; opening a notebook in that
directory must not run it. So a project file that would start processes is used only after
``codemode trust <path>``, which records the file's resolved path and the SHA-256 of its bytes in
``<user config dir>/trusted.json``. Any edit changes the digest, and the file must be trusted again.

The store is written atomically (a temporary file renamed over the old one), so a crash never leaves half
a store; a store that cannot be read is an error, never "nothing is trusted" followed by an overwrite.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

from ..atomic_file import write_atomically
from ..errors import ConfigError
from .discovery import resolve_user_dir

__all__ = ["TRUST_FILE", "content_digest", "is_trusted", "trust_config", "trust_state"]

TRUST_FILE = "trusted.json"

TrustState = Literal["trusted", "changed", "unknown"]


def content_digest(content: bytes) -> str:
    """Return the SHA-256 of a file's bytes as hex: what the store remembers."""
    return hashlib.sha256(content).hexdigest()


def trust_config(path: str | os.PathLike[str], *, user_config_dir: Path | None = None) -> Path:
    """Trust the current content of the config file at ``path``; returns the trust store it was written to.

    Trusting again after an edit replaces the old entry. This is what ``codemode trust <path>`` runs; the
    returned path lets it say where the trust is remembered.
    """
    resolved = Path(path).resolve()
    digest = content_digest(_read(resolved))
    store_path = resolve_user_dir(user_config_dir) / TRUST_FILE
    files = _read_store(store_path)
    files[str(resolved)] = {"sha256": digest}
    _write_store(store_path, files)
    return store_path


def is_trusted(path: str | os.PathLike[str], *, user_config_dir: Path | None = None) -> bool:
    """Whether the file at ``path`` is trusted with exactly its current content."""
    resolved = Path(path).resolve()
    return (
        trust_state(resolved, content_digest(_read(resolved)), user_config_dir=user_config_dir) == "trusted"
    )


def trust_state(resolved: Path, digest: str, *, user_config_dir: Path | None = None) -> TrustState:
    """Tell whether content already read is trusted, changed (edited since trusted) or unknown.

    The loader passes the digest of the bytes it parsed, so the check and the use see the same content.
    """
    entry = _read_store(resolve_user_dir(user_config_dir) / TRUST_FILE).get(str(resolved))
    if entry is None:
        return "unknown"
    return "trusted" if entry.get("sha256") == digest else "changed"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"cannot be read ({exc.strerror or exc})",
            file=str(path),
            fix="check the path: only an existing config file can be trusted",
        ) from None


def _read_store(store_path: Path) -> dict[str, dict[str, Any]]:
    try:
        text = store_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(
            f"the trust store cannot be read ({exc.strerror or exc})",
            file=str(store_path),
            fix="make it readable, or delete it (project files will then ask to be trusted again)",
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not all(isinstance(entry, dict) for entry in files.values()):
        raise ConfigError(
            "is not a trust store written by codemode",
            file=str(store_path),
            fix="delete it; project files will then ask to be trusted again",
        )
    return files


def _write_store(store_path: Path, files: dict[str, dict[str, Any]]) -> None:
    store_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    text = json.dumps({"version": 1, "files": files}, indent=2, sort_keys=True) + "\n"
    write_atomically(store_path, text, prefix=".trusted-", sync=True)  # readable by the user only
