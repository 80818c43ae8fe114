"""Keep ``codemode serve`` from starting itself when the config it reads lists ``codemode serve``."""

from __future__ import annotations

from ..config import Config

__all__ = ["without_self"]


def without_self(config: Config) -> tuple[Config, list[str]]:
    """``config`` without the servers that are this command; their names. None yet."""
    return config, []
