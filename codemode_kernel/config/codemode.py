"""Which code-mode settings apply for a model: the Go design's override-not-merge rule, on by default.

1. the model's own ``codeMode``, used entirely;
2. otherwise ``defaults.codeMode``;
3. otherwise code mode is on, with the default settings.

Rule 3 deliberately differs from the Go design (where "neither" means off): code mode is what this project
is for, so a config must say ``"enabled": false`` to get classic tool calling. Lists are never merged: a
model that excludes ``[c]`` excludes only ``c``, whatever the defaults exclude, so each model's settings can
be read in one place.

``selectModel`` names another ``models`` entry (the model the agent asks which tools a request needs);
``check_select_models`` refuses a config whose ``selectModel`` names no entry, when it is loaded.
"""

from __future__ import annotations

from ..core.errors import ConfigError
from .jsonpath import join
from .models import CodeModeSettings, Config

__all__ = ["check_select_models", "resolve_code_mode"]

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


def check_select_models(config: Config, *, file: str | None = None) -> None:
    """Every ``codeMode.selectModel`` (in ``defaults`` and each model) names an entry of ``models``.

    Raises:
        ConfigError: naming the field, the unknown ref and the refs there are.
    """
    places = [("defaults.codeMode", config.defaults.code_mode)]
    places += [(join("models", i, "codeMode"), m.code_mode) for i, m in enumerate(config.models)]
    refs = [m.ref for m in config.models]
    for path, settings in places:
        ref = settings.select_model if settings is not None else None
        if ref is None or ref in refs:
            continue
        known = ", ".join(f'"{r}"' for r in refs)
        fix = (
            f'use one of {known}, or add a "models" entry with "ref": "{ref}"'
            if known
            else f'add a "models" entry with "ref": "{ref}" (the model that picks the tools), or remove it'
        )
        where = file or (str(config.settings_source) if config.settings_source else None)
        raise ConfigError(
            f'names no model: there is no "models" entry with "ref": "{ref}"',
            file=where,
            path=f"{path}.selectModel",
            fix=fix,
        )
