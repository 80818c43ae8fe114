"""jupyter_kernel_test's protocol conformance suite, run against the ``codemode`` kernel.

The suite validates each message it receives against the Jupyter messaging spec (v5); the samples below
add Code Mode's own cases (tool completion and inspection, a ``%%codemode`` cell with its live widget).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import jupyter_kernel_test
import pytest
from jupyter_client.manager import KernelManager, start_new_kernel
from jupyter_kernel_test import msgspec_v5

# The messaging spec's "Custom messages" (comms), which jupyter_kernel_test 0.7 has no schema for: the live
# view of a %%codemode cell is a widget, and the suite validates every message it drains from iopub.
COMM_SCHEMAS = {
    "comm_open": {
        "properties": {
            "comm_id": {"type": "string"},
            "target_name": {"type": "string"},
            "data": {"type": "object"},
        }
    },
    "comm_msg": {"properties": {"comm_id": {"type": "string"}, "data": {"type": "object"}}},
    "comm_close": {"properties": {"comm_id": {"type": "string"}, "data": {"type": "object"}}},
}


@pytest.fixture(scope="module", autouse=True)
def _codemode_kernel_setup(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite starts its kernel by name in ``setUpClass``: point Jupyter at the test prefix first.

    Module scope, so it runs before the class-scoped ``setUpClass`` that pytest wraps as a fixture. The
    kernel gets its own IPython directory: the history tests then see only this kernel's cells (and leave
    the user's history alone), and an empty working directory: the embedded demo servers.
    """
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
        monkeypatch.setenv("IPYTHONDIR", str(tmp_path_factory.mktemp("ipython")))
        workspace = tmp_path_factory.mktemp("workspace")
        monkeypatch.setattr(CodeModeKernelConformance, "workspace", workspace, raising=False)
        for msg_type, schema in COMM_SCHEMAS.items():
            monkeypatch.setitem(msgspec_v5.schema_fragments, msg_type, schema)
        yield


class CodeModeKernelConformance(jupyter_kernel_test.KernelTests):
    kernel_name = "codemode"
    language_name = "python"
    file_extension = ".py"

    code_hello_world = "print('hello, world')"
    code_stderr = "import sys; print('hello, stderr', file=sys.stderr)"

    completion_samples: ClassVar[list[dict[str, Any]]] = [
        {"text": "zi", "matches": {"zip"}},
        {"text": "get_weather(ci", "matches": {"city="}},  # a tool's keyword, from its __signature__
        {"text": "tools.get_w", "matches": {"get_weather"}},
    ]
    complete_code_samples: ClassVar[list[str]] = [
        "1",
        "print('hello, world')",
        "def f(x):\n  return x*2\n\n\n",
    ]
    incomplete_code_samples: ClassVar[list[str]] = ["print('''hello", "def f(x):\n  x*2", "%%codemode\nx = 1"]
    invalid_code_samples: ClassVar[list[str]] = ["import = 7q"]

    code_page_something = "get_weather?"
    code_generate_error = "raise ValueError('no such city')"
    code_execute_result: ClassVar[list[dict[str, str]]] = [
        {"code": "6*7", "result": "42"},
        {"code": "'Oslo'.upper()", "result": "'OSLO'"},
        {"code": "get_weather(city='Oslo', unit='celsius')['city']", "result": "'Oslo'"},
    ]
    code_display_data: ClassVar[list[dict[str, str]]] = [
        {
            "code": "from IPython.display import HTML, display; display(HTML('<b>test</b>'))",
            "mime": "text/html",
        },
        # The live view (a widget) and the final record: each display says something in plain text too.
        {"code": "%%codemode\n6 * 7", "mime": "text/plain"},
    ]
    code_history_pattern = "6*7"
    supported_history_operations = ("tail", "range", "search")  # range: see test_history
    code_inspect_sample = "get_weather"
    code_clear_output = "from IPython.display import clear_output; clear_output()"

    workspace: ClassVar[Path]

    @classmethod
    def setUpClass(cls) -> None:
        """Start in an empty directory (its workspace) and wait for the tools before any test runs.

        The first cell waits for the MCP servers and says so on stderr; the suite counts output messages,
        so that note must not land in a test's cell.
        """
        cls.km, cls.kc = start_new_kernel(
            kernel_name=cls.kernel_name, startup_timeout=60, cwd=str(cls.workspace)
        )
        reply = cls.kc.execute_interactive("callable(get_weather)", timeout=60, output_hook=lambda _: None)
        assert reply["content"]["status"] == "ok", reply["content"]

    def test_history(self) -> None:
        """The suite's history steps; range asks for the running session as IPython numbers it: 0.

        In a range reply IPython names the running session 0 while tail gives its number, so the suite's
        range step (which expects the number back) fails on every IPython kernel; ipykernel's own run of
        the suite leaves range out. Here range is checked on IPython's terms instead of skipped.
        """
        codes = [sample["code"] for sample in self.code_execute_result]
        n = len(codes)
        tail = self.history_helper(codes, output=False, raw=True, hist_access_type="tail", n=n)["content"]
        assert [entry[2] for entry in tail["history"]] == codes
        session, start = tail["history"][0][:2]
        assert session >= 1
        with_output = self.history_helper(codes, output=True, raw=True, hist_access_type="tail", n=n)
        assert with_output["content"]["history"][0][2][0] == codes[0]  # [input, output]; IPython keeps no
        assert (
            len(with_output["content"]["history"][0][2]) == 2
        )  # outputs unless HistoryManager.db_log_output

        ranged = self.history_helper(
            codes, output=False, raw=True, hist_access_type="range", session=0, start=start, stop=start + 1
        )
        assert ranged["content"]["history"] == [[0, start, codes[0]]]

        pattern = self.code_history_pattern
        search = {"output": False, "raw": True, "hist_access_type": "search", "pattern": pattern}
        assert self.history_helper(codes, **search)["content"]["history"]
        assert [h[2] for h in self.history_helper(codes, **search, unique=True)["content"]["history"]] == [
            "6*7"
        ]
        assert len(self.history_helper(codes, **search, n=3)["content"]["history"]) == 3


class CodeModeIopubWelcome(jupyter_kernel_test.IopubWelcomeTests):
    """ipykernel 7 greets each new iopub subscriber (protocol 5.4's ``iopub_welcome``); so does Code Mode."""

    kernel_name = "codemode"
    support_iopub_welcome = True

    @classmethod
    def setUpClass(cls) -> None:
        cls.km = KernelManager(kernel_name=cls.kernel_name)
        cls.km.start_kernel(cwd=str(CodeModeKernelConformance.workspace))
        cls.kc = cls.km.client()

    def test_recv_iopub_welcome_msg(self) -> None:
        """A new subscriber first gets the welcome (the suite's check, saying what came instead).

        CI once saw a ``stream`` message first, not seen here since: the failure now shows what it held.
        """
        self.kc.start_channels()
        first = self.kc.get_iopub_msg(timeout=30)
        shown = {"msg_type": first["header"]["msg_type"], "content": first["content"]}
        self.assertEqual(first["header"]["msg_type"], "iopub_welcome", shown)
        self.assertEqual(first["content"]["subscription"], "", shown)
