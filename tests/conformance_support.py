"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``), run for real by tests.

``conformance server --url URL --scenario S`` drives a server; ``conformance client --command CMD
--scenario S`` (or ``--suite auth``) starts a scenario server and runs ``CMD URL``, giving CMD
``MCP_CONFORMANCE_SCENARIO`` and, for pre-registered credentials, ``MCP_CONFORMANCE_CONTEXT`` (JSON) in its
environment. Each scenario writes its checks to ``OUTPUT/[server-]SCENARIO-TIMESTAMP/checks.json`` (a list
of ``{id, name, description, status, errorMessage?, details?}``; status is SUCCESS, FAILURE, WARNING or INFO);
that file, not the coloured console text, is what is parsed here.

Version 0.1.16 imports ``fs.globSync`` (Node 22, used only by its ``tier-check`` command) and so fails to load
on Node 20. npm ci would undo an edit in node_modules, so each test process writes a patched copy of the
package's single entry file into a temp dir (beside links to the package's own ``node_modules`` and the
one above it, so its imports resolve as before); a package whose text no longer matches fails loudly
instead of running unpatched.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from tests.conftest import ROOT

__all__ = [
    "Check",
    "ConformanceResult",
    "conformance_entry",
    "list_scenarios",
    "run_client_scenario",
    "run_server_scenario",
]

NODE_MODULES = ROOT / "tests" / "node" / "node_modules"
PACKAGE = NODE_MODULES / "@modelcontextprotocol" / "conformance"
ENTRY = PACKAGE / "dist" / "index.js"
PINNED = "0.1.16"
# The one import Node 20 lacks, and what replaces it (only `tier-check`, which no test runs, calls it).
GLOB_IMPORT = "globSync as o,"
GLOB_STUB = "const o=()=>[];"
_TIMESTAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the CLI colours its console text whatever NO_COLOR says


@dataclass(frozen=True)
class Check:
    """One check of one scenario, as the suite reported it."""

    scenario: str
    id: str
    name: str
    status: str  # SUCCESS, FAILURE, WARNING or INFO
    description: str
    message: str  # errorMessage, or a warning's details.message; "" when the suite gave none

    def line(self) -> str:
        text = f"{self.status} {self.scenario}/{self.id}: {self.description}"
        return f"{text} -- {self.message}" if self.message else text


@dataclass(frozen=True)
class ConformanceResult:
    """What one ``conformance`` run reported: every check of every scenario it ran, and its console output."""

    command: tuple[str, ...]
    returncode: int
    checks: tuple[Check, ...]
    output: str  # the CLI's stdout and stderr (a client scenario's client output is in there too)

    @property
    def scenarios(self) -> list[str]:
        return sorted({check.scenario for check in self.checks})

    @property
    def failures(self) -> list[Check]:
        return [check for check in self.checks if check.status == "FAILURE"]

    @property
    def warnings(self) -> list[Check]:
        return [check for check in self.checks if check.status == "WARNING"]

    @property
    def successes(self) -> list[Check]:
        return [check for check in self.checks if check.status == "SUCCESS"]

    @property
    def passed(self) -> bool:
        """Every check passed (INFO checks are only notes): no failure, no warning, at least one success."""
        return bool(self.successes) and not self.failures and not self.warnings

    def summary(self) -> str:
        """The checks that did not pass, one a line, then the CLI's output: what an assertion should print."""
        bad = [check.line() for check in self.checks if check.status in ("FAILURE", "WARNING")]
        head = "\n".join(bad) or f"{len(self.successes)} checks passed, none failed"
        return f"{head}\n--- {shlex.join(self.command)} (exit {self.returncode}) ---\n{self.output}"


@cache
def conformance_entry() -> Path:
    """A copy of the suite's CLI that Node 20 loads, made once per test process; fails loudly if it cannot."""
    if not ENTRY.is_file():
        raise AssertionError(
            f"{ENTRY} is missing: run scripts/test.sh "
            "(its npm ci in tests/node installs @modelcontextprotocol/conformance)"
        )
    version = json.loads((PACKAGE / "package.json").read_text())["version"]
    text = ENTRY.read_text()
    if GLOB_IMPORT not in text:
        raise AssertionError(
            f"{ENTRY} (version {version}, pinned {PINNED}) no longer contains {GLOB_IMPORT!r}: the Node 20 "
            "patch in tests/conformance_support.py must be redone for this version (or use Node 22 unpatched)"
        )
    shebang, _, rest = text.partition("\n")
    patched = f"{shebang}\n{GLOB_STUB}\n{rest.replace(GLOB_IMPORT, '', 1)}"
    # Imports resolve as from the package itself: its own node_modules first (npm nests a dependency whose
    # version differs from the hoisted one there), then tests/node/node_modules.
    folder = Path(tempfile.mkdtemp(prefix="conformance-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    package = folder / "package"
    package.mkdir()
    if (PACKAGE / "node_modules").is_dir():
        (package / "node_modules").symlink_to(PACKAGE / "node_modules", target_is_directory=True)
    (package / "package.json").write_text('{"type": "module"}')
    entry = package / "index.js"
    entry.write_text(patched)
    return entry


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise AssertionError("node is not on PATH: the MCP conformance suite needs Node.js 20 or newer")
    return node


def _run(
    args: Sequence[str], timeout: float, env: Mapping[str, str] | None, prefix: str
) -> ConformanceResult:
    """Run the suite's CLI with ``args`` and an output dir of its own; parse every checks.json it wrote."""
    with tempfile.TemporaryDirectory(prefix="conformance-results-") as out:
        command = (_node(), str(conformance_entry()), *args, "--output-dir", out)
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
        output = _ANSI.sub("", done.stdout + done.stderr)
        checks: list[Check] = []
        for path in sorted(Path(out).rglob("checks.json")):
            folder = path.parent.relative_to(out).as_posix()
            scenario = _TIMESTAMP.sub("", folder).removeprefix(prefix)
            checks.extend(_check(scenario, raw) for raw in json.loads(path.read_text()))
    if not checks:
        raise AssertionError(f"the conformance suite reported no checks (exit {done.returncode}):\n{output}")
    return ConformanceResult(command, done.returncode, tuple(checks), output)


def _check(scenario: str, raw: dict[str, object]) -> Check:
    details = raw.get("details")
    note = details.get("message") if isinstance(details, dict) else None
    message = raw.get("errorMessage") or note or ""
    return Check(
        scenario=scenario,
        id=str(raw.get("id", "")),
        name=str(raw.get("name", "")),
        status=str(raw.get("status", "")),
        description=str(raw.get("description", "")),
        message=str(message),
    )


def run_server_scenario(url: str, scenario: str, *, timeout: float = 120) -> ConformanceResult:
    """``conformance server --url URL --scenario SCENARIO``: the suite as a client of the server at URL."""
    return _run(("server", "--url", url, "--scenario", scenario), timeout, None, "server-")


def run_client_scenario(
    command: Sequence[str] | str,
    scenario: str | None = None,
    *,
    suite: str | None = None,
    timeout: float = 300,
    client_timeout_ms: int = 30_000,
    env: Mapping[str, str] | None = None,
) -> ConformanceResult:
    """``conformance client --command CMD --scenario S`` (or ``--suite S``): the suite as the client's server.

    The suite runs ``CMD URL`` through a shell after splitting CMD on spaces, so a list ``command`` is
    shell-quoted here; CMD gets ``MCP_CONFORMANCE_SCENARIO`` (and maybe ``MCP_CONFORMANCE_CONTEXT``) plus
    this process's environment and ``env``.
    """
    if (scenario is None) == (suite is None):
        raise ValueError("run_client_scenario takes exactly one of scenario and suite")
    line = command if isinstance(command, str) else shlex.join(command)
    which = ("--scenario", scenario) if scenario is not None else ("--suite", str(suite))
    args = ("client", "--command", line, *which, "--timeout", str(client_timeout_ms))
    return _run(args, timeout, env, "")


def list_scenarios(kind: Literal["server", "client"]) -> list[str]:
    """The scenario names ``conformance list --server`` (or ``--client``) prints."""
    command = (_node(), str(conformance_entry()), "list", f"--{kind}")
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    return re.findall(r"^\s+- (\S+)", done.stdout, re.MULTILINE)
