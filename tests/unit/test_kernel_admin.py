"""What a Jupyter admin sets (CodeModeKernel's traitlets) fills in only what the user's config leaves out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from codemode_kernel.config import CodeModeSettings, load_config, resolve_code_mode
from codemode_kernel.core.limits import DEFAULT_TIMEOUT
from codemode_kernel.kernel.admin import AdminDefaults

ADMIN = AdminDefaults(config_path=Path("/etc/codemode/codemode.json"), timeout=60.0)


def settings_of(tmp_path: Path, defaults: dict[str, object]) -> CodeModeSettings:
    """The code-mode settings of a codemode.json with these ``defaults``, as the kernel reads them."""
    config = tmp_path / "codemode.json"
    config.write_text(json.dumps({"mcpServers": {}, "defaults": defaults}))
    return resolve_code_mode(load_config(config, cwd=tmp_path, env={}, user_config_dir=tmp_path / "user"))


def test_the_users_timeout_wins_over_the_admins(tmp_path: Path) -> None:
    own = settings_of(tmp_path, {"codeMode": {"timeout": 7}})
    assert ADMIN.settings(own).timeout == 7
    assert ADMIN.timeout_source(own) == "codeMode.timeout in the config"


@pytest.mark.parametrize(
    "defaults", [{}, {"codeMode": {"grace": 2}}], ids=["no codeMode", "codeMode, no timeout"]
)
def test_the_admins_timeout_fills_in_where_the_config_names_none(
    tmp_path: Path, defaults: dict[str, object]
) -> None:
    own = settings_of(tmp_path, defaults)
    settings = ADMIN.settings(own)
    assert settings.timeout == 60
    assert settings.grace == own.grace  # the rest is the user's
    assert ADMIN.timeout_source(own) == "c.CodeModeKernel.default_timeout"


def test_the_admins_timeout_stays_within_the_users_max_timeout(tmp_path: Path) -> None:
    own = settings_of(tmp_path, {"codeMode": {"maxTimeout": 20}})
    assert ADMIN.settings(own).timeout == 20
    assert ADMIN.timeout_source(own) == "codeMode.maxTimeout in the config"
    above = settings_of(tmp_path, {"codeMode": {"maxTimeout": 90}})
    assert ADMIN.settings(above).timeout == 60
    assert ADMIN.timeout_source(above) == "c.CodeModeKernel.default_timeout"


def test_without_an_admin_the_built_in_default_holds(tmp_path: Path) -> None:
    own = settings_of(tmp_path, {})
    assert AdminDefaults().settings(own) is own
    assert own.timeout == DEFAULT_TIMEOUT
    assert AdminDefaults().timeout_source(own) == "the built-in default"


def test_the_admins_config_is_used_only_when_the_user_has_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEMODE_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    assert ADMIN.config_file(None, notebooks) == ADMIN.config_path
    assert AdminDefaults().config_file(None, notebooks) is None  # no admin: the demo servers

    assert ADMIN.config_file(tmp_path / "named.json", notebooks) is None  # %codemode reload --config

    monkeypatch.setenv("CODEMODE_CONFIG", str(tmp_path / "env.json"))
    assert ADMIN.config_file(None, notebooks) is None
    monkeypatch.delenv("CODEMODE_CONFIG")

    user = tmp_path / "xdg" / "codemode" / "config.json"
    user.parent.mkdir(parents=True)
    user.write_text("{}")
    assert ADMIN.config_file(None, notebooks) is None
    user.unlink()

    (notebooks / "codemode.json").write_text("{}")
    assert ADMIN.config_file(None, notebooks) is None


def test_the_documented_admin_snippet_sets_the_kernels_options(tmp_path: Path) -> None:
    """docs/configuration.md's ``codemode_kernel_config.py``, loaded as IPython loads it."""
    from traitlets.config.loader import PyFileConfigLoader

    from codemode_kernel.kernel.kernel import CodeModeKernel

    docs = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    snippet = re.search(r"```python\n(# codemode_kernel_config\.py\n.*?)```", docs, flags=re.DOTALL)
    assert snippet is not None, "the admin's snippet is gone from docs/configuration.md"
    (tmp_path / "codemode_kernel_config.py").write_text(snippet.group(1))
    config = PyFileConfigLoader("codemode_kernel_config.py", path=str(tmp_path)).load_config()
    options = dict(config.CodeModeKernel)
    assert options == {"default_timeout": 60, "config_path": "/etc/codemode/codemode.json"}
    assert set(options) <= set(CodeModeKernel.class_trait_names(config=True))
    assert CodeModeKernel.class_traits()["default_timeout"].default_value == DEFAULT_TIMEOUT
