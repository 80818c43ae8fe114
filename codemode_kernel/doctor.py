"""``codemode doctor``: where the config came from, each server's state and problems, and the sandbox.

Everything it shows comes from the real thing: servers connected as a notebook would, and the protections
a real code-mode worker reported after entering its sandbox. Each problem comes with what would fix it.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import TYPE_CHECKING

from .config import Config, load_config, relaxations_report
from .core.errors import CodeModeError, ConfigError, UntrustedConfigError
from .hub import ServerStatus
from .toolbox import Toolbox
from .typegen import ToolModel, renamed_warning
from .worker.sandbox import Protections

if TYPE_CHECKING:
    from .executor import Executor

__all__ = ["doctor", "fix_for"]


def doctor(config_path: str | None) -> int:
    """Print the diagnosis of the config at ``config_path`` (None: the search path); return the problem count.

    The count is 0 when all is well; the CLI turns it into its exit code.
    """
    print(
        f"codemode-kernel {version('codemode-kernel')}, mcp {version('mcp')}, "
        f"Python {platform.python_version()}"
    )
    try:
        config = load_config(config_path)
    except UntrustedConfigError as exc:
        print(f"config: {exc.file} (project, NOT TRUSTED)\n  problem: {exc.reason}\n  fix: {exc.fix}")
        return 1
    except ConfigError as exc:
        print(f"config: {exc.file or 'unknown'} (cannot be used)\n  problem: {exc}")
        return 1
    _print_config(config)
    problems = len(config.warnings)
    try:
        with Toolbox(config) as toolbox:
            toolbox.wait_for_servers()  # each server's final state: the diagnostic may wait for it
            statuses = toolbox.status()
            tool_count = len(toolbox.models)
            unvalidated = _unvalidated_tools(toolbox.models)
            renamed = [m for m in toolbox.models if m.renamed_from is not None]
            sandbox = _worker_protections(toolbox)
    except CodeModeError as exc:
        print(f"problem: {exc}")
        return 1
    print("servers:")
    for status in statuses:
        print(_describe_server(status, said=unvalidated.get(status.name)))
        problems += status.state in ("failed", "signin")
    print(f"tools: {tool_count} Python functions")
    for model in renamed:
        print(f"  warning: {renamed_warning(model, model.renamed_from or '')}")
    # The list a real worker reported after entering its sandbox, as every run's result has it; the
    # layers the user's settings turned off (network: true) are shown but are not problems.
    print(sandbox.describe("code-mode sandbox"))
    problems += len(sandbox.unavailable())
    print("no problems found" if problems == 0 else f"{problems} problem(s) found")
    return problems


def _worker_protections(toolbox: Toolbox) -> Protections:
    """The protections a code-mode worker applies here, as one reports them; or why no worker started."""
    from .executor import Executor

    try:
        with Executor(toolbox) as executor:
            protections = executor.protections()
            _print_cluster(executor)
            return protections
    except CodeModeError as exc:
        return Protections.no_worker(str(exc))


def _print_cluster(executor: Executor) -> None:
    """The Ray cluster's lines (nodes, workers, queue) when programs run on one; why not, if it fails."""
    from .executor.cluster.pool import cluster_lines

    try:
        cluster = executor.cluster_status()
    except CodeModeError as exc:
        print(f"cluster: cannot be read: {exc}")
        return
    if cluster is not None:
        print("\n".join(cluster_lines(cluster)))


def _print_config(config: Config) -> None:
    where = str(config.source) if config.source else "none found: using the embedded demo servers"
    print(f"config: {where} ({config.origin})")
    print(f"workspace: {config.workspace}")
    for warning in config.warnings:
        print(f"  warning: {warning}")
    print(relaxations_report(config.relaxations))


def _describe_server(status: ServerStatus, said: _Unvalidated | None = None) -> str:
    head = f"  {status.name} [{status.transport}]: {status.state}"
    if status.state == "ready":
        head += f", {status.tools} tools, protocol {status.protocol_version}"
        if status.restarts:
            head += f", restarted {status.restarts}x"
    lines = [head]
    if status.error:
        lines.append(f"    problem: {status.error}")
        lines.extend(status.log_tail_lines())
        lines.append(f"    fix: {fix_for(status)}")
    if status.log_path and status.state == "failed":
        lines.append(f"    stderr log: {status.log_path}")
    if note := status.stdout_note():
        lines.append(f"    stdout: {note}")
    lines.extend(f"    warning: {w}" for w in status.warnings if not said or w not in said.warnings)
    if said:
        lines.extend(said.lines)
        lines.append(
            "    fix: tell the server's author which schemas are broken; until then pass only the arguments "
            'the tool documents, or keep it out of code mode with "excludedTools"'
        )
    return "\n".join(lines)


@dataclass
class _Unvalidated:
    """One server's tools whose arguments are not validated: a line each, and the hub warnings they cover."""

    lines: list[str] = field(default_factory=list)
    warnings: set[str] = field(default_factory=set)


def _unvalidated_tools(models: list[ToolModel]) -> dict[str, _Unvalidated]:
    """Per server, the tools whose input schema switched argument validation off, and why.

    The hub tolerates such schemas (a missing or non-object inputSchema, one jsonschema cannot compile)
    so the tool stays usable; doctor is where the user learns that nothing checks what is sent to it.
    """
    found: dict[str, _Unvalidated] = {}
    for model in models:
        spec, validator = model.spec, model.validator
        if spec.input_schema_problem:
            reason = f"{spec.input_schema_problem}, so it is offered without parameters"
        elif validator is not None and validator.problem:
            reason = validator.problem
        else:
            continue
        entry = found.setdefault(spec.server, _Unvalidated())
        entry.lines.append(f"    tool {model.function_name}(): arguments are not validated: {reason}")
        # The hub's own warning about a replaced schema says the same; show it once.
        entry.warnings.update(f"{spec.server}: {warning}" for warning in spec.warnings)
    return found


def fix_for(status: ServerStatus) -> str:
    """What would fix a server's failure, in a sentence (doctor, and the sidebar through the state file)."""
    error = status.error or ""
    if status.state == "signin":
        return f"run `codemode login {status.name}` to sign in, then try again"
    if "command not found" in error:
        return "install the server, or give the full path of its command in the config"
    if "connectTimeout" in error:
        if status.transport != "stdio":
            return 'if it is only slow, raise its "connectTimeout"; else check that its url is right'
        return 'if it is only slow, raise its "connectTimeout"; else run its command by hand to see it hang'
    if status.transport != "stdio":
        return "check that the server is running and that its url and headers are right"
    return 'read its stderr log; run the command by hand to see it fail; or set "disabled": true'
