"""A server that exits during start-up: `%codemode status` and the sidebar's state file say why.

The reason is the end of what the server wrote to stderr (issue 24, item 9), shown safely: printable, short,
and without the key its config gave it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, configured_kernel, state_path, wait_for_state

from tests.integration.startup_support import REASON, assert_safe_tail, exiting_server_config


@pytest.fixture(scope="module")
def connection_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runtime") / f"kernel-{uuid.uuid4()}.json"


@pytest.fixture(scope="module")
def kernel(
    jupyter_path: Path, connection_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    notebook = tmp_path_factory.mktemp("exits-notebook")
    config = exiting_server_config(notebook)
    with configured_kernel(jupyter_path, notebook, config, connection_file=connection_file) as k:
        yield k


def test_status_shows_the_end_of_the_stderr_of_a_server_that_exited(kernel: Kernel) -> None:
    status = kernel.run("%codemode status").stream()
    assert "weather [stdio]: failed" in status, status
    assert "    its stderr log ends with:" in status, status
    assert f"      | {REASON}" in status, status
    assert_safe_tail(status)


def test_the_sidebar_entry_shows_it_too(kernel: Kernel, connection_file: Path) -> None:
    state = wait_for_state(state_path(connection_file), lambda s: s["servers"][0]["state"] == "failed")
    (weather,) = state["servers"]
    assert weather["error"].splitlines()[-1] == f"  | {REASON}", weather["error"]
    assert_safe_tail(weather["error"])
