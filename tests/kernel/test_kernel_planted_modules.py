"""A %%codemode program plants packages in the notebook's folder; the kernel, restarted, never imports them.

Cells still import the modules beside the notebook (as Jupyter users expect), found after everything
installed and only for imports a cell asks for.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_session import kernel_in

pytestmark = pytest.mark.integration

PLANTED = ("codemode_kernel", "ipykernel", "jsonschema", "planted_optional")


def test_a_restarted_kernel_does_not_import_what_a_program_planted(
    jupyter_path: Path, tmp_path: Path
) -> None:
    notebook, home, markers = tmp_path / "notebook", tmp_path / "home", tmp_path / "markers"
    for path in (notebook, home, markers):
        path.mkdir()
    (notebook / "my_helpers.py").write_text("VALUE = 42\n")  # the person's own module beside the notebook
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "CODEMODE_CONFIG": None}
    with kernel_in(jupyter_path, notebook, env) as kernel:
        payload = f"open({str(markers)!r} + '/' + __name__, 'w').write('ran')\n"
        planted = kernel.run(
            "%%codemode\n"
            "import os\n"
            f"for name in {PLANTED!r}:\n"
            "    os.makedirs(name, exist_ok=True)\n"
            "    with open(os.path.join(name, '__init__.py'), 'w') as f:\n"
            f"        f.write({payload!r})\n"
            "sorted(os.listdir('.'))\n",
            timeout=120,
        )
        assert planted.status == "ok", planted.content
        assert (notebook / "codemode_kernel" / "__init__.py").is_file()

        kernel.manager.restart_kernel(now=False)
        kernel.client.wait_for_ready(timeout=60)
        reply = kernel.run(
            "import codemode_kernel, ipykernel, my_helpers\n"
            "print(codemode_kernel.__file__)\n"
            "print(ipykernel.__file__)\n"
            "print(my_helpers.VALUE)\n"
        )
        assert reply.status == "ok", reply.content
        kernel_file, ipykernel_file, value = reply.stream().split()
        assert not kernel_file.startswith(str(notebook)) and not ipykernel_file.startswith(str(notebook))
        assert value == "42"

        # An import the kernel's own threads make (a library trying an optional module) skips the folder.
        lazy = kernel.run(
            "import concurrent.futures, importlib\n"
            "with concurrent.futures.ThreadPoolExecutor() as pool:\n"
            "    print(type(pool.submit(importlib.import_module, 'planted_optional').exception()).__name__)\n"
        )
        assert lazy.stream().strip() == "ModuleNotFoundError"

        works = kernel.run('%%codemode\nget_weather(city="Oslo", unit="celsius").temperature', timeout=120)
        assert works.status == "ok", works.content
    assert sorted(p.name for p in markers.iterdir()) == []
