"""Artifacts: data that programs and tool calls produce, stored in the workspace's ``.codemode/``.

Only the names below are public; the modules of this package are not.
"""

from .artifact import Artifact, ArtifactInfo
from .journal import JournalChoice
from .store import ArtifactStore

__all__ = ["Artifact", "ArtifactInfo", "ArtifactStore", "JournalChoice"]
