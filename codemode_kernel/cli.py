"""The ``codemode`` command: look at your MCP tools as Python, check your setup, trust a project config."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import shutil
import signal
import sys
import threading
import tokenize
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .config import find_config, load_config, project_config, resolve_code_mode
from .config.executor_choice import ExecutorChoice, RayNotInstalledError, parse_choice
from .config.jsontext import load_json_bytes
from .core.errors import CodeModeError, ConfigError, ServerToolCollisionError
from .core.limits import DEFAULT_TIMEOUT, LONGEST_TIMEOUT, TIMEOUT_RANGE, TimeoutValueError, check_timeout
from .core.toolspec import ToolSpec
from .hub.validation import ArgumentValidator
from .shapes import ShapeStore
from .toolbox import RESERVED_NAMES, Toolbox
from .typegen import build_tool_models, renamed_warning, render_stubs

if TYPE_CHECKING:
    from .approvals import Approver, PromptApprover
    from .terminal_progress import ProgressLine, RunOutput

__all__ = ["main"]

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
"""``codemode run`` stopped by Ctrl-C: 128 + SIGINT, as a shell reports a command SIGINT ended."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 fine, 1 a problem was reported, 2 usage)."""
    # Started with SIGCHLD ignored (some service managers and scripts do that), the children this starts
    # (servers, the worker) could not be waited for: their exit status would be lost.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return EXIT_USAGE
    try:
        code: int = args.run(args)
    except RayNotInstalledError as exc:  # --executor ray (or the config's) without the [ray] extra
        print(f"codemode: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ServerToolCollisionError as exc:  # found as the servers list their tools: a config problem
        print(f"codemode: {exc}", file=sys.stderr)
        return EXIT_USAGE if args.run is _cmd_run else EXIT_PROBLEMS
    except CodeModeError as exc:
        print(f"codemode: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except BrokenPipeError:
        # The reader went away (`codemode tools | head`): nothing is wrong, but Python would complain
        # again when it flushes stdout at exit, so point stdout at nothing first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codemode",
        description="Code mode for Jupyter: every MCP tool as a typed Python function.",
        epilog="Config is found in this order: --config, $CODEMODE_CONFIG, ./codemode.json, ./.mcp.json, "
        "./.vscode/mcp.json, ~/.config/codemode/config.json; with none, the embedded demo servers.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    # The commands that connect to servers share one --config option.
    with_config = argparse.ArgumentParser(add_help=False)
    with_config.add_argument("--config", metavar="PATH", help="config file to use instead of the search path")
    # The commands that run programs share --executor: where they run.
    with_executor = argparse.ArgumentParser(add_help=False)
    with_executor.add_argument(
        "--executor",
        type=_executor_choice,
        metavar="local|ray[=ADDRESS]",
        help='where programs run, over the config\'s "executor": local (a worker process on this machine) '
        "or ray (the machines of a Ray cluster, at ADDRESS: auto, HOST:PORT or ray://HOST:10001; without "
        "one, the config's address, else auto); the config's resources stay. Ray needs "
        'pip install "codemode-kernel[ray]"; docs/scale-out.md',
    )

    tools = sub.add_parser(
        "tools",
        parents=[with_config],
        help="print every tool as Python stub source",
        description="Connect to the configured servers and print the Python stubs of their tools, grouped by "
        "server (valid Python: what an LLM reads). Servers that failed are listed as comments. With "
        "--tools-json, print the stubs of a saved tools/list answer instead, with no server running. "
        "A tool without an outputSchema is typed with the shape of the results it returned so far, marked "
        "'inferred from N calls' (kept in the workspace's .codemode/shapes.json); --infer lists what is "
        "known per tool and prints only the stubs of those tools.",
    )
    tools.add_argument(
        "--tools-json",
        metavar="FILE",
        help='a saved tools/list answer: {"tools": [...]} or a list of tools ("-" reads standard input)',
    )
    tools.add_argument(
        "--server", metavar="NAME", help="server name for --tools-json (default: the file name)"
    )
    tools.add_argument("--no-header", action="store_true", help="leave out the import lines")
    tools.add_argument(
        "--infer",
        action="store_true",
        help="show the result shapes inferred from calls: per tool without an outputSchema, how many results "
        "were seen, then the stubs of the tools with a shape (with --tools-json: the workspace's shapes "
        "applied to the saved tools)",
    )
    tools.set_defaults(run=_cmd_tools)

    doctor = sub.add_parser(
        "doctor",
        parents=[with_config],
        help="check the config and every server, with fixes",
        description="Say where the config was found, connect to every server, and report each server's "
        "state, tool count and problems with what would fix them (it waits for slow servers, each up to "
        'its "connectTimeout"). Exit code 1 when anything failed.',
    )
    doctor.set_defaults(run=_cmd_doctor)

    run = sub.add_parser(
        "run",
        parents=[with_config, with_executor],
        help="run a Python program in code mode",
        description="Run a program in an isolated worker process with every configured MCP tool as a "
        "function. Prints what it printed (on a terminal as it prints it; otherwise when it ends), then its "
        "value or its error. Exit code: 0 ok, 1 the program raised, 2 usage, 3 internal error, 4 timeout, "
        "5 the worker crashed, 6 pending (--pending), 130 interrupted (Ctrl-C stops the program: SIGINT, "
        "the grace period, SIGKILL; what it printed is kept). A server slow to connect is waited for only "
        "if the program names one of its tools. On a terminal, a line on stderr below the output shows the "
        "elapsed time, the calls done and the running call's progress while it runs.",
    )
    run.add_argument("file", help='the program ("-" reads standard input)')
    run.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help=f"seconds, {TIMEOUT_RANGE} (default {DEFAULT_TIMEOUT:g}); the config's codeMode.timeout sets "
        f"the default and codeMode.maxTimeout the maximum (up to {LONGEST_TIMEOUT:g})",
    )
    run.add_argument("--json", action="store_true", help="print the whole result record as JSON instead")
    run.add_argument(
        "--pending",
        action="store_true",
        help="answer the tool calls yourself (docs/pending.md): the program runs until it waits on calls "
        'nobody answered, then their list is printed as JSON (exit code 6); fill in each one\'s "result" '
        '(or "error") and run again with --answers',
    )
    run.add_argument(
        "--answers",
        metavar="FILE",
        help="with --pending: the JSON printed by the last round, with results filled in; the program runs "
        "again from the top, every answered call answered from the file and no call made twice",
    )
    run.add_argument(
        "--approve",
        choices=["ask", "all", "none"],
        default=None,
        help="calls that need approval (destructive tools, codeMode.approve; docs/approvals.md): ask on the "
        "terminal (the default when standard input is one), allow all, or deny all (the default otherwise)",
    )
    run.set_defaults(run=_cmd_run)

    serve = sub.add_parser(
        "serve",
        parents=[with_config, with_executor],
        help="serve code mode as an MCP server (execute_python) for MCP hosts",
        description="Connect the configured servers and serve execute_python: a program calling their "
        "tools as typed functions, answered with the whole result record, with progress, cancellation, "
        "sessions that keep globals, and tools the client owns, whose calls come back as pending calls the "
        "client answers in a follow-up call (tools, resume, answers; docs/serve.md). Tools excluded from "
        "code mode are served as they are; artifacts are resources. Limits (programs at once, queue, "
        "sessions) are defaults.serve in the "
        "config. stdio by default (for Claude Desktop, Claude Code, VS Code); --transport http serves "
        "Streamable HTTP at http://HOST:PORT/mcp, refusing requests whose Host or browser Origin is not "
        "this server's, and asking for a bearer token on any address but loopback.",
    )
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="default: stdio")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP: the address to bind (default 127.0.0.1); any but 127.0.0.1, localhost or ::1 requires "
        "a bearer token",
    )
    serve.add_argument("--port", type=int, default=8000, help="HTTP: the port (default 8000)")
    serve.add_argument(
        "--token-env",
        metavar="VAR",
        help="HTTP: the environment variable holding the bearer token clients must send (default "
        "CODEMODE_SERVE_TOKEN). A token is required beyond loopback, or when this option is given or the "
        "variable is set; with the variable unset, one is generated and printed at start",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="HTTP: also accept requests whose Host header is NAME (with no port: any port), such as a "
        "reverse proxy's name; repeatable",
    )
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="HTTP: also accept browser requests from ORIGIN (https://app.example.com); repeatable",
    )
    serve.set_defaults(run=_cmd_serve)

    install = sub.add_parser(
        "install",
        help="register the Code Mode Jupyter kernel (kernelspec 'codemode')",
        description="Write the kernelspec 'codemode' (\"Code Mode (Python 3)\") running this Python.",
    )
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user (the default)")
    where.add_argument("--sys-prefix", action="store_true", help="into this environment (sys.prefix)")
    where.add_argument("--prefix", metavar="P", help="under prefix P (P/share/jupyter/kernels)")
    install.set_defaults(run=_cmd_install)

    lab = sub.add_parser(
        "lab",
        help="start JupyterLab on ./notebooks with the Code Mode kernel (127.0.0.1)",
        description="Register the kernel in this environment if needed, then start JupyterLab on "
        "127.0.0.1 in ./notebooks (or here), printing the URL with its token. Needs the [lab] extra.",
    )
    lab.add_argument("--port", type=int, default=None, help="the port (default: a free one)")
    lab.add_argument("--no-browser", action="store_true", help="do not open a browser")
    lab.set_defaults(run=_cmd_lab)

    trust = sub.add_parser(
        "trust",
        help="allow a project config to start its servers and loosen protections",
        description="Trust a project-local config (codemode.json, .mcp.json, .vscode/mcp.json) so that its "
        "servers may start (or connect) and its settings that loosen a protection apply. It prints what that "
        "allows. Trust covers the file's content, where it really is, and the project files its servers run "
        "(scripts, local packages, envFile): a change to any of them asks again, naming what changed.",
    )
    trust.add_argument("path", nargs="?", help="the file to trust (default: the project config found here)")
    trust.set_defaults(run=_cmd_trust)

    login = sub.add_parser(
        "login",
        parents=[with_config],
        help="sign in to a remote server (OAuth) in a browser",
        description="Sign in to a remote (http, sse) server that asks for it: the authorization link is "
        "printed and opened in a browser (or given to the command $CODEMODE_OAUTH_OPEN names, as its last "
        "argument), and the redirect comes back to 127.0.0.1. The tokens are kept for this user, outside "
        "every workspace and hidden from programs, and used by the kernel, run and serve.",
    )
    login.add_argument("server", help="the server's name in the config")
    login.add_argument(
        "--timeout", type=float, default=300.0, metavar="SECONDS", help="how long to wait for the sign-in"
    )
    login.set_defaults(run=_cmd_login)
    logout = sub.add_parser(
        "logout",
        parents=[with_config],
        help="forget a remote server's sign-in",
        description="Delete the tokens (and the client registration) kept for a remote server.",
    )
    logout.add_argument("server", help="the server's name in the config")
    logout.set_defaults(run=_cmd_logout)
    return parser


def _executor_choice(text: str) -> ExecutorChoice:
    """``--executor``'s value; a bad one is argparse's usage error, naming the accepted forms."""
    try:
        return parse_choice(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# -- tools --------------------------------------------------------------------------------------------


def _cmd_tools(args: argparse.Namespace) -> int:
    if args.tools_json:
        specs = _read_tools_json(args.tools_json, args.server)
        if args.infer:
            try:
                workspace = load_config(args.config).workspace
            except CodeModeError:  # no usable config: the shapes of this directory's workspace
                workspace = Path.cwd()
            store = ShapeStore.for_workspace(workspace)
            _print_inferred(store, specs)
            specs = [s for s in store.apply(specs) if s.inferred_output is not None]
        models = build_tool_models(specs, check=ArgumentValidator, reserved=RESERVED_NAMES)
        for model in models:
            if model.renamed_from is not None:
                print(f"codemode: warning: {renamed_warning(model, model.renamed_from)}", file=sys.stderr)
        print(render_stubs(models, imports=not args.no_header))
        return EXIT_OK
    config = load_config(args.config)
    with Toolbox(config) as toolbox:
        toolbox.wait_for_servers()  # a listing of every tool: wait for the slow servers too
        failed = [s for s in toolbox.status() if s.state in ("failed", "signin")]
        if args.infer:
            _print_inferred(toolbox.shapes, toolbox.hub.tool_specs())
            inferred = [m for m in toolbox.models if m.inferred_calls]
            print(render_stubs(inferred, imports=not args.no_header) if inferred else "")
        else:
            print(toolbox.stubs(imports=not args.no_header))
        for status in failed:
            what = "" if status.state == "signin" else " failed"  # its error says what to do
            print(f"# server {status.name!r}{what}: {status.error}")
            if status.log_path:
                print(f"#   stderr log: {status.log_path}")
    return EXIT_PROBLEMS if failed else EXIT_OK


def _print_inferred(store: ShapeStore, specs: Sequence[ToolSpec]) -> None:
    """Per tool: the results its inferred shape was read from, or why it has none (as comments)."""
    print(f"# Result shapes inferred from calls ({store.path}):")
    if store.problem:
        print(f"#   problem: {store.problem}")
    for spec in specs:
        shape = store.get(spec.server, spec.name)
        if spec.output_schema is not None:
            known = "has an outputSchema (nothing inferred)"
        elif shape is None:
            known = "no result seen yet (-> Any)"
        else:
            known = f"inferred from {shape.calls} call{'s' if shape.calls != 1 else ''}"
        print(f"#   {spec.qualified_name}: {known}")
    print()


def _read_tools_json(source: str, server: str | None) -> list[ToolSpec]:
    try:
        content = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror}", file=source) from None
    fix = "save the answer of a tools/list call as it came"
    data: Any = load_json_bytes(content, file=source, fix=fix).data
    if isinstance(data, dict) and "result" in data and isinstance(data["result"], dict):
        data = data["result"]  # a whole JSON-RPC response
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise ConfigError(
            'expected {"tools": [...]} or a list of tools',
            file=source,
            fix="save the result of a tools/list call",
        )
    name = server or (Path(source).stem if source != "-" else "tools")
    specs = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ConfigError(
                "a tool must be an object with a string name", file=source, path=f"tools[{index}]"
            )
        spec = ToolSpec.from_wire(name, tool)
        for warning in spec.warnings:
            print(f"codemode: warning: {warning}", file=sys.stderr)
        specs.append(spec)
    return specs


# -- doctor -------------------------------------------------------------------------------------------


def _cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import doctor

    return EXIT_OK if doctor(args.config) == 0 else EXIT_PROBLEMS


# -- run ----------------------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    from .calllog import ToolCallRecord
    from .config.executor_choice import chosen_executor, require_ray
    from .executor import Executor
    from .executor.pending_file import PendingFileError, pending_state, read_answers
    from .executor.result import ExecutionResult, format_result_text
    from .terminal_progress import RunOutput

    try:
        code = _read_program(args.file)
    except _UnreadableProgramError as exc:
        print(f"codemode: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        config = load_config(args.config)
    except ConfigError as exc:  # exit code 1 means "the program raised": a config problem is usage
        print(f"codemode: {exc}", file=sys.stderr)
        return EXIT_USAGE
    maximum = resolve_code_mode(config).max_timeout  # the defaults' codeMode: what the executor runs with
    try:
        timeout = (
            None if args.timeout is None else check_timeout(args.timeout, field="--timeout", maximum=maximum)
        )
    except TimeoutValueError as exc:
        print(f"codemode: {exc}", file=sys.stderr)
        return EXIT_USAGE
    executor_settings = chosen_executor(config, args.executor)
    require_ray(executor_settings)
    record: list[ToolCallRecord] | None = None
    if args.answers is not None and not args.pending:
        print("codemode: --answers resumes a --pending run; add --pending", file=sys.stderr)
        return EXIT_USAGE
    if args.pending:
        try:
            record = read_answers(Path(args.answers)) if args.answers else []
        except PendingFileError as exc:
            print(f"codemode: {exc}", file=sys.stderr)
            return EXIT_USAGE
    line = _progress_line()
    approver = _approver(args.approve, program_on_stdin=args.file == "-", line=line)
    if isinstance(approver, str):
        print(f"codemode: {approver}", file=sys.stderr)
        return EXIT_USAGE
    as_text = not (args.json or args.pending)
    # On a terminal the program's output is shown as it prints it; a pipe gets it in one piece at the end.
    view = RunOutput(sys.stdout, sys.stderr, live=as_text and sys.stdout.isatty(), line=line)
    try:
        with (
            Toolbox(config) as toolbox,
            Executor(toolbox, approver=approver, executor=executor_settings) as executor,
        ):
            # A server's question during a call is asked on the terminal (declined when there is none).
            toolbox.hub.asking.person = (
                approver
                if hasattr(approver, "elicit")  # the terminal's approver: one person, one question at a time
                else _terminal_person(program_on_stdin=args.file == "-", line=line)
            )
            result: ExecutionResult | None = None
            try:
                result = executor.run(
                    code,
                    timeout=timeout,
                    replay=record,
                    pending=args.pending,
                    on_output=view.on_output,
                    on_call=view.on_call,
                )
            except KeyboardInterrupt:  # Ctrl-C: the worker was stopped (SIGINT, grace, SIGKILL) before this
                pass
            finally:
                if line is not None:
                    line.close()
            if result is None:  # said now, not after the servers are stopped (that takes a moment)
                return _interrupted(view, as_text=as_text)
    except KeyboardInterrupt:  # while the servers started or stopped
        return _interrupted(view, as_text=as_text)
    if result.status == "pending":
        print(json.dumps(pending_state(result, args.file), indent=2, ensure_ascii=False))
    elif args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(view.end_of_output() + format_result_text(result, output=not view.live))
    return result.exit_code


def _interrupted(view: RunOutput, *, as_text: bool) -> int:
    """Say once that the run was interrupted (after what it printed, unless shown already); exit 130."""
    if not view.reported:
        view.reported = True
        if as_text:
            sys.stdout.write(view.interrupted_text())
            sys.stdout.flush()
        else:  # stdout is for JSON
            print(f"codemode: {view.interrupted_status()}", file=sys.stderr)
    return EXIT_INTERRUPTED


def _progress_line() -> ProgressLine | None:
    """The run's progress line on stderr, when stderr is a terminal."""
    from .terminal_progress import ProgressLine

    if not sys.stderr.isatty():
        return None
    return ProgressLine(sys.stderr, width=shutil.get_terminal_size().columns - 1)


def _approver(
    choice: str | None, *, program_on_stdin: bool, line: ProgressLine | None = None
) -> Approver | str | None:
    """Who decides the run's calls that need approval; a str is a usage error to print.

    ``line``: the terminal's progress line, erased while a question waits for its answer there.
    """
    from .approvals import approve_all, deny_all

    if choice == "all":
        return approve_all
    terminal = sys.stdin.isatty() and not program_on_stdin
    if choice == "none":
        return deny_all
    if choice is None and not terminal:
        return None  # nobody to ask: such a call is denied with a message naming the fix
    if not terminal:
        return "--approve ask needs a terminal on standard input; use --approve all or --approve none"
    return _terminal_person(program_on_stdin=program_on_stdin, line=line)


def _terminal_person(*, program_on_stdin: bool, line: ProgressLine | None) -> PromptApprover | None:
    """The person at the terminal, asked a line at a time on stderr/stdin; None off a terminal."""
    from .approvals import PromptApprover

    if program_on_stdin or not sys.stdin.isatty():
        return None

    async def ask(question: str) -> str:
        if line is not None:
            line.hold()
        try:
            sys.stderr.write(question)
            sys.stderr.flush()
            answer = await _read_line()
        finally:
            if line is not None:
                line.release()
        if not answer:
            raise EOFError
        return answer

    return PromptApprover(ask)


async def _read_line() -> str:
    """A line typed on standard input, read on a daemon thread.

    Not ``asyncio.to_thread``: its worker threads are joined at exit, so after Ctrl-C at a question the
    process would wait for a line nobody types.
    """
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def give(text: str) -> None:
        if not line.done():  # the question may have been withdrawn meanwhile
            line.set_result(text)

    def read() -> None:
        text = sys.stdin.readline()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(give, text)

    threading.Thread(target=read, name="codemode-stdin", daemon=True).start()
    return await line


class _UnreadableProgramError(Exception):
    """The program file cannot be read or decoded: a usage error (exit 2), not an error of the program."""


def _read_program(source: str) -> str:
    """The program's text, decoded as Python decodes a source file.

    That is UTF-8 (with or without a byte order mark) unless a coding comment on line 1 or 2 says
    otherwise (PEP 263), so a file ``python prog.py`` runs is read the same way here.
    """
    name = "standard input" if source == "-" else source
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as exc:
        raise _UnreadableProgramError(f"cannot read {source}: {exc.strerror}") from None
    declared: str | None = None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # An unknown declared encoding, or a first line that is not UTF-8 (decoding below says where).
        encoding, declared = "utf-8", exc.msg
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        label = "UTF-8" if encoding.startswith("utf-8") else f"{encoding} (as its coding comment says)"
        line = data.count(b"\n", 0, exc.start) + 1
        raise _UnreadableProgramError(
            f"{name}: not {label} text: byte 0x{data[exc.start]:02x} at position {exc.start} "
            f"(line {line}) cannot be decoded\n  fix: save it as UTF-8, or declare its encoding in a "
            "comment on line 1 or 2, e.g. # -*- coding: latin-1 -*-"
        ) from None
    if declared is not None:
        raise _UnreadableProgramError(
            f"{name}: {declared}\n  fix: declare an encoding Python knows (e.g. # -*- coding: utf-8 -*-), "
            "or remove the coding comment"
        )
    return text


# -- serve --------------------------------------------------------------------------------------------


def _cmd_serve(args: argparse.Namespace) -> int:
    from .serve import serve
    from .serve.http import HttpAccess, http_access

    access: HttpAccess | None = None
    if args.transport == "http":
        try:
            access = http_access(
                args.host,
                token_env=args.token_env,
                allow_hosts=args.allow_host,
                allow_origins=args.allow_origin,
            )
        except ValueError as exc:
            print(f"codemode: {exc}", file=sys.stderr)
            return EXIT_USAGE
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how an HTTP server is stopped
        serve(
            args.config,
            transport=args.transport,
            host=args.host,
            port=args.port,
            access=access,
            executor_choice=args.executor,
        )
    return EXIT_OK


# -- install, lab ------------------------------------------------------------------------------------


def _cmd_install(args: argparse.Namespace) -> int:
    from .kernel.app import DISPLAY_NAME, KERNEL_NAME, install_kernel_spec

    prefix = sys.prefix if args.sys_prefix else args.prefix
    path = install_kernel_spec(user=prefix is None, prefix=prefix)
    print(f"installed the kernelspec {KERNEL_NAME!r} ({DISPLAY_NAME}) in {path}")
    return EXIT_OK


def _cmd_lab(args: argparse.Namespace) -> int:
    from .kernel.lab import run_lab

    return run_lab(args.port, browser=not args.no_browser)


# -- trust --------------------------------------------------------------------------------------------


def _cmd_trust(args: argparse.Namespace) -> int:
    if args.path:
        path = Path(args.path)
    else:
        found, origin = find_config()
        if found is None or origin != "project":
            print(
                "codemode: no project config here (codemode.json, .mcp.json, .vscode/mcp.json)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        path = found
    project = project_config(path)  # a file with mistakes is reported, not trusted
    stored = project.trust()
    print(f"trusted {project.key} as it is now; remembered in {stored}")
    if project.risks:
        print("it may now:")
    for risk in project.risks:
        print(f"  {risk}")
    if project.record.runs:
        print("a change to any of these files asks again:")
    for file in project.record.runs:
        print(f"  {file}")
    return EXIT_OK


# -- login / logout -----------------------------------------------------------------------------------


def _cmd_login(args: argparse.Namespace) -> int:
    from .hub.auth_login import login, remote_server

    server = remote_server(load_config(args.config), args.server)

    def announce(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    result = asyncio.run(login(server, announce=announce, timeout=args.timeout))
    if not result.signed_in:
        print(f"{result.server}: no sign-in needed now ({result.tools} tools ready)")
    else:
        took = f" in {result.seconds:.2f} s from the link" if result.seconds is not None else ""
        print(f"signed in to {result.server}: {result.tools} tools ready{took}")
    return EXIT_OK


def _cmd_logout(args: argparse.Namespace) -> int:
    from .hub.auth_login import logout, remote_server

    server = remote_server(load_config(args.config), args.server)
    if logout(server):
        print(f"signed out of {server.name}: its tokens are deleted")
    else:
        print(f"{server.name}: no sign-in was stored")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
