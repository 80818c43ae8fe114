"""Network off: a socket to a port the test opened outside the sandbox cannot be reached, TCP nor UDP."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_sandbox_harness import (
    Dirs,
    attempt,
    dirs_fixture,  # noqa: F401
    identity_fixture,  # noqa: F401
    in_force,
    run,
    sandboxed,
)

from codemode_kernel.worker.sandbox import probe
from codemode_kernel.worker.sandbox._landlock import restrict
from codemode_kernel.worker.sandbox._libc import CLONE_NEWNET
from codemode_kernel.worker.sandbox._namespaces import unshare_namespaces
from codemode_kernel.worker.sandbox._privileges import set_no_new_privs
from codemode_kernel.worker.sandbox._seccomp import build_filter, install_filter


class Ports:
    def __init__(self) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        # Read here: the sandbox closes the child's copies of these sockets.
        self.tcp_port = self.tcp.getsockname()[1]
        self.udp_port = self.udp.getsockname()[1]

    def received_udp(self) -> bool:
        try:
            return bool(self.udp.recv(64))
        except BlockingIOError:
            return False


@pytest.fixture
def ports() -> Iterator[Ports]:
    opened = Ports()
    yield opened
    opened.tcp.close()
    opened.udp.close()


def _escapes(ports: Ports) -> dict[str, str]:
    tcp_port, udp_port = ports.tcp_port, ports.udp_port

    def connect() -> str:
        with socket.create_connection(("127.0.0.1", tcp_port), timeout=1):
            return "connected"

    def send_udp() -> int:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            return udp.sendto(b"leak", ("127.0.0.1", udp_port))

    def bind_tcp() -> str:
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen()
            return "listening"

    def unix_pair() -> str:
        left, right = socket.socketpair()
        left.sendall(b"ok")
        try:
            return right.recv(2).decode()
        finally:
            left.close()
            right.close()

    return {
        "connect": attempt(connect),
        "udp": attempt(send_udp),
        "bind": attempt(bind_tcp),
        "unix": attempt(unix_pair),
    }


def test_the_full_sandbox_reaches_no_port(dirs: Dirs, identity: str, ports: Ports) -> None:
    outcome = run(lambda _r: _escapes(ports), identity=identity, setup=sandboxed(dirs.policy()))
    if not in_force(outcome.protections, "network_namespace", "landlock:net", "seccomp"):
        return
    result = outcome.result
    assert result["connect"].startswith("denied"), result
    assert result["udp"].startswith("denied"), result
    assert result["bind"].startswith("denied"), result
    assert result["unix"] == "allowed: 'ok'", "local socketpairs (asyncio, multiprocessing) must keep working"
    assert not ports.received_udp()


def test_network_allowed_by_the_policy(dirs: Dirs, identity: str, ports: Ports) -> None:
    outcome = run(lambda _r: _escapes(ports), identity=identity, setup=sandboxed(dirs.policy(network=True)))
    missing = outcome.protections.missing()
    assert "policy" in missing["network_namespace"]
    assert "policy" in missing["landlock:net"]
    assert outcome.result["connect"] == "allowed: 'connected'"
    assert outcome.result["udp"].startswith("allowed")


def _layer_alone(apply: str, ports: Ports, workspace: str) -> dict[str, Any]:
    """In the child: probe as this uid, apply one layer, try the escapes; or say why it is unavailable."""
    caps = probe()
    if apply == "network_namespace":
        if not caps.network_namespace:
            return {"unavailable": caps.reason("network_namespace")}
        unshare_namespaces(CLONE_NEWNET, user_namespace=caps.namespace_mode == "user")
    elif apply == "landlock":
        if caps.landlock_abi < 4:
            return {"unavailable": caps.reason("landlock") or f"Landlock ABI {caps.landlock_abi}"}
        set_no_new_privs()
        restrict(caps.landlock_abi, [Path(os.path.realpath(workspace))], deny_tcp=True)
    elif apply == "seccomp":
        if not caps.seccomp:
            return {"unavailable": caps.reason("seccomp")}
        set_no_new_privs()
        install_filter(build_filter(deny_inet_sockets=True))
    return _escapes(ports)


def _check_unavailable_is_reported(result: dict[str, Any]) -> bool:
    if "unavailable" in result:
        assert result["unavailable"], "a missing layer must say why"
        return True
    return False


def test_a_network_namespace_alone_cuts_tcp_and_udp(identity: str, ports: Ports, dirs: Dirs) -> None:
    outcome = run(lambda _r: _layer_alone("network_namespace", ports, str(dirs.workspace)), identity=identity)
    if _check_unavailable_is_reported(outcome.result):
        return
    assert "Network is unreachable" in outcome.result["connect"]
    assert "Network is unreachable" in outcome.result["udp"]
    assert not ports.received_udp()


def test_landlock_alone_denies_tcp_but_not_udp(identity: str, ports: Ports, dirs: Dirs) -> None:
    """The documented gap: Landlock has no UDP rules (the namespace and seccomp close it)."""
    outcome = run(lambda _r: _layer_alone("landlock", ports, str(dirs.workspace)), identity=identity)
    if _check_unavailable_is_reported(outcome.result):
        return
    assert "PermissionError" in outcome.result["connect"]
    assert "PermissionError" in outcome.result["bind"]
    assert outcome.result["udp"].startswith("allowed")
    assert ports.received_udp()


def test_seccomp_alone_refuses_inet_sockets(identity: str, ports: Ports, dirs: Dirs) -> None:
    outcome = run(lambda _r: _layer_alone("seccomp", ports, str(dirs.workspace)), identity=identity)
    if _check_unavailable_is_reported(outcome.result):
        return
    assert "PermissionError" in outcome.result["connect"]
    assert "PermissionError" in outcome.result["udp"]
    assert outcome.result["unix"] == "allowed: 'ok'"
    assert not ports.received_udp()
