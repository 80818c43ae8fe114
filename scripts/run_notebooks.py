"""Execute the example notebooks on the Code Mode kernel and store their outputs (what nbval compares).

Run it after changing a notebook or what the kernel displays:

    .venv/bin/python scripts/run_notebooks.py [NOTEBOOK ...]

Each notebook runs in a temporary copy of notebooks/ (so the files it writes stay out of the repository),
on a kernelspec installed into a temporary prefix, with the embedded demo servers. Cells tagged
``raises-exception`` may fail; any other failure stops the script.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from codemode_kernel.kernel.app import install_kernel_spec

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def run(notebook: Path, workdir: Path) -> None:
    """Execute one notebook inside ``workdir`` and write the outputs back to ``notebook``."""
    copy = workdir / notebook.name
    shutil.copy(notebook, copy)
    nb = nbformat.read(copy, as_version=4)
    resources = {"metadata": {"path": workdir}}
    client = NotebookClient(nb, kernel_name="codemode", timeout=300, record_timing=False, resources=resources)
    client.execute()
    nb.metadata.pop("widgets", None)  # every widget is closed when its cell ends: no state worth keeping
    _hide_paths(nb, workdir)
    nbformat.write(nb, notebook)
    print(f"ran {notebook.relative_to(ROOT)}")


def _hide_paths(nb: nbformat.NotebookNode, workdir: Path) -> None:
    """Outputs that print where the notebook ran (status, reload) show a placeholder, not this machine."""
    for cell in nb.cells:
        for output in cell.get("outputs", ()):
            if "text" in output:
                output["text"] = output["text"].replace(str(workdir), "<notebook directory>")
            for mime, value in output.get("data", {}).items():
                if isinstance(value, str):
                    output["data"][mime] = value.replace(str(workdir), "<notebook directory>")


def main() -> None:
    """Run the notebooks named (default: all) and store their outputs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in notebooks/")
    args = parser.parse_args()
    chosen = [path.resolve() for path in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "prefix"
        install_kernel_spec(prefix=str(prefix))
        os.environ["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
        for notebook in chosen:
            workdir = Path(tmp) / notebook.stem
            workdir.mkdir()
            run(notebook, workdir)


if __name__ == "__main__":
    sys.exit(main())
