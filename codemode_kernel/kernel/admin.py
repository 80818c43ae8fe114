"""What a Jupyter admin sets for every Code Mode kernel, and how it yields to the user's own config.

An admin sets ``c.CodeModeKernel.default_timeout`` and ``c.CodeModeKernel.config_path`` (traitlets, in the
kernel's config file; docs/configuration.md); ``codemode.json`` stays the user's place. So what the user
wrote wins over what the admin set, and the admin's values fill in only what the user left unsaid:

The timeout of one execution, first found wins:
  1. the cell's ``%%codemode --timeout S`` (or the ``timeout`` an ``%%agent`` program asks for);
  2. the user's config: ``defaults.codeMode.timeout`` (for ``%%agent``, a model's own ``codeMode``);
  3. the admin's ``CodeModeKernel.default_timeout``;
  4. the built-in ``limits.DEFAULT_TIMEOUT`` (30 s).

The config file, first found wins (files are never merged):
  1. ``%codemode reload --config FILE``;
  2. the ``CODEMODE_CONFIG`` environment variable;
  3. the project's ``codemode.json`` (or ``.mcp.json``, ``.vscode/mcp.json``) in the kernel's working
     directory, then the user's ``~/.config/codemode/config.json``;
  4. the admin's ``CodeModeKernel.config_path``;
  5. the built-in demo servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import CodeModeSettings, find_config
from ..core.limits import DEFAULT_TIMEOUT

__all__ = ["AdminDefaults"]


@dataclass(frozen=True)
class AdminDefaults:
    """The kernel's traitlets as the tools read them: the admin's config file and default timeout."""

    config_path: Path | None = None
    """``CodeModeKernel.config_path``: the config used when the user has none; None when not set."""
    timeout: float = DEFAULT_TIMEOUT
    """``CodeModeKernel.default_timeout``: seconds per execution when the user's config names none."""

    def settings(self, settings: CodeModeSettings) -> CodeModeSettings:
        """``settings`` (from the user's config) with the admin's timeout if the config did not write one.

        Never above the config's ``maxTimeout``: a user who lowered it gets at most that.
        """
        timeout = min(self.timeout, settings.max_timeout)
        if "timeout" in settings.model_fields_set or settings.timeout == timeout:
            return settings
        return settings.model_copy(update={"timeout": timeout})

    def timeout_source(self, settings: CodeModeSettings) -> str:
        """Where the timeout in force comes from, given the config's own ``settings`` (for the status)."""
        if "timeout" in settings.model_fields_set:
            return "codeMode.timeout in the config"
        if self.timeout > settings.max_timeout:  # the admin's (or the built-in) default, lowered to it
            return "codeMode.maxTimeout in the config"
        if self.timeout != DEFAULT_TIMEOUT:
            return "c.CodeModeKernel.default_timeout"
        return "the built-in default"

    def config_file(self, chosen: Path | None, cwd: Path) -> Path | None:
        """The admin's file when neither ``chosen`` nor the search from ``cwd`` finds one; else None."""
        if self.config_path is None or chosen is not None:
            return None
        found, _origin = find_config(None, cwd=cwd)
        return self.config_path if found is None else None
