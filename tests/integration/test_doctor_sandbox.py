"""``codemode doctor`` shows the protections a real worker applied, the same list a run reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli as codemode

pytestmark = pytest.mark.integration

# Two settings the protections depend on beyond network and memory: a process limit turned off, and a
# hidden path the program could still create (a warning only the full policy knows about).
SANDBOX = {"maxProcesses": None, "hidden": ["token.txt"]}


def test_doctor_shows_what_a_worker_applies_as_a_run_reports_it(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    config = {"mcpServers": {}, "workspace": str(project), "defaults": {"codeMode": {"sandbox": SANDBOX}}}
    (project / "mine.json").write_text(json.dumps(config))

    run = codemode("run", "--json", "--config", "mine.json", "-", cwd=project, home=home, stdin="1")
    assert run.returncode == 0, run.stderr
    reported = json.loads(run.stdout)["protections"]
    in_force = [p for p in reported if not p.startswith("missing:")]
    missing = [p.removeprefix("missing:") for p in reported if p.startswith("missing:")]

    doctor = codemode("doctor", "--config", "mine.json", cwd=project, home=home)
    out = doctor.stdout
    assert f"\ncode-mode sandbox: {', '.join(in_force)}\n" in out, out
    listed = [line.split(" ", 3)[3] for line in out.splitlines() if line.startswith(("  off ", "  MISSING "))]
    assert listed == missing, out
    assert "  off max_processes: no limit set by the policy" in out
    (creatable,) = [line for line in out.splitlines() if "could be created in" in line]
    assert f"could be created in {project}, which programs may write: " in creatable
    assert "token.txt" in creatable.split(": ", 2)[-1].split(", "), creatable
    assert doctor.returncode == 0, out  # a layer the user turned off is not a problem
