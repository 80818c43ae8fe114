"""The trust store: which project configs the user agreed to use, as they were when trusted.

A ``.mcp.json`` that arrives with a cloned repository, or that a program wrote into the workspace, can name
any command, any remote server, and settings that loosen the sandbox; opening a notebook in that directory
must not act on it. So such a file is used only after ``codemode trust``, which records in
``<user config dir>/trusted.json``, under the place the file was found (its folder with symlinks resolved,
then its name):

- the SHA-256 of its bytes;
- where the file really is (a symlink re-pointed elsewhere is a change);
- a digest of every file inside the project that its servers run or read (``footprint.server_files``: the
  scripts in ``args``, the packages of ``python -m``, the ``envFile``), or ``absent``: editing ``server.py``,
  or creating the ``envFile`` that holds ``PYTHONPATH``, changes what runs as much as editing the config.

Any difference asks again, naming what changed. The store is written atomically (a temporary file renamed
over the old one), so a crash never leaves half a store; a store that cannot be read is an error, never
"nothing is trusted" followed by an overwrite. Entries written by earlier releases (content only) read as
changed, so those files are asked about once more.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..atomic_file import write_atomically
from ..core.errors import ConfigError
from .discovery import resolve_user_dir
from .footprint import digest_path, server_files
from .models import ServerConfig

__all__ = [
    "TRUST_FILE",
    "TrustCheck",
    "TrustRecord",
    "check_trust",
    "content_digest",
    "make_record",
    "read_config_bytes",
    "remember_trust",
    "trust_key",
]

TRUST_FILE = "trusted.json"
_STORE_VERSION = 2

TrustState = Literal["trusted", "changed", "unknown"]


def content_digest(content: bytes) -> str:
    """Return the SHA-256 of a file's bytes as hex: what the store remembers."""
    return hashlib.sha256(content).hexdigest()


def trust_key(path: str | os.PathLike[str]) -> Path:
    """Where a config was found, as the store names it: its folder with symlinks resolved, then its name.

    Discovery finds files in the working directory, which the system reports with symlinks resolved; a
    config reached as a symlink from another folder is a different place (its relative paths start there).
    """
    absolute = Path(os.path.abspath(path))
    return Path(os.path.realpath(absolute.parent)) / absolute.name


@dataclass(frozen=True)
class TrustRecord:
    """What trust covers: the config's bytes, where it really is, what its servers run from the project."""

    sha256: str
    realpath: str
    runs: Mapping[str, str] = field(default_factory=dict)
    """``{absolute path: digest or "absent"}`` of the project files the servers run or read."""

    def to_json(self) -> dict[str, Any]:
        """The store's entry."""
        return {"sha256": self.sha256, "realpath": self.realpath, "runs": dict(sorted(self.runs.items()))}


@dataclass(frozen=True)
class TrustCheck:
    """The store's answer for a record: trusted, changed (with what changed), or unknown."""

    state: TrustState
    changes: tuple[str, ...] = ()

    @property
    def trusted(self) -> bool:
        """Whether the config may be used as it is."""
        return self.state == "trusted"


def make_record(
    key: Path, content: bytes, servers: Mapping[str, ServerConfig], *, cwd: Path, roots: tuple[Path, ...]
) -> TrustRecord:
    """The record of a config found at ``key`` with ``content``, whose servers start in ``cwd``.

    Only files inside ``roots`` (the project folder, the workspace) are digested: they are the ones a
    program may write; the rest of the machine is the user's.
    """
    folders = {os.path.abspath(root) for root in roots} | {os.path.realpath(root) for root in roots}
    runs: dict[str, str] = {}
    for server in servers.values():
        for path in server_files(server, cwd):
            # A symlink in the project counts wherever it points: re-pointing it changes what runs.
            places = (str(path), os.path.realpath(path))
            if any(_within(place, folder) for place in places for folder in folders):
                runs[str(path)] = digest_path(path)
    return TrustRecord(content_digest(content), os.path.realpath(key), runs)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_trust(key: Path, record: TrustRecord, *, user_config_dir: Path | None = None) -> TrustCheck:
    """Compare ``record`` (the config as it is now) with what was trusted under ``key``."""
    entry = _read_store(resolve_user_dir(user_config_dir) / TRUST_FILE).get(str(key))
    if entry is None:
        return TrustCheck("unknown")
    if "runs" not in entry or "realpath" not in entry:
        earlier = "it was trusted by an earlier release, which recorded only its content"
        return TrustCheck("changed", (earlier,))
    changes = []
    if entry.get("realpath") != record.realpath:
        changes.append(f"it is now {record.realpath} (it was {entry.get('realpath')})")
    if entry.get("sha256") != record.sha256:
        changes.append("its content was edited")
    trusted_runs = entry.get("runs") or {}
    for path in sorted(set(trusted_runs) | set(record.runs)):
        before, now = trusted_runs.get(path), record.runs.get(path)
        if before == now:
            continue
        if before is None:
            changes.append(f"it now runs {path}")
        elif now is None:
            changes.append(f"it no longer runs {path}")
        elif now == "absent":
            changes.append(f"{path}, which it runs, was deleted")
        elif before == "absent":
            changes.append(f"{path}, which it runs, was created")
        else:
            changes.append(f"{path}, which it runs, was changed")
    return TrustCheck("changed", tuple(changes)) if changes else TrustCheck("trusted")


def remember_trust(key: Path, record: TrustRecord, *, user_config_dir: Path | None = None) -> Path:
    """Store ``record`` as trusted under ``key`` (replacing an older entry); returns the store's path."""
    store_path = resolve_user_dir(user_config_dir) / TRUST_FILE
    files = _read_store(store_path)
    files[str(key)] = record.to_json()
    _write_store(store_path, files)
    return store_path


def read_config_bytes(path: Path) -> bytes:
    """The bytes of a config about to be trusted; a missing file is a ConfigError that says so."""
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
    text = json.dumps({"version": _STORE_VERSION, "files": files}, indent=2, sort_keys=True) + "\n"
    write_atomically(store_path, text, prefix=".trusted-", sync=True)  # readable by the user only
