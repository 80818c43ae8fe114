"""The executor reaps every process it started, even under a PID 1 that never reaps anything.

A container started without an init has such a PID 1: whatever is orphaned to it stays a zombie for good.
The test makes one (``unshare --pid --fork --mount-proc``: the script below is PID 1 of a new PID
namespace and only passes a report on), runs an executor in its child, stops 200 runs in the three ways a
run is stopped (its deadline, the caller giving up, SIGKILL of the process that supervises it) and closes
the executor; then it looks at every process of that namespace through its /proc.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r'''
import asyncio, ctypes, json, os, signal, sys, time
from pathlib import Path

read_end, write_end = os.pipe()
if os.fork():
    # PID 1 of this namespace: it never waits for a child, it only passes the child's report on.
    os.close(write_end)
    report = b""
    while chunk := os.read(read_end, 65536):
        report += chunk
    os.write(1, report)
    os._exit(0)
os.close(read_end)

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor

NAME = "codemode-stopme"
STUBBORN = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
NAMED = f"import ctypes\nctypes.CDLL(None).prctl(15, b'{NAME}', 0, 0, 0)\n"
WAIT = "print('ready', flush=True)\nwhile True:\n    time.sleep(0.01)\n"


def processes():
    """{pid: (state, ppid, comm)} of every process in this namespace but this one and PID 1."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (1, os.getpid()):
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            comm, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
            found[int(entry)] = (rest[0], int(rest[1]), comm)
    return found


def leftovers():
    """Zombies anywhere, and orphans: processes handed to PID 1."""
    ps = processes()
    return {
        "zombies": sorted(p for p, (state, _, _) in ps.items() if state == "Z"),
        "orphans": sorted(p for p, (_, ppid, _) in ps.items() if ppid == 1),
    }


def kill_supervisors(_stream, _text):
    """SIGKILL the process that supervises each named program (its parent, outside its PID namespace).

    Never the zygote (a child of this process): a program whose supervisor was just killed is handed to
    the zygote, its subreaper, for the moment before the kernel ends it, and a later call would see that.
    """
    ps = processes()
    for pid, (state, ppid, comm) in ps.items():
        if comm == NAME[:15] and state != "Z" and ppid != 1 and ps.get(ppid, ("", 0, ""))[1] != os.getpid():
            os.kill(ppid, signal.SIGKILL)


async def stopped_runs(ex):
    statuses = []

    async def deadline():
        statuses.append((await ex.arun(STUBBORN + WAIT, timeout=1)).status)

    async def give_up():
        started = asyncio.Event()
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(
            ex.arun(STUBBORN + WAIT, on_output=lambda s, t: loop.call_soon_threadsafe(started.set))
        )
        await started.wait()
        task.cancel()
        statuses.append("cancelled")

    async def supervisor_killed():
        code = STUBBORN + NAMED + WAIT
        result = await ex.arun(code, on_output=kill_supervisors)
        statuses.append(result.status)
        if result.status != "crashed":
            errors.append(f"{result.status}: {result.error}")

    errors = []
    for kind, rounds, batch in ((deadline, 3, 20), (give_up, 4, 20), (supervisor_killed, 60, 1)):
        for _ in range(rounds):
            await asyncio.gather(*(kind() for _ in range(batch)))
    return statuses, errors


with Toolbox(load_config(sys.argv[1])) as tb:
    ex = Executor(tb, grace=0.2)
    statuses, errors = asyncio.run(stopped_runs(ex))
    deadline = time.monotonic() + 5
    while (before_close := leftovers()) != {"zombies": [], "orphans": []} and time.monotonic() < deadline:
        time.sleep(0.05)
    ex.close()
    after_close = {**leftovers(), "processes": processes()}
os.write(write_end, json.dumps(
    {"statuses": statuses, "errors": errors, "before_close": before_close, "after_close": after_close}
).encode())
os._exit(0)
'''


def test_no_zombie_and_no_orphan_after_200_stopped_runs_under_a_pid_1_that_never_reaps(
    tmp_path: Path,
) -> None:
    if os.geteuid() != 0:
        pytest.fail("this test makes a PID namespace with unshare and must run as root (CI runs as root)")
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": {}, "workspace": str(tmp_path)}))
    script = tmp_path / "never_reaps.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [
            "unshare",
            "--pid",
            "--fork",
            "--mount-proc",
            sys.executable,
            str(script),
            str(tmp_path / "codemode.json"),
        ],
        capture_output=True,
        text=True,
        timeout=110,
        env=env,
        cwd=tmp_path,
    )
    assert completed.returncode == 0 and completed.stdout, completed.stderr[-3000:]
    report = json.loads(completed.stdout)
    statuses = report["statuses"]
    assert len(statuses) == 200
    assert statuses.count("timeout") == 60 and statuses.count("cancelled") == 80
    assert statuses.count("crashed") == 60, (collections.Counter(statuses), report["errors"])
    assert report["before_close"] == {"zombies": [], "orphans": []}
    after = report["after_close"]
    assert after["zombies"] == [] and after["orphans"] == [], after
    assert after["processes"] == {}, "the executor's processes outlived close()"
