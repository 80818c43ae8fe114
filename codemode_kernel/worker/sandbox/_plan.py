"""Which protections a policy gets on a machine, and why each missing one is missing.

``plan()`` is pure, and ``enter_sandbox`` applies exactly the plan or fails, so the list a worker reports
is the list that was applied, never a hope. What users see (a result's ``protections``, ``codemode
doctor``, ``%codemode status``) is always such a report from a real worker (``Executor.protections()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._capabilities import Capabilities
from ._mounts import HidingPlan, import_roots, plan_hiding
from ._policy import SandboxPolicy

__all__ = ["Protections", "plan", "plan_mounts"]


@dataclass(frozen=True)
class Protections:
    """The layers in force, in the order they are applied, and the missing ones with their reasons.

    Attributes:
        in_force: e.g. ``("max_processes:cgroup", "pid_namespace", "network_namespace", ...)``.
        not_in_force: ``((layer, reason), ...)``: unavailable here, or turned off by the policy.
        warnings: gaps inside a layer that is in force (a hidden path that can still be created).
        turned_off: the layers of ``not_in_force`` that the policy (the user's settings) turned off, as
            opposed to layers this machine cannot apply; only the latter are problems.
    """

    in_force: tuple[str, ...]
    not_in_force: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    turned_off: tuple[str, ...] = ()

    def __contains__(self, layer: object) -> bool:
        return layer in self.in_force

    @classmethod
    def no_worker(cls, reason: str) -> Protections:
        """The report when no worker could start: nothing in force, the whole sandbox missing."""
        return cls((), (("sandbox", f"no worker could start: {reason}"),))

    def missing(self) -> dict[str, str]:
        """``{layer: reason}`` for every layer not in force."""
        return dict(self.not_in_force)

    def unavailable(self) -> dict[str, str]:
        """``{layer: reason}`` for the layers not in force that the policy did not turn off."""
        return {layer: reason for layer, reason in self.not_in_force if layer not in self.turned_off}

    def describe(self, heading: str) -> str:
        """``heading: <layers in force>``, then a line per layer ``off`` or ``MISSING`` and per warning.

        One text for ``codemode doctor`` and ``%codemode status``, so the two never disagree; a missing
        layer is loud, one the user's settings turned off is not.
        """
        lines = [f"{heading}: {', '.join(self.in_force) or 'nothing'}"]
        for layer, reason in self.not_in_force:
            lines.append(f"  {'off' if layer in self.turned_off else 'MISSING'} {layer}: {reason}")
        lines.extend(f"  warning: {warning}" for warning in self.warnings)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"in_force": [...], "not_in_force": {layer: reason}, "warnings": [...], ...}``."""
        return {
            "in_force": list(self.in_force),
            "not_in_force": self.missing(),
            "warnings": list(self.warnings),
            "turned_off": list(self.turned_off),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Protections:
        """The inverse of ``to_dict`` (for the report a worker sends over its channel)."""
        missing = data.get("not_in_force") or {}
        return cls(
            tuple(str(layer) for layer in data.get("in_force") or ()),
            tuple((str(layer), str(reason)) for layer, reason in dict(missing).items()),
            tuple(str(warning) for warning in data.get("warnings") or ()),
            tuple(str(layer) for layer in data.get("turned_off") or ()),
        )


def _why(caps: Capabilities, *features: str, default: str) -> str:
    for feature in features:
        if reason := caps.reason(feature):
            return reason
    return default


def plan_mounts(policy: SandboxPolicy) -> HidingPlan:
    """How the mount layer treats ``policy``'s hidden and read-only paths in this interpreter."""
    return plan_hiding(
        policy.hidden_paths(),
        policy.writable_paths(),
        policy.read_only_paths(),
        keep_visible=import_roots(),
    )


def plan(policy: SandboxPolicy, caps: Capabilities, *, hiding: HidingPlan | None = None) -> Protections:
    """The protections ``enter_sandbox(policy, caps)`` applies, and those it cannot, with reasons.

    ``hiding`` is the ``plan_mounts`` result when the caller has one already (its warnings are included).
    """
    on: list[str] = []
    off: dict[str, str] = {}
    warnings: list[str] = []
    turned_off: list[str] = []  # the layers of ``off`` that the policy itself turned off
    privileged = caps.is_root or caps.namespace_mode == "user"  # holds CAP_SYS_ADMIN while setting up

    if policy.max_processes is None:
        off["max_processes"] = "no limit set by the policy"
        turned_off.append("max_processes")
    elif caps.is_root and caps.pids_cgroup:
        on.append("max_processes:cgroup")
    elif caps.is_root:
        off["max_processes"] = "root ignores RLIMIT_NPROC and " + _why(
            caps, "pids_cgroup", default="no pids cgroup"
        )
    elif not caps.linux:
        off["max_processes"] = "RLIMIT_NPROC counts every process of the user outside Linux namespaces"
    elif caps.namespace_mode != "user":
        warnings.append("max_processes counts every process of this uid (no user namespace to count in)")

    if caps.namespace_mode == "user":
        on.append("user_namespace")
    if caps.pid_namespace:
        on.append("pid_namespace")
    else:
        off["pid_namespace"] = _why(caps, "pid_namespace", default="unavailable")
    if policy.network:
        off["network_namespace"] = "network allowed by the policy"
        turned_off.append("network_namespace")
    elif caps.network_namespace:
        on.append("network_namespace")
    else:
        off["network_namespace"] = _why(caps, "network_namespace", default="unavailable")
    if caps.mount_namespace:
        on.append("mount_namespace:hidden_paths")
        on.append("mount_namespace:read_only_paths")
        hiding = hiding or plan_mounts(policy)
        warnings.extend(hiding.warnings)
    else:
        why = _why(caps, "mount_namespace", default="unavailable")
        off["mount_namespace:hidden_paths"] = why
        off["mount_namespace:read_only_paths"] = why

    on.append("env_scrubbed")
    on.append("fds_closed")
    on.append("rlimits")
    if policy.max_processes is not None and not caps.is_root and caps.linux:
        on.append("max_processes:rlimit")

    if not caps.linux:
        off["no_new_privs"] = "not Linux"
    elif policy.no_new_privs:
        on.append("no_new_privs")
    else:
        off["no_new_privs"] = "turned off by the policy"
        turned_off.append("no_new_privs")
    can_confine = caps.linux and (policy.no_new_privs or privileged)
    needs_no_new_privs = "needs no_new_privs (turned off by the policy)"
    landlock = ("landlock:fs_write", "landlock:net", "landlock:scoped")
    if caps.landlock_abi == 0:
        off.update(dict.fromkeys(landlock, caps.reason("landlock") or "unavailable"))
    elif not can_confine:
        off.update(dict.fromkeys(landlock, needs_no_new_privs))
        turned_off.extend(landlock)
    else:
        on.append("landlock:fs_write")
        if policy.network:
            off["landlock:net"] = "network allowed by the policy"
            turned_off.append("landlock:net")
        elif caps.landlock_abi >= 4:
            on.append("landlock:net")
        else:
            off["landlock:net"] = f"Landlock ABI {caps.landlock_abi} has no network rules (needs 4)"
        if caps.landlock_abi >= 6:
            on.append("landlock:scoped")
        else:
            off["landlock:scoped"] = f"Landlock ABI {caps.landlock_abi} has no scoping (needs 6)"
    if not caps.seccomp:
        off["seccomp"] = caps.reason("seccomp") or "unavailable"
    elif can_confine:
        on.append("seccomp")
    else:
        off["seccomp"] = needs_no_new_privs
        turned_off.append("seccomp")
    if caps.linux:
        on.append("capabilities_dropped")
    else:
        off["capabilities_dropped"] = "not Linux"
    return Protections(tuple(on), tuple(off.items()), tuple(warnings), tuple(turned_off))
