"""The configuration as pydantic models: one server, the code-mode settings, a model entry, the whole config.

Files spell keys in camelCase (``envFile``, ``excludedTools``); Python code uses the snake_case field names.
The models check the shape of each entry (types, required fields, which fields go with which transport);
the loader does everything that needs the file system or the environment (``${VAR}``, ``envFile``, relative
paths) and turns validation errors into messages that point into the file.

Every field has a default, and keys a model does not know are reported as warnings instead of errors, so
a later release can add fields without breaking older files (or older releases reading newer files).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from ..core.errors import ConfigError
from ..core.limits import (
    DEFAULT_GRACE,
    DEFAULT_SESSION_IDLE,
    DEFAULT_TIMEOUT,
    DEFAULT_WAIT,
    LONGEST_TIMEOUT,
    MAX_GRACE,
    MAX_TIMEOUT,
    MAX_WAIT,
    MIN_GRACE,
    MIN_TIMEOUT,
)

__all__ = [
    "CodeModeSettings",
    "Config",
    "ConfigOrigin",
    "Defaults",
    "ExecutorResources",
    "ExecutorSettings",
    "ModelConfig",
    "OAuthSettings",
    "Relaxation",
    "SandboxSettings",
    "ServeSettings",
    "ServerConfig",
    "Transport",
]

Transport = Literal["stdio", "http", "sse"]
"""How codemode reaches a server: start a local process, or connect to a URL (Streamable HTTP or SSE)."""

ConfigOrigin = Literal["explicit", "env", "project", "user", "default"]
"""Where the config came from: ``--config``, ``CODEMODE_CONFIG``, the working directory, the user config, or
the built-in demo servers."""

# Strict numbers: JSON "30" (a string) is a mistake worth reporting, not something to coerce.
Seconds = Annotated[float, Field(strict=True, gt=0)]

# Spellings other tools use for Streamable HTTP.
_TRANSPORT_SPELLINGS = {"streamable-http": "http", "streamableHttp": "http", "streamable_http": "http"}

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _invalid(message: str, fix: str, field: str | None = None) -> PydanticCustomError:
    """Build a validation error that carries its fix (and the offending field, for model-level checks)."""
    context: dict[str, Any] = {"fix": fix}
    if field is not None:
        context["field"] = field
    return PydanticCustomError("config", message, context)


def _check_tool_ref(entry: str) -> str:
    parts = entry.split("/")
    if len(parts) > 2 or not all(parts):
        raise _invalid(
            f'"{entry}" is not a tool name', 'write "tool" (that tool on every server) or "server/tool"'
        )
    return entry


ToolRef = Annotated[str, AfterValidator(_check_tool_ref)]
"""An ``excludedTools`` entry: ``tool`` or ``server/tool``."""


def check_tool_pattern(entry: str) -> str:
    parts = entry.split("/")
    if len(parts) > 2 or not all(parts) or (len(parts) == 1 and entry == "*"):
        raise _invalid(
            f'"{entry}" is not a tool pattern',
            'write "tool" (that tool on every server), "server/tool", or "server/*" (every tool of a server)',
        )
    return entry


ToolPattern = Annotated[str, AfterValidator(check_tool_pattern)]
"""An ``approve``/``autoApprove`` entry: ``tool``, ``server/tool`` or ``server/*``."""


class ConfigModel(BaseModel):
    """Shared settings: camelCase keys in files, snake_case in Python, immutable once loaded.

    Numbers must be finite: Python's JSON parser reads ``NaN`` and ``Infinity``, and ``1e400`` as infinity,
    none of which is a usable timeout or size.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore", allow_inf_nan=False
    )


class OAuthSettings(ConfigModel):
    """How codemode signs in to a remote server with OAuth (docs/hub.md, "Remote servers and sign-in").

    Everything is optional: a server that asks for sign-in is discovered, and codemode registers itself
    with its authorization server (dynamic client registration) when no ``client_id`` is given.
    """

    client_id: str | None = Field(default=None, min_length=1)
    """A client registered ahead with the authorization server (an OAuth app); None: register on the fly."""
    client_secret: str | None = Field(default=None, min_length=1)
    """That client's secret, for a confidential client (write it as ``${VAR}``, not in the file)."""
    scopes: list[Annotated[str, Field(min_length=1, pattern=r"^[!#-\[\]-~]+$")]] = []
    """Scopes to ask for; empty: those the server asks for (WWW-Authenticate, then its metadata)."""
    client_metadata_url: str | None = None
    """An https URL where this client's metadata document is published (a Client ID Metadata Document),
    used as the client id by authorization servers that accept one."""
    callback_port: Annotated[int, Field(strict=True, ge=1, le=65535)] | None = None
    """The loopback port of the sign-in redirect (``http://127.0.0.1:PORT/callback``), for a client
    registered with one fixed redirect URI; None: a random free port."""

    @field_validator("client_metadata_url")
    @classmethod
    def _check_metadata_url(cls, value: str | None) -> str | None:
        from urllib.parse import urlparse

        if value is not None:
            parsed = urlparse(value)
            if parsed.scheme != "https" or parsed.path in ("", "/"):
                raise _invalid(
                    "must be an https URL with a path",
                    'write where the client metadata document is published, e.g. "https://example.com/client.json"',
                )
        return value

    @model_validator(mode="after")
    def _check_secret(self) -> OAuthSettings:
        if self.client_secret is not None and self.client_id is None:
            raise _invalid(
                "has a clientSecret but no clientId",
                'add "clientId": the id of the client that secret belongs to',
                field="clientSecret",
            )
        return self


class ServerConfig(ConfigModel):
    """One MCP server: a local process (stdio) or a remote endpoint (http, sse).

    After loading, ``env`` holds the expanded values with the ``envFile`` entries merged in (explicit ``env``
    wins), and ``cwd`` / ``env_file`` are absolute. A disabled server is kept as written (not expanded), so it
    may refer to variables that are not set.
    """

    name: str
    transport: Transport = Field(default="stdio", validation_alias="type", serialization_alias="type")
    command: str | None = Field(default=None, min_length=1)
    args: list[str] = []
    env: dict[str, str] = {}
    env_file: Path | None = None
    cwd: Path | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    oauth: OAuthSettings | None = None
    """How to sign in (http and sse servers); None: sign in as the server asks, if it does."""
    disabled: StrictBool = False
    timeout: Seconds | None = None
    """Default timeout of one tool call, in seconds; None leaves it to the caller."""
    connect_timeout: Seconds | None = None
    """Seconds to start (or reach) the server and list its tools; None: ``defaults.connectTimeout`` (60)."""
    max_result_bytes: Annotated[int, Field(strict=True, ge=4096)] | None = None
    """The longest message a stdio server may send (one line of JSON: a tool result's size); a longer one
    fails its call. None: 32 MiB (``hub.stdio.DEFAULT_MAX_RESULT_BYTES``)."""
    prefix: str = ""
    """Prepended to this server's function names (``gh_`` turns ``create_issue`` into ``gh_create_issue``)."""
    sampling: Literal["ask", "allow", "deny"] = "ask"
    """When the server asks the configured model for a completion (``sampling/createMessage``) during a
    call: ``ask`` the person each time, ``allow`` without asking (a loosened protection), or ``deny``."""
    protocol: str = "legacy"
    """The MCP SDK Client's ``mode``: "legacy" (initialize handshake, works with every server), "auto" (probe
    the 2026-07-28 protocol first, which can cost 10 s against some servers) or a protocol version."""

    @model_validator(mode="before")
    @classmethod
    def _infer_transport(cls, data: Any, info: ValidationInfo) -> Any:
        # A file says "type" (or nothing: then a url means http). Python code may use the field name; in a
        # file, a "transport" key is only an unknown key and must not steer the inference.
        if not isinstance(data, dict):
            return data
        from_file = bool(info.context and info.context.get("file"))
        key = "transport" if "transport" in data and not from_file else "type"
        value = data.get(key)
        if value is None:
            return {**data, key: "http" if data.get("url") is not None else "stdio"}
        if isinstance(value, str) and value in _TRANSPORT_SPELLINGS:
            return {**data, key: _TRANSPORT_SPELLINGS[value]}
        return data

    @field_validator("protocol")
    @classmethod
    def _check_protocol(cls, value: str) -> str:
        if value in ("legacy", "auto"):
            return value
        # Imported here: only a pinned version needs the SDK's list, and importing it takes a while.
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

        if value in MODERN_PROTOCOL_VERSIONS:
            return value
        versions = ", ".join(f'"{v}"' for v in MODERN_PROTOCOL_VERSIONS)
        if value in HANDSHAKE_PROTOCOL_VERSIONS:
            raise _invalid(
                f'"{value}" is negotiated by the initialize handshake, not pinned',
                'write "legacy" (the handshake picks that version by itself)',
            )
        raise _invalid(f'unknown protocol "{value}"', f'write "legacy", "auto" or one of {versions}')

    @model_validator(mode="after")
    def _check_transport_fields(self) -> ServerConfig:
        if self.command is not None and self.url is not None:
            raise _invalid(
                'has both "command" and "url"',
                'keep "command" to start a local server, or "url" to connect to a remote one, not both',
            )
        if self.transport == "stdio":
            if self.command is None:
                raise _invalid(
                    "missing",
                    'add "command": the program that starts the server (or "url" for a remote server)',
                    field="command",
                )
            for key, given in (("headers", self.headers), ("oauth", self.oauth)):
                if given:
                    raise _invalid(
                        'only applies to "http" and "sse" servers',
                        f'remove "{key}", or give the server a "url" instead of a "command"',
                        field=key,
                    )
            return self
        if self.url is None:
            raise _invalid(
                "missing",
                f'add "url": the MCP endpoint of this "{self.transport}" server (https://...), '
                'or write "type": "stdio" with a "command"',
                field="url",
            )
        local_only = {
            "args": self.args,
            "env": self.env,
            "envFile": self.env_file,
            "cwd": self.cwd,
            "maxResultBytes": self.max_result_bytes,
        }
        for key, value in local_only.items():
            if value:
                raise _invalid(
                    f'only applies to stdio servers (this one is "{self.transport}")',
                    f'remove "{key}": a remote server is not started by codemode',
                    field=key,
                )
        return self


class SandboxSettings(ConfigModel):
    """How far a code-mode worker is confined (docs/threat-model.md); the defaults are the safe side.

    Paths in ``writable`` and ``hidden`` are relative to the workspace unless absolute; ``hidden`` adds to
    the built-in list (secret stores under the home, the kernel's config files), never replaces it.
    """

    network: StrictBool = False
    writable: list[str] = []
    hidden: list[str] = []
    memory_mb: Annotated[int, Field(strict=True, ge=64)] | None = 1024
    file_size_mb: Annotated[int, Field(strict=True, ge=1)] | None = 256
    open_files: Annotated[int, Field(strict=True, ge=16)] | None = 256
    max_processes: Annotated[int, Field(strict=True, ge=1)] | None = 64


class ExecutorResources(ConfigModel):
    """What one program reserves on a Ray cluster: Ray's scheduler places it on a node that has this free.

    These are Ray's logical resources (a program is not stopped for using more); the sandbox's limits
    (``codeMode.sandbox``) are what the node enforces.
    """

    cpus: Annotated[float, Field(strict=False, ge=0, le=1024)] = 1.0
    memory_mb: Annotated[int, Field(strict=True, ge=0)] | None = None
    gpus: Annotated[float, Field(strict=False, ge=0, le=64)] = 0.0
    custom: dict[str, Annotated[float, Field(strict=False, ge=0)]] = {}
    """Custom Ray resources a node must offer (``{"bigmem": 1}``), as the cluster's nodes declare them."""


class ExecutorSettings(ConfigModel):
    """Where programs run: worker processes on this machine (``local``), or on the nodes of a Ray cluster.

    ``address`` is what ``ray.init`` takes: ``"auto"`` (a cluster started on this machine with ``ray
    start``), ``"HOST:PORT"`` (its head's GCS) or ``"ray://HOST:10001"`` (Ray Client); None starts nothing
    and means ``"auto"``. docs/scale-out.md.
    """

    backend: Literal["local", "ray"] = "local"
    address: Annotated[str, Field(strict=True, min_length=1)] | None = None
    resources: ExecutorResources = ExecutorResources()


class CodeModeSettings(ConfigModel):
    """Whether code mode is on, which tools stay classic tools, and how long one execution may run.

    The defaults describe code mode switched on, so ``"codeMode": {}`` means "on, with the defaults".
    """

    enabled: StrictBool = True
    excluded_tools: list[ToolRef] = []
    """``tool`` (any server) or ``server/tool``; excluded tools stay classic tools for the agent."""
    max_timeout: Annotated[float, Field(strict=True, ge=MIN_TIMEOUT, le=LONGEST_TIMEOUT)] = MAX_TIMEOUT
    """The longest timeout a program may ask for; the worker's CPU-time limit follows it, so raising it
    above ``MAX_TIMEOUT`` loosens the sandbox (a relaxation, config/relaxations.py)."""
    timeout: Annotated[float, Field(strict=True, ge=MIN_TIMEOUT, le=LONGEST_TIMEOUT)] = Field(
        default_factory=lambda data: min(DEFAULT_TIMEOUT, data.get("max_timeout", MAX_TIMEOUT))
    )
    """Seconds one code execution may run unless it asks for another limit; at most ``max_timeout``
    (``DEFAULT_TIMEOUT`` when not written, or ``max_timeout`` when that is lower: lowering the maximum
    alone is no mistake)."""
    grace: Annotated[float, Field(strict=True, ge=MIN_GRACE, le=MAX_GRACE)] = DEFAULT_GRACE
    """Seconds between SIGINT and SIGKILL when an execution reaches its deadline."""
    preload: list[str] = []
    """Modules the pre-started worker process imports once (``["pandas", "numpy"]``)."""
    artifact_threshold_bytes: Annotated[int, Field(strict=True, ge=0)] | None = 64 * 1024
    """A tool result whose JSON is larger is stored as an artifact; its call record keeps a preview and the
    artifact's id. None keeps every result whole in the records."""
    sandbox: SandboxSettings = SandboxSettings()
    approve: list[ToolPattern] = []
    """Tools whose calls from a program wait for a person's decision, besides those their server marks
    destructive (``destructiveHint``); docs/approvals.md."""
    auto_approve: list[ToolPattern] = []
    """Tools never asked about, destructive or not: the ones a user trusts."""
    offer_in_classic: StrictBool = False
    """With ``enabled: false`` (classic tool calling), offer ``execute_python`` too, and the artifacts as
    ordinary tools (seed 004): the model calls tools one by one and writes a program when that is better."""
    select_model: Annotated[str, Field(strict=True, min_length=1)] | None = None
    """The ``ref`` of a ``models`` entry the agent asks which tools a request needs, when the tools are too
    many for full stubs (a cheaper model will do); None: the agent's own model (docs/agent.md)."""

    @model_validator(mode="after")
    def _check_timeout_within_max(self) -> CodeModeSettings:
        if self.timeout > self.max_timeout:
            raise _invalid(
                f"{self.timeout:g} seconds is above maxTimeout ({self.max_timeout:g})",
                f'lower "timeout" to {self.max_timeout:g} or less, or raise "maxTimeout" to '
                f"{self.timeout:g} or more (up to {LONGEST_TIMEOUT:g})",
                field="timeout",
            )
        return self

    def is_excluded(self, server: str, tool: str) -> bool:
        """Whether ``tool`` of ``server`` stays out of code mode (listed as ``tool`` or ``server/tool``)."""
        return tool in self.excluded_tools or f"{server}/{tool}" in self.excluded_tools


class ServeSettings(ConfigModel):
    """How much ``codemode serve`` runs at once and how long it keeps a session (docs/serve.md).

    Programs mostly wait on tool calls, so more may run than there are cores; each running program is one
    worker process (its memory limit is ``codeMode.sandbox.memoryMb``).
    """

    pool_size: Annotated[int, Field(strict=True, ge=1, le=256)] = 8
    """Programs that run at the same time, over every client."""
    queue_limit: Annotated[int, Field(strict=True, ge=0, le=10_000)] = 64
    """Programs that may wait for a free place; one more is refused at once with an error saying so."""
    session_idle: Seconds = DEFAULT_SESSION_IDLE
    """Seconds a session (``execute_python``'s ``session``) may go unused before its worker is ended."""
    max_sessions: Annotated[int, Field(strict=True, ge=1, le=1024)] = 16
    """Sessions alive at once, over every client; a new one beyond is refused until one ends or expires."""
    wait: Annotated[float, Field(strict=True, ge=0, le=MAX_WAIT)] = DEFAULT_WAIT
    """Seconds ``execute_python`` waits for its program unless the call says ``wait_s``; one still running
    then is answered ``running`` and goes on (``wait_execution``): keep it below the client's tool timeout."""


class Defaults(ConfigModel):
    """Settings that apply to every model unless the model brings its own."""

    code_mode: CodeModeSettings | None = None
    serve: ServeSettings = ServeSettings()
    """``codemode serve``'s limits."""
    connect_timeout: Seconds | None = None
    """Seconds a server may take to connect when its entry has no ``connectTimeout``; None: 60."""
    start_wait: Seconds | None = None
    """Seconds start-up waits at least, after a server got ready, for those still connecting; None: 5."""


class ModelConfig(ConfigModel):
    """One LLM the agent can use, named by ``ref``.

    ``api_key_env`` names the environment variable that holds the key, so the key itself never sits in a
    config file. A ``code_mode`` here replaces ``defaults.codeMode`` entirely (no merging).
    """

    ref: str = Field(min_length=1)
    provider: Literal["openai", "anthropic"] | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    code_mode: CodeModeSettings | None = None

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            # The value is not repeated: people paste the key itself here.
            raise _invalid(
                "is not the name of an environment variable",
                'write the variable\'s name, e.g. "OPENAI_API_KEY", and export the key in that variable',
            )
        return value


class Relaxation(ConfigModel):
    """A setting that loosens a protection (config/relaxations.py): where it is and what it lets happen."""

    file: str
    setting: str
    """The JSON path, as in messages: ``defaults.codeMode.sandbox.network``."""
    effect: str

    def describe(self) -> str:
        """``file: setting: effect``, one line for doctor, status and ``codemode trust``."""
        return f"{self.file}: {self.setting}: {self.effect}"


class Config(ConfigModel):
    """A loaded configuration: the servers in file order, code-mode settings, models, and where it came from.

    ``source`` is the file the servers were read from and ``settings_source`` the file ``defaults`` and
    ``models`` were read from (the same file, or the user config when the servers came from another tool's
    file). ``warnings`` holds the non-fatal findings (unknown keys...), for ``codemode doctor`` to show.
    """

    servers: dict[str, ServerConfig] = {}
    defaults: Defaults = Defaults()
    models: list[ModelConfig] = []
    executor: ExecutorSettings = ExecutorSettings()
    """Where programs run (local worker processes, or a Ray cluster)."""
    workspace: Path
    source: Path | None = None
    settings_source: Path | None = None
    origin: ConfigOrigin = "default"
    warnings: list[str] = []
    relaxations: list[Relaxation] = []
    """Every setting in force that loosens a protection, with its file (trusted or from the user config)."""

    @property
    def enabled_servers(self) -> dict[str, ServerConfig]:
        """The servers to connect to: every server not marked ``disabled``, in file order."""
        return {name: server for name, server in self.servers.items() if not server.disabled}

    def get_model(self, ref: str) -> ModelConfig:
        """Return the model entry named ``ref``; a ConfigError that lists the known refs if there is none."""
        for model in self.models:
            if model.ref == ref:
                return model
        known = ", ".join(f'"{m.ref}"' for m in self.models)
        where = str(self.settings_source) if self.settings_source else None
        if known:
            fix = f'use one of {known}, or add an entry with this ref to "models"'
        else:
            fix = 'add {"ref": "' + ref + '", "provider": ..., "model": ...} to "models"'
        raise ConfigError(f'no model with ref "{ref}"', file=where, path="models", fix=fix)
