"""The one error the sandbox raises (defined with the others in ``codemode_kernel.errors``)."""

from __future__ import annotations

from ...errors import SandboxError

__all__ = ["SandboxError"]
