"""Where programs run, as a person writes it: in a file, on the command line, in the kernel.

``"executor"`` in a config file, ``--executor ray=ADDRESS`` on ``codemode run`` and ``codemode serve``,
``%codemode executor ray=ADDRESS`` in the kernel. One parser for these front doors, so a bad address gets
the same message and the same list of the accepted forms everywhere. Ray itself is an optional dependency
(``codemode-kernel[ray]``): whether it is installed is checked here before anything starts, so the person
reads how to install it instead of an ImportError from deep inside the executor.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Literal

from ..core.errors import CodeModeError
from .models import Config, ExecutorSettings

__all__ = [
    "ADDRESS_FORMS",
    "CHOICE_FORMS",
    "RAY_MISSING",
    "ExecutorChoice",
    "RayNotInstalledError",
    "address_problem",
    "chosen_executor",
    "describe_executor",
    "parse_choice",
    "require_ray",
]

ADDRESS_FORMS = (
    '"auto" (the cluster this machine joined with ray start), "HOST:PORT" (the head node\'s GCS) or '
    '"ray://HOST:10001" (Ray Client)'
)
"""The Ray addresses accepted, as messages list them."""

CHOICE_FORMS = "local, ray, ray=auto, ray=HOST:PORT or ray=ray://HOST:10001"
"""The values of ``--executor`` and ``%codemode executor``."""

RAY_MISSING = 'the Ray executor needs Ray: pip install "codemode-kernel[ray]"'


class RayNotInstalledError(CodeModeError):
    """The Ray backend was chosen but Ray is not installed: a usage problem with a one-line fix."""


@dataclass(frozen=True)
class ExecutorChoice:
    """A backend (and maybe an address) chosen on the command line or in the kernel, over the config's.

    The config's resources stay: they describe what one program needs, not where it runs.
    """

    backend: Literal["local", "ray"]
    address: str | None = None
    """None keeps the config's address (``ray`` alone: the config's cluster, else ``auto``)."""

    def apply(self, settings: ExecutorSettings) -> ExecutorSettings:
        """``settings`` with this backend, and this address when one was given."""
        address = settings.address if self.address is None else self.address
        return settings.model_copy(update={"backend": self.backend, "address": address})


def parse_choice(text: str) -> ExecutorChoice:
    """Read ``local``, ``ray`` or ``ray=ADDRESS``; a ValueError naming the accepted forms otherwise."""
    backend, equals, address = text.strip().partition("=")
    if backend == "local" and not equals:
        return ExecutorChoice("local")
    if backend == "ray" and not equals:
        return ExecutorChoice("ray")
    if backend == "ray" and address:
        problem = address_problem(address)
        if problem is not None:
            raise ValueError(f"{problem}; write {CHOICE_FORMS}")
        return ExecutorChoice("ray", address)
    raise ValueError(f"{text!r} is not an executor; write {CHOICE_FORMS}")


def address_problem(address: str) -> str | None:
    """What is wrong with a Ray address (None: nothing), checked before Ray is asked to connect to it."""
    if address == "auto":
        return None
    client = address.startswith("ray://")
    rest = address.removeprefix("ray://")
    host, colon, port = rest.rpartition(":")
    if not colon:
        host, port = rest, ""
    if not host or any(c.isspace() or c in "/?#@" for c in host):
        return f'"{address}" is not a Ray address'
    if not port and client:
        return None  # Ray Client's port, 10001
    if not port:
        return (
            f'"{address}" has no port (the head node\'s GCS port, 6379 unless ray start was told otherwise)'
        )
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        return f'"{address}" has no valid port (a number from 1 to 65535 after the last ":")'
    return None


def require_ray(settings: ExecutorSettings) -> None:
    """Raise RayNotInstalledError when ``settings`` choose Ray and it is not installed.

    Only looked up, not imported: importing Ray takes seconds, and the executor imports it when it connects.
    """
    if settings.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise RayNotInstalledError(RAY_MISSING)


def chosen_executor(config: Config, choice: ExecutorChoice | None) -> ExecutorSettings:
    """The config's executor with ``choice`` (``--executor``, ``%codemode executor``) over it."""
    return config.executor if choice is None else choice.apply(config.executor)


def describe_executor(settings: ExecutorSettings) -> str:
    """One line on where programs run and what each reserves there, for status texts."""
    if settings.backend == "local":
        return "local (a worker process on this machine per program)"
    resources = settings.resources
    reserved = [f"{resources.cpus:g} CPU"]
    if resources.gpus:
        reserved.append(f"{resources.gpus:g} GPU")
    if resources.memory_mb is not None:
        reserved.append(f"{resources.memory_mb} MiB")
    reserved += [f"{amount:g} {name}" for name, amount in sorted(resources.custom.items())]
    return f"ray at {settings.address or 'auto'} (each program reserves {', '.join(reserved)})"
