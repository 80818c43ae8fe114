"""A %%codemode program in a real kernel cannot read the kernel's connection file or its cell history.

The connection file's HMAC key gives the kernel away to whoever holds it (they can run any code in it,
outside the sandbox); the history database holds every cell typed, secrets included. The connection file
here is where a client chose to put it, outside every runtime directory: the kernel hides the one it
really uses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kernel_session import kernel_in

pytestmark = pytest.mark.integration

HIDDEN = "is hidden from programs"


def test_a_program_reads_neither_the_kernels_connection_file_nor_its_history(
    jupyter_path: Path, tmp_path: Path
) -> None:
    notebook, home, elsewhere = tmp_path / "notebook", tmp_path / "home", tmp_path / "elsewhere"
    for path in (notebook, home, elsewhere):
        path.mkdir()
    connection = elsewhere / "kernel-chosen-by-the-client.json"
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "CODEMODE_CONFIG": None}
    with kernel_in(jupyter_path, notebook, env, connection_file=connection) as kernel:
        typed = kernel.run("token = 'typed-into-a-cell'")
        assert typed.status == "ok", typed.content
        history = kernel.run("print(get_ipython().history_manager.hist_file)").stream().strip()
        assert Path(history).is_file() and connection.is_file(), (history, connection)

        for path in (connection, Path(history)):
            read = kernel.run(f"%%codemode\nopen({str(path)!r}, 'rb').read()", timeout=120)
            assert read.status == "error", (path, read.content)
            assert read.content["ename"] == "CodeModeCellError", read.content
            assert read.content["evalue"].startswith("line 1: PermissionError: "), read.content["evalue"]
            assert HIDDEN in read.content["evalue"], read.content["evalue"]
        key = json.loads(connection.read_text())["key"]
        listing = kernel.run(f"%%codemode\nimport os\nos.listdir({str(elsewhere)!r})", timeout=120)
        assert listing.status == "ok", listing.content
        assert key not in json.dumps(listing.content)
