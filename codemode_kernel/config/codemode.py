"""Which code-mode settings apply for a model: the Go design's override-not-merge rule, on by default.

1. the model's own ``codeMode``, used entirely;
2. otherwise ``defaults.codeMode``;
3. otherwise code mode is on, with the default settings.

Rule 3 deliberately differs from the Go design (where "neither" means off): code mode is what this project
is for, so a config must say ``"enabled": false`` to get classic tool calling. Lists are never merged: a
model that excludes ``[c]`` excludes only ``c``, whatever the defaults exclude, so each model's settings can
be read in one place.
"""

from __future__ import annotations

from .models import CodeModeSettings, Config

__all__ = ["resolve_code_mode"]

_DEFAULT = CodeModeSettings()


def resolve_code_mode(config: Config, model_ref: str | None = None) -> CodeModeSettings:
    """Return the code-mode settings in force for ``model_ref`` (None: no model chosen, so the defaults).

    An unknown ``model_ref`` is a ConfigError that lists the refs the config knows.
    """
    if model_ref is not None:
        own = config.get_model(model_ref).code_mode
        if own is not None:
            return own
    return config.defaults.code_mode or _DEFAULT
