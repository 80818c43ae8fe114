"""The one error the sandbox raises (defined with the others in ``codemode_kernel.core.errors``)."""

from __future__ import annotations

from ...core.errors import SandboxError

__all__ = ["SandboxError"]
