"""``%codemode reconnect NAME``, ``login NAME``, ``load ARTIFACT NAME``, ``approve TOOL``, ``executor``.

The JupyterLab sidebar runs them as silent executions, and people can type them: each prints one plain
line saying what happened, and a mistake is a UsageError that says what to type instead.
"""

from __future__ import annotations

import keyword
import time
from typing import Any

from IPython.core.error import UsageError

from ..approvals import PromptApprover
from ..config.executor_choice import CHOICE_FORMS, RayNotInstalledError, describe_executor, parse_choice
from ..config.models import ExecutorSettings
from ..core.errors import ArtifactNotFoundError, CodeModeError, ServerError, UnknownToolError
from .signin import link_bundle
from .tools import KernelTools, ToolsUnavailable

__all__ = ["approve_tools", "executor_command", "load_artifact", "login_server", "reconnect_server"]

RECONNECT_USAGE = "%codemode reconnect NAME (a server of %codemode status)"
LOGIN_USAGE = "%codemode login NAME (a remote server that signs in with OAuth)"
_LINK_WAIT = 60.0
LOAD_USAGE = "%codemode load ARTIFACT NAME (an artifact's id or name, and a Python name to bind it to)"
EXECUTOR_USAGE = f"%codemode executor [local|ray[=ADDRESS]] (where programs run; ADDRESS: {CHOICE_FORMS})"


def reconnect_server(tools: KernelTools, words: list[str]) -> str:
    """Connect the named server again and say how it went (state, tools, or the error and its fix)."""
    from ..doctor import fix_for

    if len(words) != 1:
        raise UsageError(f"usage: {RECONNECT_USAGE}")
    name = words[0]
    try:
        status = tools.reconnect(name)
    except UnknownToolError as exc:
        raise UsageError(f"%codemode reconnect: {exc}") from None
    except (ServerError, ToolsUnavailable) as exc:
        raise UsageError(f"%codemode reconnect {name}: {exc}") from None
    if status.state == "ready":
        count = f"{status.tools} tool{'s' * (status.tools != 1)}"
        return f"{name} [{status.transport}]: connected again, ready, {count}"
    text = f"{name} [{status.transport}]: {status.state}"
    if status.error:
        text += f"\n  problem: {status.error}\n  fix: {fix_for(status)}"
    return text


def login_server(tools: KernelTools, words: list[str]) -> dict[str, Any] | str:
    """Start a new sign-in to the named server: its link (a display bundle) once known, or what happened."""
    if len(words) != 1:
        raise UsageError(f"usage: {LOGIN_USAGE}")
    name = words[0]
    tools.wait()
    try:
        pending = tools.signins.start(name, again=True)
    except CodeModeError as exc:
        raise UsageError(f"%codemode login: {exc}") from None
    deadline = time.monotonic() + _LINK_WAIT
    while not pending.settled.wait(0.1):  # short waits: an interrupt ends it at once
        if time.monotonic() > deadline:
            raise UsageError(f"%codemode login {name}: no sign-in link within {_LINK_WAIT:.0f} s")
    if pending.url is not None and not pending.done:
        pending.shown = True
        return link_bundle(pending)
    if pending.error is not None:
        raise UsageError(f"%codemode login {name}: {pending.error}")
    return f"{name}: signed in, no link was needed"


def load_artifact(tools: KernelTools, namespace: dict[str, Any], words: list[str]) -> str:
    """Load an artifact (by id, or the newest with that name) into the namespace under a Python name."""
    if len(words) != 2:
        raise UsageError(f"usage: {LOAD_USAGE}")
    key, name = words
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"%codemode load: {name!r} is not a Python name to bind it to\nusage: {LOAD_USAGE}")
    try:
        artifact = tools.artifacts.store.get(key)
        value = tools.artifacts.load(artifact.id)
    except ArtifactNotFoundError as exc:
        raise UsageError(f"%codemode load: {exc}") from None
    except CodeModeError as exc:  # a damaged store: say which file
        raise UsageError(f"%codemode load {key}: {exc}") from None
    namespace[name] = value
    label = f"{artifact.name!r} ({artifact.id})" if artifact.name else artifact.id
    return f"loaded {label}, {artifact.type}, as {name} ({type(value).__name__})"


def approve_tools(approver: PromptApprover, patterns: list[str]) -> str:
    """``%codemode approve TOOL ...``: allow tools for the rest of this kernel, as answering ``a`` does.

    Patterns as in ``codeMode.autoApprove``: ``tool``, ``server/tool``, ``server/*``. Without one, list
    what is allowed. Meant for notebooks run unattended (nbval, papermill), where nobody answers a question.
    """
    from ..config.models import check_tool_pattern

    for pattern in patterns:
        try:
            check_tool_pattern(pattern)
        except ValueError:
            raise UsageError(
                f'%codemode approve: "{pattern}" is not a tool pattern; write "tool", "server/tool" or '
                '"server/*" (every tool of a server)'
            ) from None
    approver.allowed.update(patterns)
    if not approver.allowed:
        return "codemode: no tool is allowed ahead in this kernel; %codemode approve TOOL allows one"
    return "codemode: allowed without asking, until the kernel restarts: " + ", ".join(
        sorted(approver.allowed)
    )


def executor_command(tools: KernelTools, words: list[str]) -> str:
    """``%codemode executor``: where programs run; with ``local`` or ``ray[=ADDRESS]``, switch there first.

    A switch closes the kernel's Executors (their sessions end) and makes new ones on the new backend.
    """
    if len(words) > 1:
        raise UsageError(f"usage: {EXECUTOR_USAGE}")
    try:
        if words:
            tools.switch_executor(parse_choice(words[0]))
        else:
            tools.wait()
    except ValueError as exc:
        raise UsageError(f"%codemode executor: {exc}\nusage: {EXECUTOR_USAGE}") from None
    except (RayNotInstalledError, ToolsUnavailable) as exc:
        raise UsageError(f"%codemode executor: {exc}") from None
    if tools.toolbox is None:
        return f"no tools: {tools.problem}"
    settings = tools.executor_settings()
    config = tools.toolbox.config
    if tools.executor_choice is not None:
        source = "%codemode executor, in this kernel until it restarts"
    elif config.executor != ExecutorSettings():
        source = f'"executor" in {config.settings_source}'
    else:
        source = 'the default (the config sets no "executor")'
    lines = [f"executor: {describe_executor(settings)}", f"  set by: {source}"]
    if words:
        lines.insert(0, "codemode: switched; the sessions of the previous executor ended")
    if settings.backend == "ray":
        lines += _cluster_lines(tools)
    return "\n".join(lines)


def _cluster_lines(tools: KernelTools) -> list[str]:
    """The cluster as the Executor sees it (nodes, workers, queued runs), when it can say."""
    try:
        status = getattr(tools.executor(), "cluster_status", lambda: None)()
    except CodeModeError as exc:
        return [f"  cluster: cannot be reached: {exc}"]
    if not status:
        return []
    from ..executor.cluster.pool import cluster_lines

    return [f"  {line}" for line in cluster_lines(status)]
