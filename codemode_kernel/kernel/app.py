"""``python -m codemode_kernel``: launch the kernel, or ``install`` its kernelspec."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
from collections.abc import Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, cast

from ipykernel.kernelapp import IPKernelApp
from traitlets import Dict
from traitlets.traitlets import MetaHasTraits

__all__ = ["KERNEL_NAME", "CodeModeKernelApp", "install_kernel_spec", "kernel_json", "main"]

KERNEL_NAME = "codemode"
DISPLAY_NAME = "Code Mode (Python 3)"
SPEC_DIR = "kernelspec"
"""The kernelspec's directory: ``kernelspec/`` at the top of the source tree, which the wheel puts into this
package (``codemode_kernel/kernel/kernelspec``) and ships once more as ``share/jupyter/kernels/codemode``."""
SPEC_FILES = ("kernel.json", "logo-32x32.png", "logo-64x64.png", "logo-svg.svg")


class CodeModeKernelApp(IPKernelApp):
    """ipykernel's app running CodeModeKernel; its ``install`` is ours, not ipykernel's plain one.

    Its name makes IPython read ``codemode_kernel_config.py`` (beside ``ipython_config.py``) from the profile
    and the system config directories: where an admin sets ``c.CodeModeKernel.*`` (docs/configuration.md).
    """

    name = "codemode-kernel"
    subcommands = Dict({})

    def initialize(self, argv: Any = None) -> None:
        """Initialize as ipykernel does, with the kernel class's options known to ``--help-all``."""
        if self.kernel_class not in self.classes:
            self.classes = [*self.classes, cast(MetaHasTraits, self.kernel_class)]
        super().initialize(argv)  # type: ignore[no-untyped-call]


def kernel_spec_files() -> dict[str, bytes]:
    """The kernelspec as shipped (``kernel.json`` and the logos), read from its one copy.

    The wheel ships the same directory as shared data, so ``pip install`` alone registers the kernel; this
    reader serves the installer, so both always agree.
    """
    spec_dir: Traversable = resources.files("codemode_kernel.kernel").joinpath(SPEC_DIR)
    if not spec_dir.is_dir():  # a source tree (an editable install): the top-level directory itself
        spec_dir = Path(__file__).resolve().parents[2] / SPEC_DIR
    return {name: spec_dir.joinpath(name).read_bytes() for name in SPEC_FILES}


def kernel_json(executable: str = "python") -> dict[str, Any]:
    """The ``kernel.json`` content, its interpreter replaced by ``executable``.

    The shipped copy says ``python`` (jupyter_client runs it with its own interpreter, the environment's);
    an installed one names this Python, so a Jupyter from another environment still finds the package.
    """
    spec: dict[str, Any] = json.loads(kernel_spec_files()["kernel.json"])
    spec["argv"] = [executable, *spec["argv"][1:]]
    return spec


def install_kernel_spec(*, user: bool = False, prefix: str | None = None) -> str:
    """Write the ``codemode`` kernelspec (this Python, the logos) for the user or under a prefix.

    Returns the directory it was installed in (``PREFIX/share/jupyter/kernels/codemode`` with a prefix).
    """
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as tmp:
        staged = Path(tmp) / KERNEL_NAME
        staged.mkdir()
        for name, content in kernel_spec_files().items():
            (staged / name).write_bytes(content)
        (staged / "kernel.json").write_text(json.dumps(kernel_json(sys.executable), indent=1) + "\n")
        installed: str = KernelSpecManager().install_kernel_spec(
            str(staged), kernel_name=KERNEL_NAME, user=user, prefix=prefix
        )
    return installed


def install_main(argv: Sequence[str], prog: str = "python -m codemode_kernel install") -> int:
    """The ``install`` command line: ``[--user | --sys-prefix | --prefix P]`` (default ``--user``)."""
    parser = argparse.ArgumentParser(prog=prog, description=f"Install the {DISPLAY_NAME} kernelspec.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user (the default)")
    where.add_argument("--sys-prefix", action="store_true", help=f"into this environment ({sys.prefix})")
    where.add_argument("--prefix", metavar="P", help="under prefix P (P/share/jupyter/kernels)")
    args = parser.parse_args(argv)
    prefix = sys.prefix if args.sys_prefix else args.prefix
    path = install_kernel_spec(user=prefix is None, prefix=prefix)
    print(f"installed the kernelspec {KERNEL_NAME!r} ({DISPLAY_NAME}) in {path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Launch the kernel (``-f CONNECTION_FILE``), or run ``install``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["install"]:
        return install_main(args[1:])
    from ..worker.interrupts import handle_interrupts
    from .kernel import CodeModeKernel

    # Before any thread starts (they inherit the mask): an interrupt must reach the kernel whatever SIGINT
    # its parent left ignored or blocked. ipykernel then ignores SIGINT between requests, handles it in them.
    handle_interrupts()
    # An inherited ignored SIGCHLD reaps children by itself: no wait (for a worker, a server) would find one.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    CodeModeKernelApp.launch_instance(argv=args, kernel_class=CodeModeKernel)
    return 0
