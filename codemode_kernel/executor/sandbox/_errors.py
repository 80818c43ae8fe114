"""The one error the sandbox raises: a layer that should have worked did not."""

from __future__ import annotations

from ...errors import CodeModeError

__all__ = ["SandboxError"]


class SandboxError(CodeModeError):
    """A protection that ``probe()`` reported available failed while being applied.

    The process that raised it is half-confined and must not run user code: the runner reports the
    execution as ``internal`` and shows the message (it names the layer and the system call's errno).
    """

    def __init__(self, layer: str, reason: str) -> None:
        self.layer = layer
        self.reason = reason
        super().__init__(f"sandbox layer {layer!r} failed: {reason}")
