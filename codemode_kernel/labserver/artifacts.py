"""A workspace's artifacts for the sidebar: the list, and one artifact's bytes, sent so they stay inert.

An artifact's type was chosen by a program (or a tool), so it is never trusted: only types a browser
shows without running anything are sent as themselves; everything else (HTML, SVG, XML, JavaScript, ...)
is ``application/octet-stream`` and an attachment. Every answer also says ``nosniff`` and a sandboxing
Content-Security-Policy, so even a mislabelled artifact cannot run script in the Jupyter origin.
"""

from __future__ import annotations

import mimetypes
import re
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..artifacts import Artifact, ArtifactStore
from ..core.errors import ArtifactError
from ..worker.values import IMAGE_TYPES

__all__ = [
    "SAFE_TYPES",
    "ArtifactBody",
    "WorkspaceArtifacts",
    "content_disposition",
    "response_type",
    "valid_artifact_id",
]

SAFE_TYPES = frozenset({*IMAGE_TYPES, "text/plain", "text/csv", "application/json"})
"""Types sent as themselves (and shown inline); anything else is sent as ``application/octet-stream``."""

_ARTIFACT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_LISTED = ("id", "name", "type", "description", "size", "created", "execution_id")
_UNSAFE_IN_NAME = re.compile(r"[\x00-\x1f\x7f/\\]+")
_NAME_LIMIT = 120
_CHARSET_TYPES = frozenset({"text/plain", "text/csv", "application/json"})


@dataclass(frozen=True)
class ArtifactBody:
    """One artifact's bytes and the headers to send them with."""

    data: bytes
    content_type: str
    disposition: str


class WorkspaceArtifacts:
    """Read-only access to the artifact stores of workspaces (one open store per workspace, reused)."""

    def __init__(self) -> None:
        self._stores: dict[Path, ArtifactStore] = {}
        self._lock = threading.Lock()

    def listing(self, workspace: Path) -> list[dict[str, Any]]:
        """The workspace's artifacts, newest first, as the sidebar lists them (no store: none)."""
        store = self._store(workspace)
        if store is None:
            return []
        return [{key: value for key, value in a.to_dict().items() if key in _LISTED} for a in store.list()]

    def body(self, workspace: Path, artifact_id: str, *, download: bool) -> ArtifactBody | None:
        """The artifact with this id (ids only, never names) and its headers; None when there is none.

        Raises:
            ArtifactError: its data is missing or damaged.
        """
        store = self._store(workspace)
        if store is None:
            return None
        try:
            artifact = store.get(artifact_id)
        except ArtifactError:
            return None
        if artifact.id != artifact_id:  # found by name: the URL names ids only
            return None
        data = store.read_bytes(artifact.id)
        return ArtifactBody(
            data, response_type(artifact.type), content_disposition(artifact, download=download)
        )

    def close(self) -> None:
        """Close every open store."""
        with self._lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()

    def _store(self, workspace: Path) -> ArtifactStore | None:
        path = workspace / ".codemode" / "artifacts.db"
        if not path.is_file():  # read-only use: never create a store that is not there
            return None
        with self._lock:
            store = self._stores.get(path)
            if store is None:
                store = self._stores[path] = ArtifactStore(path)
            return store


def valid_artifact_id(artifact_id: str) -> bool:
    """Whether ``artifact_id`` can be an artifact's id (the store makes 12 hex digits): never a path."""
    return _ARTIFACT_ID.fullmatch(artifact_id) is not None


def response_type(stored_type: str) -> str:
    """The Content-Type to send: the stored type when safe to show, else ``application/octet-stream``."""
    kind = stored_type.split(";")[0].strip().lower()
    if kind not in SAFE_TYPES:
        return "application/octet-stream"
    return f"{kind}; charset=utf-8" if kind in _CHARSET_TYPES else kind


def content_disposition(artifact: Artifact, *, download: bool) -> str:
    """``inline`` for a safe type shown in place, else ``attachment``; with a UTF-8 file name either way."""
    kind = artifact.type.split(";")[0].strip().lower()
    how = "inline" if kind in SAFE_TYPES and not download else "attachment"
    return f"{how}; filename*=UTF-8''{urllib.parse.quote(file_name(artifact), safe='')}"


def file_name(artifact: Artifact) -> str:
    """A file name for saving: the artifact's name (or id) made harmless, with an extension for its type."""
    base = (
        _UNSAFE_IN_NAME.sub("_", artifact.name or "").strip(" .")[:_NAME_LIMIT] or f"artifact-{artifact.id}"
    )
    kind = artifact.type.split(";")[0].strip().lower()
    extensions = mimetypes.guess_all_extensions(kind, strict=False)
    if any(base.lower().endswith(extension) for extension in extensions):
        return base
    return base + (mimetypes.guess_extension(kind, strict=False) or ".bin")
