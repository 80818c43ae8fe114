"""A kernel whose parent left SIGINT ignored or blocked (or SIGCHLD ignored) runs and interrupts cells.

A process started with ``&`` from a script (and under some service managers) inherits SIGINT as ignored; a
parent may also leave it blocked in the signal mask, or SIGCHLD ignored. All pass on to everything it
starts. The kernel is started here through a wrapper that leaves one of them so and then ``exec``s the
kernelspec's own command, as such a parent would; it is interrupted by signal or by message, and the next
cell shows its result.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, run_and_interrupt, start_kernel
from test_kernel_protocol import OSLO_NOW, OSLO_NOW_SHOWN

from codemode_kernel.executor import DEFAULT_GRACE

INHERITED = {
    "ignored": "signal.signal(signal.SIGINT, signal.SIG_IGN)",
    "blocked": "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])",
    "sigchld-ignored": "signal.signal(signal.SIGCHLD, signal.SIG_IGN)",
}
"""What a parent may leave behind: SIGINT ignored (``&`` in a script) or blocked (in the signal mask), and
SIGCHLD ignored (children then vanish unwaited, so no wait for one finds it)."""


def wrapper(inherited: str) -> str:
    """``python -c`` code that leaves SIGINT ``inherited`` and then ``exec``s the rest of its arguments."""
    return (
        f"import os, signal, sys; {INHERITED[inherited]}; "
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    )


@pytest.fixture(
    scope="module",
    params=[
        ("ignored", "signal"),
        ("ignored", "message"),
        ("blocked", "signal"),
        ("blocked", "message"),
        ("sigchld-ignored", "message"),
    ],
    ids="-".join,
)
def inherited_signals_kernel(
    request: pytest.FixtureRequest, jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    """A kernel whose parent left a signal as ``INHERITED`` says; its spec says how to interrupt it."""
    path = tmp_path_factory.mktemp("signals-inherited") / "share" / "jupyter"
    spec_dir = path / "kernels" / "codemode"
    shutil.copytree(jupyter_path / "kernels" / "codemode", spec_dir)
    spec = json.loads((spec_dir / "kernel.json").read_text())
    inherited, mode = request.param
    argv = [sys.executable, "-c", wrapper(inherited), *spec["argv"][1:]]
    (spec_dir / "kernel.json").write_text(json.dumps({**spec, "argv": argv, "interrupt_mode": mode}))
    with pytest.MonkeyPatch.context() as monkeypatch:
        k = start_kernel(path, tmp_path_factory.mktemp("notebook"), monkeypatch)
    try:
        assert k.manager.kernel_spec is not None and k.manager.kernel_spec.interrupt_mode == mode
        yield k
    finally:
        k.client.stop_channels()
        k.manager.shutdown_kernel(now=False)


def test_an_interrupted_codemode_cell_stops_and_the_next_cell_shows_its_output(
    inherited_signals_kernel: Kernel,
) -> None:
    k = inherited_signals_kernel
    code = "%%codemode --timeout 120\nimport time\nprint('busy', flush=True)\ntime.sleep(60)"
    reply, delay = run_and_interrupt(k, code, started="busy")
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt", reply
    assert delay < DEFAULT_GRACE + 1
    assert k.run(OSLO_NOW).data() == [OSLO_NOW_SHOWN]  # a fresh worker, the same tools
