"""The exception hierarchy of codemode-kernel.

Catch broad, recover narrow::

    CodeModeError                   anything this package raises on purpose
    ├── ConfigError                 a config file is wrong: names the file, the JSON path and the fix
    │   ├── UntrustedConfigError    a project file would start commands and is not trusted yet
    │   └── ServerToolCollisionError  (also a ToolNameCollisionError) configured servers' tools share a name
    ├── ToolNameCollisionError      two tools (or a tool and a reserved name) map to one function name
    ├── EnvFileError                a line of an env file cannot be read (the ConfigError names the file)
    ├── TimeoutValueError           a timeout is not a number of seconds within limits.TIMEOUT_RANGE
    ├── PendingFileError            a ``codemode run --pending --answers`` file cannot be used
    ├── ClientToolsError            what a ``codemode serve`` client sent with its tools cannot be used
    ├── QuestionRefused             a server's question (elicitation) cannot be asked or answered so
    ├── ServerError                 an MCP server could not start, died, or answered nonsense
    │   ├── SignInRequired          a remote server wants its user to sign in (``codemode login NAME``)
    │   └── SignInFailed            signing in to a remote server did not work
    ├── ToolArgumentError           arguments do not fit the tool's input schema (nothing was sent)
    ├── ToolError                   the server ran the tool and reported isError
    ├── ToolTimeoutError            a tool call did not finish within its timeout
    ├── UnknownToolError            no configured tool has that name
    ├── ArtifactError               the artifact store cannot take or give this data
    │   └── ArtifactNotFoundError   no artifact has that id or name; the message lists those that exist
    ├── LLMError                    a request to a model failed (after retries of 429 and 5xx)
    │   ├── LLMAuthError            no API key where one is needed, or the provider refused it
    │   ├── LLMModelNotFoundError   the provider does not know the model
    │   └── LLMUnreachableError     the endpoint cannot be reached (connection refused, DNS, timeout)
    ├── AgentError                  the agent stopped on our own failure (an execution ended ``internal``)
    ├── ServerBusyError             codemode serve runs and queues all it may; the call is refused at once
    ├── SessionLimitError           codemode serve keeps as many sessions as it may; a new one is refused
    ├── JobNotFoundError            no background run of the kernel has that id (`jobs[ID]`, %codemode wait)
    ├── ToolsUnavailable            a kernel's tools cannot be used (untrusted, invalid or failed config)
    ├── CodeSyntaxError             a program does not compile (also a SyntaxError, located as written)
    ├── CellError                   a notebook cell failed; shown as its own short traceback
    │   ├── CodeModeCellError       a %%codemode program failed (its own traceback and line)
    │   └── AgentCellError          %%agent stopped: the model request failed, or an execution did
    └── WorkerError                 the worker side broke; executions report it as ``internal``
        ├── ZygoteError             the pre-started worker process failed or could not start a worker
        ├── ClusterError            the Ray cluster cannot be reached or used (Ray missing, bad address)
        │   └── NodeLostError       the Ray node a worker ran on went away while it ran
        ├── SandboxError            a sandbox layer that was available failed while being applied
        ├── ChannelClosed           (in a worker) the kernel closed the channel: the run is being stopped
        └── ProtocolError           a peer sent something that is not a valid frame
            └── FrameTooLarge       a message is larger than one frame may be

Every message says what went wrong and what to do about it, so it can be shown to a user (or a model)
as is. The five from EnvFileError to QuestionRefused are bad input, and ``ValueError``s too.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentCellError",
    "AgentError",
    "ArtifactError",
    "ArtifactNotFoundError",
    "CellError",
    "ChannelClosed",
    "ClientToolsError",
    "ClusterError",
    "CodeModeCellError",
    "CodeModeError",
    "CodeSyntaxError",
    "ConfigError",
    "EnvFileError",
    "FrameTooLarge",
    "JobNotFoundError",
    "LLMAuthError",
    "LLMError",
    "LLMModelNotFoundError",
    "LLMUnreachableError",
    "NodeLostError",
    "PendingFileError",
    "ProtocolError",
    "QuestionRefused",
    "SandboxError",
    "ServerBusyError",
    "ServerError",
    "ServerToolCollisionError",
    "SessionLimitError",
    "SignInFailed",
    "SignInRequired",
    "TimeoutValueError",
    "ToolArgumentError",
    "ToolError",
    "ToolNameCollisionError",
    "ToolTimeoutError",
    "ToolsUnavailable",
    "UnknownToolError",
    "UntrustedConfigError",
    "WorkerError",
    "ZygoteError",
]


class CodeModeError(Exception):
    """Root of every error codemode-kernel raises on purpose."""


class ConfigError(CodeModeError):
    """A configuration file cannot be used as written.

    ``file`` is the file (or None for built-in defaults), ``path`` the JSON path of the field
    (``mcpServers.weather.command``), ``fix`` a sentence that says what would make it work.
    """

    def __init__(
        self, message: str, *, file: str | None = None, path: str | None = None, fix: str | None = None
    ):
        self.file = file
        self.path = path
        self.fix = fix
        self.reason = message
        where = file or "<config>"
        if path:
            where += f": {path}"
        text = f"{where}: {message}"
        if fix:
            text += f"\n  fix: {fix}"
        super().__init__(text)


class UntrustedConfigError(ConfigError):
    """A project-local config would start commands, but the user has not trusted this file content yet."""


class ToolNameCollisionError(CodeModeError):
    """Tool names collide after conversion to Python identifiers, or take a reserved name.

    ``tools`` lists every ``server/tool`` involved; ``collisions`` maps each shared Python name to the
    ``server/tool`` names that would get it (empty when the raiser did not group them).
    """

    def __init__(self, message: str, *, tools: list[str], collisions: dict[str, list[str]] | None = None):
        self.tools = tools
        self.collisions = dict(collisions or {})
        super().__init__(message)


class ServerToolCollisionError(ToolNameCollisionError, ConfigError):
    """Tools of the configured servers would share a Python name: the config must say which wins.

    A ``ConfigError`` too (the fix is a ``prefix`` or an ``excludedTools`` entry in the config), so a
    front door that treats configuration problems as usage errors (``codemode run``: exit code 2) does.
    """

    def __init__(
        self,
        message: str,
        *,
        tools: list[str],
        collisions: dict[str, list[str]],
        file: str | None,
        fix: str,
    ):
        self.tools = tools
        self.collisions = dict(collisions)
        ConfigError.__init__(self, message, file=file, fix=fix)


class ServerError(CodeModeError):
    """An MCP server failed: it did not start, it died, or its answer could not be used.

    ``log_path`` points at the file that holds the server's stderr, when there is one.
    """

    def __init__(self, message: str, *, server: str, log_path: str | None = None):
        self.server = server
        self.log_path = log_path
        text = f"server {server!r}: {message}"
        if log_path:
            text += f" (stderr log: {log_path})"
        super().__init__(text)


class SignInRequired(ServerError):
    """A remote server wants its user to sign in (OAuth) before it answers; the message names the command.

    ``reason`` is the message without the server's name (what ``%codemode status`` shows after it).
    """

    def __init__(self, reason: str, *, server: str):
        self.reason = reason
        super().__init__(reason, server=server)


class SignInFailed(ServerError):
    """Signing in to a remote server did not work (refused, timed out, or the answer was not usable)."""


class ToolArgumentError(CodeModeError, TypeError):
    """The arguments do not fit the tool's input schema; nothing was sent to the server.

    It is also a ``TypeError``, which is what Python raises for a bad call.
    """

    def __init__(self, message: str, *, tool: str, field: str | None = None):
        self.tool = tool
        self.field = field
        super().__init__(message)


class ToolError(CodeModeError):
    """The server ran the tool and reported a failure (``isError``); the message is the server's."""

    def __init__(self, message: str, *, tool: str, server: str | None = None, content: Any = None):
        self.tool = tool
        self.server = server
        self.content = content
        super().__init__(message)


class ToolTimeoutError(CodeModeError, TimeoutError):
    """A tool call did not finish within its timeout; the call was cancelled at the server."""

    def __init__(self, message: str, *, tool: str, timeout: float):
        self.tool = tool
        self.timeout = timeout
        super().__init__(message)


class UnknownToolError(CodeModeError, LookupError):
    """No configured tool has this name; the message lists the closest names."""


class ArtifactError(CodeModeError):
    """The artifact store cannot take or give this data (an unsupported value, a broken database file)."""


class ArtifactNotFoundError(ArtifactError, LookupError):
    """No artifact has this id or name; ``key`` is what was asked, the message lists what exists."""

    def __init__(self, message: str, *, key: str):
        self.key = key
        super().__init__(message)


class LLMError(CodeModeError):
    """A request to a model failed; ``ref`` names the config's model entry, ``status`` the HTTP status."""

    def __init__(self, message: str, *, ref: str | None = None, status: int | None = None):
        self.ref = ref
        self.status = status
        super().__init__(message)


class LLMAuthError(LLMError):
    """No API key where the provider needs one (the message names the variable), or the key was refused."""


class LLMModelNotFoundError(LLMError):
    """The provider does not know the model; the message names it and the config entry to change."""


class LLMUnreachableError(LLMError):
    """The endpoint cannot be reached; the message names the URL."""


class AgentError(CodeModeError):
    """The agent stopped because of our own failure, not the model's: an execution ended ``internal``.

    The model cannot fix this by changing its code, so the loop does not send it back; the message says
    what failed and what to try (usually restarting the kernel). ``result`` is the agent's result so far
    (an ``AgentResult``: the steps, tokens and round trips up to the failure), or None.
    """

    def __init__(self, message: str, *, result: Any = None):
        self.result = result
        super().__init__(message)


class ServerBusyError(CodeModeError):
    """``codemode serve`` runs ``poolSize`` programs and queues ``queueLimit``: a call is refused at once."""


class SessionLimitError(CodeModeError):
    """A new ``codemode serve`` session would pass ``maxSessions``; an idle one must expire or end first."""


class JobNotFoundError(CodeModeError, LookupError):
    """No background run of the kernel has this id (or the prefix fits none, or several); lists the ids."""


class EnvFileError(CodeModeError, ValueError):
    """A line of an env file cannot be read; ``line`` counts from 1 (the line's text is not kept: secrets)."""

    def __init__(self, message: str, *, line: int, fix: str):
        self.line = line
        self.fix = fix
        super().__init__(f"line {line}: {message}")


class TimeoutValueError(CodeModeError, ValueError):
    """A timeout someone asked for is not a number of seconds within ``limits.TIMEOUT_RANGE``."""


class PendingFileError(CodeModeError, ValueError):
    """An answers file that cannot be used: the message names the file, the place and the fix."""


class ClientToolsError(CodeModeError, ValueError):
    """What the client sent cannot be used; the message names the field (``tools[1].name``) and the fix."""


class QuestionRefused(CodeModeError, ValueError):
    """A server's question cannot be asked (its schema is outside the spec's subset, or too large).

    Also raised when an answer does not fit the question: the message names the field.
    """


class ToolsUnavailable(CodeModeError):
    """The tools cannot be used in this kernel: the config is not trusted, invalid, or failed to start."""


class CodeSyntaxError(CodeModeError, SyntaxError):
    """The program does not compile; ``error`` is its error record, located in the code as written.

    It is also a ``SyntaxError`` whose ``lineno`` and ``offset`` count in the code as written.
    """

    def __init__(self, error: dict[str, Any], *, filename: str = "<code>"):
        self.error = error
        position = (filename, error["line"], error["column"], error["source_line"], error["line"], None)
        super().__init__(error["message"], position)


class CellError(CodeModeError):
    """A notebook cell failed; IPython shows ``_render_traceback_`` instead of our own frames."""


class CodeModeCellError(CellError):
    """A ``%%codemode`` cell whose program failed: shown with the program's own traceback and line.

    ``result`` is the run's ``ExecutionResult``.
    """

    def __init__(self, result: Any) -> None:
        self.result = result
        error = result.error or {}
        where = f"line {error['line']}: " if error.get("line") else ""
        message = f"{where}{error.get('type', result.status)}: {error.get('message', result.status)}"
        super().__init__(message)

    def _render_traceback_(self) -> list[str]:
        error = self.result.error or {}
        traceback = error.get("traceback")
        lines = str(traceback).splitlines() if traceback else []
        return [*lines, f"codemode: {self.result.status}: {self}"]


class AgentCellError(CellError):
    """The agent stopped: the model request failed, or an execution failed on our side (internal)."""

    def _render_traceback_(self) -> list[str]:
        return [f"codemode agent stopped: {self}"]


class WorkerError(CodeModeError):
    """The worker side of an execution broke (not the program): the run ends ``internal`` or ``crashed``."""


class ZygoteError(WorkerError):
    """The pre-started worker process failed; executions cannot start (an internal error)."""


class ClusterError(WorkerError):
    """The Ray cluster could not be reached or used (no Ray installed, a wrong address, no node fits)."""


class NodeLostError(ClusterError):
    """The Ray node a worker ran on went away (its raylet or its node actor died) while it ran."""

    def __init__(self, node: str, reason: str) -> None:
        self.node = node
        self.reason = reason
        super().__init__(f"node {node[:12]} was lost: {reason}")


class SandboxError(WorkerError):
    """A protection that ``probe()`` reported available failed while being applied.

    The process that raised it is half-confined and must not run user code: the runner reports the
    execution as ``internal`` and shows the message (it names the layer and the system call's errno).
    """

    def __init__(self, layer: str, reason: str) -> None:
        self.layer = layer
        self.reason = reason
        super().__init__(f"sandbox layer {layer!r} failed: {reason}")


class ChannelClosed(WorkerError):
    """In a worker: the kernel closed the channel (the execution is being stopped)."""


class ProtocolError(WorkerError):
    """The peer sent something that is not a valid frame."""


class FrameTooLarge(ProtocolError):
    """A message to send is larger than one frame may be; ``size`` and ``limit`` are in bytes."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit}")
        self.size = size
        self.limit = limit
