"""Artifact: what is known about one stored piece of data, without the data."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from ..core.records import ArtifactMetadata

__all__ = ["Artifact", "ArtifactInfo"]


@dataclass(frozen=True)
class Artifact:
    """The metadata of one artifact; ``ArtifactStore.read_bytes(a.id)`` or ``load(a.id)`` gives its data.

    Attributes:
        id: unique, made by the store (12 hex digits).
        name: the name it was stored under, or None; ``get(name)`` finds the newest with that name.
        type: its MIME type (``application/json``, ``text/csv``, ``image/png``...).
        description: free text, possibly empty.
        size: bytes of data.
        created: when it was stored, UTC, ISO 8601.
        sha256: hex digest of the data; artifacts with the same data share one stored copy.
        execution_id: the execution that made it (None when made outside one).
    """

    id: str
    name: str | None
    type: str
    description: str
    size: int
    created: str
    sha256: str
    execution_id: str | None

    def to_dict(self) -> ArtifactMetadata:
        """The metadata as a JSON-serialisable dict (what a program and a result's ``artifacts`` hold)."""
        return ArtifactMetadata(
            id=self.id,
            name=self.name,
            type=self.type,
            description=self.description,
            size=self.size,
            created=self.created,
            sha256=self.sha256,
            execution_id=self.execution_id,
        )


class ArtifactInfo(dict[str, Any]):
    """An artifact's metadata as the kernel's ``artifacts`` gives it: the dict ``list_artifacts()`` gives.

    Its keys are ``id``, ``name``, ``type``, ``description``, ``size``, ``created``, ``sha256`` and
    ``execution_id``, as in a program, so that code moves between a notebook and a program unchanged.

    Reading a key as an attribute (``a.name``), as when the kernel gave objects, still works but warns.
    """

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_") or key not in self:
            raise AttributeError(f"{type(self).__name__} has no attribute {key!r}")
        warnings.warn(
            f"artifact metadata is a dict, as in a program's list_artifacts(): write a[{key!r}], not a.{key}",
            DeprecationWarning,
            stacklevel=2,
        )
        return self[key]

    @classmethod
    def of(cls, artifact: Artifact) -> ArtifactInfo:
        """The metadata of a stored artifact."""
        return cls(artifact.to_dict())
