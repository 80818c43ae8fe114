"""Toolbox: every configured MCP tool as a typed Python function, for people and programs.

    with Toolbox.from_config() as tb:
        tb.tools.get_weather(city="Oslo", unit="celsius")

``tb.tools`` holds tool functions and nothing else, so a tool called ``close`` or ``stubs`` cannot clash
with a method. It is also indexable by the original tool name (``tb.tools["get-weather"]``) and by
``"server/tool"``; ``tb.by_server["weather"]`` holds one server's tools; ``tb.atools`` has the async
twins (``await tb.atools.get_weather(...)``, usable with ``asyncio.gather``).

A call of these functions is the person's own (a cell, a script): never asked about, even for a
destructive tool, since the person is the one deciding. Called by code that runs for someone else (a
notebook tool's function run for a program: ``approvals.acting_for``), it is that caller's call and is
asked about (docs/approvals.md).

``start()`` returns once the servers are connected, or after a short wait (``ToolHub.start_wait``)
with slow ones still connecting behind: their tools appear as each one is ready, and naming such a tool
(``tb.tools.slow_tool``) or server (``tb.by_server["slow"]``) waits for them. ``wait_for_servers()``
waits for all of them.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from .approvals import PERSONS_OWN_CALL, ApprovalCheck, ApprovalPolicy, current_check
from .artifacts import ArtifactStore
from .calllog import CallLog
from .config import CodeModeSettings, Config, load_config, resolve_code_mode
from .config.discovery import USER_CONFIG_FILE, user_config_dir
from .core.errors import ServerToolCollisionError, ToolNameCollisionError
from .core.toolspec import ToolSpec
from .hub import DEFAULT_CONNECT_TIMEOUT, DEFAULT_START_WAIT, ServerStatus, ToolHub
from .hub.reporting import acall_reporting, call_reporting
from .hub.validation import ArgumentValidator
from .shapes import ShapeStore
from .typegen import (
    ToolModel,
    build_tool_models,
    function_name,
    make_async_tool_function,
    make_tool_function,
    render_stubs,
)
from .worker.tools_module import HELPER_NAMES

__all__ = ["RESERVED_NAMES", "ToolNamespace", "Toolbox"]

_F = TypeVar("_F", bound=Callable[..., Any])
log = logging.getLogger(__name__)

_MODULE = "codemode_kernel.tools"
"""The ``__module__`` the kernel's tool functions report."""

RESERVED_NAMES = frozenset(
    {
        "tools",
        "artifacts",
        "execute_python",
        "wait_execution",
        "cancel_execution",
        "list_executions",
        *HELPER_NAMES,
    }
)
"""Names code mode defines itself, in a program (the worker's helpers), a notebook (``tools``,
``artifacts``) or for a model (``execute_python`` and the tools that come back to a program it left
running, ``agent/running.py``): a tool converting to one of them gets a trailing
underscore, as a keyword does, and a warning (``parallel`` is ``parallel_()``)."""


class ToolNamespace:
    """A namespace of tool functions: attribute access by Python name, indexing by any name.

    ``late``, when given, is asked for a name the namespace lacks (a tool of a server still
    connecting): it returns the function once that server is ready, or None.
    """

    def __init__(
        self,
        functions: dict[str, Callable[..., Any]],
        aliases: dict[str, str] | None = None,
        *,
        late: Callable[[str], Callable[..., Any] | None] | None = None,
    ) -> None:
        self.__functions = dict(functions)
        self.__aliases = dict(aliases or {})
        self.__late = late

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):  # private and dunder probes (IPython's display, copy...) never wait
            raise AttributeError(name)
        try:
            return self.__functions[name]
        except KeyError:
            found = self.__late(name) if self.__late is not None else None
            if found is None:
                raise AttributeError(self.__missing(name)) from None
            return found

    def __getitem__(self, key: str) -> Callable[..., Any]:
        name = self.__aliases.get(key, key)
        try:
            return self.__functions[name]
        except KeyError:
            found = self.__late(key) if self.__late is not None else None
            if found is None:
                raise KeyError(self.__missing(key)) from None
            return found

    def __missing(self, name: str) -> str:
        close = difflib.get_close_matches(name, [*self.__functions, *self.__aliases], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"no tool named {name!r}{hint}"

    def __contains__(self, key: object) -> bool:
        return key in self.__functions or key in self.__aliases

    def __iter__(self) -> Iterator[Callable[..., Any]]:
        return iter(self.__functions.values())

    def __len__(self) -> int:
        return len(self.__functions)

    def __dir__(self) -> list[str]:
        return sorted(self.__functions)

    def __repr__(self) -> str:
        names = ", ".join(self.__functions) or "no tools"
        return f"<tools: {names}>"


class Toolbox:
    """The configured MCP servers, connected, with their tools as typed functions.

    Start it with ``with`` (or ``start()``/``close()``; ``async with`` works too). Servers that fail
    to connect are reported by ``status()`` and leave the others usable; servers slow to connect go
    on connecting in the background (see the module's docstring).
    """

    def __init__(self, config: Config, *, reserved: frozenset[str] = RESERVED_NAMES) -> None:
        self.config = config
        state_dir = config.workspace / ".codemode"
        # The call log is the hub's, set up here where the config is known: results over the config's
        # artifactThresholdBytes go to the workspace's artifact store (whoever runs programs reads it).
        code_mode = resolve_code_mode(config, None)
        call_log = CallLog(
            spill_dir=state_dir,
            artifacts=ArtifactStore.for_workspace(config.workspace),
            max_result_bytes=code_mode.artifact_threshold_bytes,
        )
        self.hub = ToolHub(
            [cfg for cfg in config.servers.values()],
            state_dir=state_dir,
            call_log=call_log,
            approvals=ApprovalPolicy(code_mode.approve, code_mode.auto_approve),
            connect_timeout=config.defaults.connect_timeout or DEFAULT_CONNECT_TIMEOUT,
            start_wait=config.defaults.start_wait or DEFAULT_START_WAIT,
            workspace=config.workspace,
        )
        self.hub.asking.model = self._sampling_model
        self._inferable: frozenset[tuple[str, str]] = frozenset()
        """The tools without an outputSchema: their results' shapes are inferred (``shapes``)."""
        self.shapes = ShapeStore.for_workspace(
            config.workspace, accept=lambda server, tool: (server, tool) in self._inferable
        )
        """Result shapes inferred from calls (``.codemode/shapes.json``): stubs and ``help()`` show them."""
        call_log.subscribe(self.shapes.observe)
        self._reserved = reserved
        self.models: list[ToolModel] = []
        self.tools = ToolNamespace({})
        self.atools = ToolNamespace({})
        self.by_server: dict[str, ToolNamespace] = {}
        self._built_version = -1
        self._own_models: dict[frozenset[str], tuple[int, list[ToolModel]]] = {}
        """Tool models for a model's own ``excludedTools`` (``models_for``), by exclusion list, with the
        tools version they were built for."""
        self._rebuilding = threading.Lock()  # the hub's thread (a server got ready) and the caller's
        self.hub.on_tools_changed(self._rebuild_after_change)

    def _sampling_model(self) -> Any:
        """The model a server's sampling request is answered with: the config's first (``open_model``)."""
        from .llm import open_model

        return open_model(self.config, None)

    @classmethod
    def from_config(cls, path: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Toolbox:
        """Find and load the configuration (see docs/configuration.md) and make a Toolbox from it."""
        return cls(load_config(path, cwd=cwd))

    @property
    def artifacts(self) -> ArtifactStore:
        """The workspace's artifact store (``.codemode/artifacts.db``): stored values and large results."""
        store = self.hub.call_log.artifacts
        assert store is not None  # made in __init__
        return store

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> Toolbox:
        """Connect every server and build the tool functions.

        Returns when every server is ready or has failed, or, once some are ready, after a short wait
        (``ToolHub.start``) with slow servers still connecting in the background.

        Raises:
            ServerToolCollisionError: two tools map to one Python name (a ``ConfigError`` and a
                ``ToolNameCollisionError``); nothing stays connected.
        """
        try:
            self.hub.start()
            self._rebuild()
        except BaseException:  # a collision, or an interrupt while connecting: leave nothing running
            self.hub.close()
            raise
        return self

    async def astart(self) -> Toolbox:
        """Async twin of ``start``."""
        try:
            await self.hub.astart()
            self._rebuild()
        except BaseException:
            await self.hub.aclose()
            raise
        return self

    @property
    def pending(self) -> list[str]:
        """The servers still connecting in the background, whose tools are not functions yet."""
        return self.hub.pending

    def wait_for_servers(self, until: Callable[[], bool] | None = None) -> None:
        """Wait for the servers still connecting (each at most its ``connectTimeout``).

        ``until`` ends the wait as soon as it returns True (it is asked as each server finishes).
        """
        self.hub.wait_for_servers(until)
        # Each server that got ready rebuilt the functions already (on_tools_changed); this only raises
        # what that listener could just log: a tool of a late server whose name collides.
        self._rebuild()

    async def await_servers(self, until: Callable[[], bool] | None = None) -> None:
        """Async twin of ``wait_for_servers``."""
        await self.hub.await_servers(until)
        self._rebuild()  # see wait_for_servers

    def close(self) -> None:
        """Disconnect every server and write the inferred result shapes."""
        self.hub.close()
        self.shapes.close()

    async def aclose(self) -> None:
        """Async twin of ``close``."""
        await self.hub.aclose()
        self.shapes.close()

    def __enter__(self) -> Toolbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Toolbox:
        return await self.astart()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- what is there ----------------------------------------------------------------------------

    def status(self) -> list[ServerStatus]:
        """Each configured server's state, tool count, error and stderr log."""
        return self.hub.status()

    @property
    def tools_version(self) -> int:
        """Changes whenever the tools' Python faces do: a server's tools changed, or an inferred shape did.

        Whoever built something from ``models`` (a worker's tools, a description) compares it to rebuild.
        """
        return self.hub.tools_version + self.shapes.version

    def refresh(self, settle: float = 1.0) -> None:
        """Bring ``models`` and the functions up to date with the inferred shapes (and the servers' tools).

        Waits up to ``settle`` seconds for results still being read for their shape, so the calls of one
        cell show in the next; cheap when nothing changed.
        """
        self.shapes.settle(settle)
        self._rebuild()

    def stubs(self, *, imports: bool = True) -> str:
        """Python stub source of every tool (valid Python; what an LLM reads)."""
        self._rebuild()
        return render_stubs(self.models, imports=imports)

    def models_for(self, settings: CodeModeSettings) -> list[ToolModel]:
        """The tools that are functions in programs run under ``settings`` (a model's own ``codeMode``).

        ``models`` (the namespace's functions) follows ``defaults.codeMode``; a model with its own
        ``excludedTools`` gets its own list (the Go design's override: a tool the defaults exclude but the
        model does not is a function in that model's programs). Built once per tool set and list.

        Raises:
            ToolNameCollisionError: two tools this model keeps map to one Python name.
        """
        self._rebuild()
        excluded = frozenset(settings.excluded_tools)
        if excluded == frozenset(resolve_code_mode(self.config, None).excluded_tools):
            return self.models
        version = self.tools_version
        cached = self._own_models.get(excluded)
        if cached is None or cached[0] != version:
            specs = [s for s in self.hub.tool_specs() if not settings.is_excluded(s.server, s.name)]
            cached = (version, self._build_models(specs))
            self._own_models[excluded] = cached
        return cached[1]

    def tool_descriptors(self, models: list[ToolModel] | None = None) -> list[dict[str, Any]]:
        """Each tool as JSON (its spec plus its Python name): how a worker process learns the tools.

        ``models``: the tools to describe (``models_for(settings)``); by default ``models``.
        """
        return [m.descriptor() for m in (self.models if models is None else models)]

    def call(self, name: str, /, **arguments: Any) -> Any:
        """Call a tool by Python name, original name or ``server/tool``."""
        return self.tools[name](**arguments)

    # -- building the functions -------------------------------------------------------------------

    def _rebuild_after_change(self) -> None:
        """The hub's listener (on its thread): rebuild the functions when a server's tools changed.

        A collision is not raised here, where nobody could act on it (it became a traceback in the log):
        the functions stay as they were, and the next caller that asks for them (``start``,
        ``wait_for_servers``, ``refresh``, naming a tool) gets the error, once, with the fix.
        """
        try:
            self._rebuild()
        except ToolNameCollisionError as exc:
            log.debug("tools changed; their functions wait for a collision to be fixed: %s", exc)

    def _rebuild(self) -> None:
        with self._rebuilding:
            version = self.tools_version
            if self._built_version != version:
                self._build()
                self._built_version = version

    def _build(self) -> None:
        code_mode = resolve_code_mode(self.config, None)
        every = self.hub.tool_specs()
        self._inferable = frozenset((s.server, s.name) for s in every if s.output_schema is None)
        specs = [s for s in every if not code_mode.is_excluded(s.server, s.name)]
        self.models = self._build_models(specs)
        for model in self.models:
            if model.renamed_from is not None:
                log.warning("%s", model.warnings[-1])
        sync_functions = {m.function_name: self._sync_function(m) for m in self.models}
        async_functions = {m.function_name: self._async_function(m) for m in self.models}
        aliases = _aliases(self.models)
        self.tools = ToolNamespace(sync_functions, aliases, late=lambda name: self._late("tools", name))
        self.atools = ToolNamespace(async_functions, aliases, late=lambda name: self._late("atools", name))
        self.by_server = _ServerTools(
            {
                server: ToolNamespace(
                    {
                        m.function_name: sync_functions[m.function_name]
                        for m in self.models
                        if m.spec.server == server
                    },
                    {m.spec.name: m.function_name for m in self.models if m.spec.server == server},
                )
                for server in dict.fromkeys(m.spec.server for m in self.models)
            },
            late=self._late_server,
        )

    def _build_models(self, specs: list[ToolSpec]) -> list[ToolModel]:
        prefixes = {name: cfg.prefix for name, cfg in self.config.servers.items() if cfg.prefix}
        try:
            return build_tool_models(
                self.shapes.apply(specs), check=ArgumentValidator, prefixes=prefixes, reserved=self._reserved
            )
        except ToolNameCollisionError as exc:
            raise collision_in_config(exc, self.config) from None

    def _late_server(self, server: str) -> ToolNamespace | None:
        """``by_server[server]`` while that server is still connecting: wait for it, as for its tools."""
        if server not in self.pending or self.hub.loop_thread.in_loop_thread():
            return None
        self.wait_for_servers(until=lambda: server not in self.pending)
        return self.by_server.get(server)

    def _late(self, namespace: str, name: str) -> Callable[..., Any] | None:
        """A tool named before its server finished connecting: wait for it (never on the hub's thread)."""
        if not self.hub.pending or self.hub.loop_thread.in_loop_thread():
            return None
        self.wait_for_servers(until=lambda: name in getattr(self, namespace))
        current: ToolNamespace = getattr(self, namespace)
        if name not in current:
            return None  # its server failed, or no server has it: the caller says so
        return current[name]

    def _sync_function(self, model: ToolModel) -> Callable[..., Any]:
        hub, server, tool = self.hub, model.spec.server, model.spec.name
        function = make_tool_function(
            model,
            lambda arguments, on_progress: call_reporting(
                hub, server, tool, arguments, on_progress, _whose_call()
            ),
            module=_MODULE,
        )
        return _with_model(function, model)

    def _async_function(self, model: ToolModel) -> Callable[..., Awaitable[Any]]:
        hub, server, tool = self.hub, model.spec.server, model.spec.name
        function = make_async_tool_function(
            model,
            lambda arguments, on_progress: acall_reporting(
                hub, server, tool, arguments, on_progress, _whose_call()
            ),
            module=_MODULE,
        )
        return _with_model(function, model)


class _ServerTools(dict[str, ToolNamespace]):
    """``Toolbox.by_server``: naming a server still connecting waits for it (``late``), as for a tool."""

    def __init__(
        self, namespaces: dict[str, ToolNamespace], *, late: Callable[[str], ToolNamespace | None]
    ) -> None:
        super().__init__(namespaces)
        self._late = late

    def __missing__(self, server: str) -> ToolNamespace:
        found = self._late(server)
        if found is None:
            raise KeyError(f"no tools of a server named {server!r}; servers with tools: {', '.join(self)}")
        return found


def _whose_call() -> ApprovalCheck:
    """Whose a tool function's call is, read where the function is called.

    The caller's that ``acting_for`` names (a notebook tool run for a program), else the person's own.
    """
    return current_check() or PERSONS_OWN_CALL


def _with_model(function: _F, model: ToolModel) -> _F:
    """Let the kernel's tool functions carry their spec and type model (``tb.tools.get_weather.spec``)."""
    target: Any = function
    target.spec = model.spec
    target.model = model
    return function


def collision_in_config(exc: ToolNameCollisionError, config: Config) -> ServerToolCollisionError:
    """A collision between the configured servers' tools, as the config problem it is.

    Names the config file, every clash with its ``server/tool`` names, and both fixes with real names: a
    ``prefix`` for a server (when the clash is between servers) or an ``excludedTools`` entry.
    """
    count = len(exc.collisions)
    clashes = "".join(
        f"\n  - {name}() would be the name of {' and '.join(tools)}" for name, tools in exc.collisions.items()
    )
    return ServerToolCollisionError(
        f"{count} tool name collision{'s' if count != 1 else ''} in code mode:{clashes}",
        tools=exc.tools,
        collisions=exc.collisions,
        file=str(config.source) if config.source else None,
        fix=_collision_fix(exc.collisions, config),
    )


def _collision_fix(collisions: dict[str, list[str]], config: Config) -> str:
    """Both ways out, with the names of this config: a server prefix, or keeping one tool out of code mode."""
    later = [tools[-1] for tools in collisions.values()]  # the later tool of each clash
    apart = [  # a prefix parts tools of two servers, never two tools of one server
        tool for tool, tools in zip(later, collisions.values(), strict=True) if len(_servers(tools)) > 1
    ]
    fixes = []
    if apart:
        server, tool = apart[0].split("/", 1)
        example = function_name(tool, f"{server}_")
        prefix = f'"prefix": "{server}_"'
        fixes.append(f'give server "{server}" a "prefix" ({prefix} in its entry makes {example}())')
    where = config.settings_source or f"your user config ({user_config_dir() / USER_CONFIG_FILE})"
    which = "one tool" if len(later) == 1 else "one tool of each"
    fixes.append(
        f'keep {which} out of code mode: "excludedTools": {json.dumps(later)} in "defaults"."codeMode" of '
        f"{where} (it stays a classic tool for the agent)"
    )
    return "; or ".join(fixes)


def _servers(tools: list[str]) -> set[str]:
    """The servers of ``server/tool`` names."""
    return {tool.split("/", 1)[0] for tool in tools}


def _aliases(models: list[ToolModel]) -> dict[str, str]:
    """Original tool names and ``server/tool`` names, pointing at Python names."""
    out: dict[str, str] = {}
    for m in models:
        out.setdefault(m.spec.name, m.function_name)
        out[m.spec.qualified_name] = m.function_name
    return out
