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
from ._mounts import HidingPlan, plan_hiding
from ._policy import SandboxPolicy

__all__ = ["Protections", "plan"]


@dataclass(frozen=True)
class Protections:
    """The layers in force, in the order they are applied, and the missing ones with their reasons.

    Attributes:
        in_force: e.g. ``("max_processes:cgroup", "pid_namespace", "network_namespace", ...)``.
        not_in_force: ``((layer, reason), ...)``: unavailable here, or turned off by the policy.
        warnings: gaps inside a layer that is in force (a hidden path that can still be created).
    """

    in_force: tuple[str, ...]
    not_in_force: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()

    def __contains__(self, layer: object) -> bool:
        return layer in self.in_force

    def missing(self) -> dict[str, str]:
        """``{layer: reason}`` for every layer not in force."""
        return dict(self.not_in_force)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"in_force": [...], "not_in_force": {layer: reason}, "warnings": [...]}``."""
        return {
            "in_force": list(self.in_force),
            "not_in_force": self.missing(),
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Protections:
        """The inverse of ``to_dict`` (for the report a worker sends over its channel)."""
        missing = data.get("not_in_force") or {}
        return cls(
            tuple(str(layer) for layer in data.get("in_force") or ()),
            tuple((str(layer), str(reason)) for layer, reason in dict(missing).items()),
            tuple(str(warning) for warning in data.get("warnings") or ()),
        )


def _why(caps: Capabilities, *features: str, default: str) -> str:
    for feature in features:
        if reason := caps.reason(feature):
            return reason
    return default


def plan(policy: SandboxPolicy, caps: Capabilities, *, hiding: HidingPlan | None = None) -> Protections:
    """The protections ``enter_sandbox(policy, caps)`` applies, and those it cannot, with reasons.

    ``hiding`` is the ``plan_hiding`` result when the caller has one already (its warnings are included).
    """
    on: list[str] = []
    off: dict[str, str] = {}
    warnings: list[str] = []
    privileged = caps.is_root or caps.namespace_mode == "user"  # holds CAP_SYS_ADMIN while setting up

    if policy.max_processes is None:
        off["max_processes"] = "no limit set by the policy"
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
    elif caps.network_namespace:
        on.append("network_namespace")
    else:
        off["network_namespace"] = _why(caps, "network_namespace", default="unavailable")
    if caps.mount_namespace:
        on.append("mount_namespace:hidden_paths")
        hiding = hiding or plan_hiding(policy.hidden_paths(), policy.writable_paths())
        warnings.extend(hiding.warnings)
    else:
        off["mount_namespace:hidden_paths"] = _why(caps, "mount_namespace", default="unavailable")

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
    can_confine = caps.linux and (policy.no_new_privs or privileged)
    if caps.landlock_abi == 0 or not can_confine:
        reason = caps.reason("landlock") or "needs no_new_privs (turned off by the policy)"
        off.update({"landlock:fs_write": reason, "landlock:net": reason, "landlock:scoped": reason})
    else:
        on.append("landlock:fs_write")
        if policy.network:
            off["landlock:net"] = "network allowed by the policy"
        elif caps.landlock_abi >= 4:
            on.append("landlock:net")
        else:
            off["landlock:net"] = f"Landlock ABI {caps.landlock_abi} has no network rules (needs 4)"
        if caps.landlock_abi >= 6:
            on.append("landlock:scoped")
        else:
            off["landlock:scoped"] = f"Landlock ABI {caps.landlock_abi} has no scoping (needs 6)"
    if caps.seccomp and can_confine:
        on.append("seccomp")
    else:
        off["seccomp"] = caps.reason("seccomp") or "needs no_new_privs (turned off by the policy)"
    if caps.linux:
        on.append("capabilities_dropped")
    else:
        off["capabilities_dropped"] = "not Linux"
    return Protections(tuple(on), tuple(off.items()), tuple(warnings))
