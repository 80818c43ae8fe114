"""``python -m codemode_kernel``: launch the kernel, or ``install`` its kernelspec."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ipykernel.kernelapp import IPKernelApp
from traitlets import Dict

__all__ = ["KERNEL_NAME", "CodeModeKernelApp", "install_kernel_spec", "main"]

KERNEL_NAME = "codemode"
DISPLAY_NAME = "Code Mode (Python 3)"


class CodeModeKernelApp(IPKernelApp):
    """ipykernel's app running CodeModeKernel; its ``install`` is ours, not ipykernel's plain one."""

    name = "codemode-kernel"
    subcommands = Dict({})


def install_kernel_spec(*, user: bool = False, prefix: str | None = None) -> str:
    """Write the ``codemode`` kernelspec (this Python) for the user or under a prefix; returns its dir."""
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager

    overrides = {
        "argv": [sys.executable, "-m", "codemode_kernel", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "metadata": {"debugger": True},
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = write_kernel_spec(Path(tmp) / KERNEL_NAME, overrides=overrides)
        installed: str = KernelSpecManager().install_kernel_spec(
            path, kernel_name=KERNEL_NAME, user=user, prefix=prefix
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
    from .kernel import CodeModeKernel

    CodeModeKernelApp.launch_instance(argv=args, kernel_class=CodeModeKernel)
    return 0
