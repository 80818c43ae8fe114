"""What a config makes run outside the sandbox, as files: what trust records and programs may not change.

A stdio server's command line names files: ``python server.py``, ``./run.sh``, ``node build/index.js``,
``python -m my_server`` (a package found in the server's working directory), and its ``envFile``. Trusting a
config's bytes alone would let anyone who can edit ``server.py`` (a program writing the workspace, say) run
code at the next start with the config still "trusted". So trust records a digest of every such file inside
the project, and the sandbox makes them read-only to programs.

The rule: the first plain argument of an interpreter (``python``, ``node``, ``bash``, ...), whatever the
file is called; an argument that names an existing file of code (by its suffix, or executable) or a directory
that holds a project or package (``pyproject.toml``, ``package.json``, ``__init__.py``, ...), relative to the
server's working directory or absolute; the command itself when it is a path; the module of ``-m`` when it
is a local file or package; and the ``envFile`` whether it exists or not (creating it later would change
what runs). A directory or file given as data (server-filesystem's ``./data``, a ``--db`` file) is not
code: programs keep writing it. Launchers that fetch code (``npx pkg``, ``uvx pkg``) name no local file
and add nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from .models import Config, ServerConfig

__all__ = ["ABSENT", "MAX_TREE_FILES", "digest_path", "run_files", "server_files"]

ABSENT = "absent"
"""The digest of a path that does not exist (creating it is a change, like editing it)."""

MAX_TREE_FILES = 5000
"""A directory with more files is digested by names, sizes and modification times instead of contents."""

_SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".hg", ".svn"})


def server_files(server: ServerConfig, cwd: Path) -> tuple[Path, ...]:
    """Absolute paths of the local files and directories ``server`` runs or reads at start, in order.

    ``cwd`` is the working directory the server inherits when its entry has none (the kernel's).
    Remote and disabled servers run nothing here.
    """
    if server.transport != "stdio" or server.disabled or server.command is None:
        return ()
    base = server.cwd if server.cwd is not None else cwd
    found: dict[Path, None] = {}
    if os.sep in server.command or (os.altsep and os.altsep in server.command):
        found[_absolute(server.command, base)] = None
    args = list(server.args)
    # An interpreter runs its first plain argument, whatever that file is called (``bash -e run``).
    script = _is_interpreter(server.command)
    for index, arg in enumerate(args):
        if index > 0 and args[index - 1] == "-m":
            found.update(dict.fromkeys(_module_paths(arg, base)))
            script = False
            continue
        # ``--directory=srv`` names a path after its "="; a bare ``-x`` names none.
        value = arg.partition("=")[2] if arg.startswith("--") else "" if arg.startswith("-") else arg
        if not value:
            continue
        candidate = _absolute(value, base)
        if _is_code(candidate) or (script and not arg.startswith("-") and candidate.is_file()):
            found[candidate] = None
        script = script and arg.startswith("-")
    if server.env_file is not None:
        found[_absolute(str(server.env_file), base)] = None
    return tuple(found)


CODE_SUFFIXES = frozenset(
    [
        ".py",
        ".pyw",
        ".pyz",
        ".pyc",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".mts",
        ".cts",
        ".jsx",
        ".tsx",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".rb",
        ".pl",
        ".php",
        ".lua",
        ".r",
        ".jar",
        ".exe",
        ".bat",
        ".cmd",
        ".ps1",
        ".wasm",
        ".so",
        ".dylib",
        ".dll",
    ]
)
"""Files named in ``args`` with these suffixes are code, whatever their mode."""

PROJECT_MARKERS = (
    "__init__.py",
    "__main__.py",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "package.json",
    "deno.json",
    "Cargo.toml",
    "go.mod",
)
"""A directory named in ``args`` that holds one of these is code (``uv --directory srv run``), not data."""


INTERPRETERS = re.compile(
    r"(python|pypy|node|nodejs|deno|bun|bash|sh|zsh|dash|fish|ruby|perl|php|lua|Rscript)[0-9.]*"
)
"""Commands whose first plain argument is the script they run."""


def _is_interpreter(command: str) -> bool:
    return INTERPRETERS.fullmatch(os.path.basename(command)) is not None


def _is_code(path: Path) -> bool:
    """Whether an argument's path is code the server runs (see the module docstring), not data it serves."""
    if path.is_symlink() and not path.exists():
        return True  # a dangling link could be pointed at code at any time
    if path.is_dir():
        return any((path / marker).exists() for marker in PROJECT_MARKERS)
    if path.is_file():
        return path.suffix.lower() in CODE_SUFFIXES or os.access(path, os.X_OK)
    return False


def run_files(config: Config, cwd: Path | None = None) -> tuple[Path, ...]:
    """Every enabled stdio server's :func:`server_files`, without duplicates, in file order."""
    base = Path.cwd() if cwd is None else cwd
    found: dict[Path, None] = {}
    for server in config.enabled_servers.values():
        found.update(dict.fromkeys(server_files(server, base)))
    return tuple(found)


def digest_path(path: Path) -> str:
    """SHA-256 of a file's bytes, of a directory's tree (names and contents), or :data:`ABSENT`.

    A symlink is digested as its target's content plus where it points, so re-pointing it is a change.
    """
    if not os.path.lexists(path):
        return ABSENT
    digest = hashlib.sha256()
    if path.is_symlink():
        digest.update(b"link:" + os.fsencode(os.readlink(path)) + b"\0")
    if path.is_dir():
        _digest_tree(path, digest)
    elif path.is_file():
        _digest_file(path, digest)
    else:
        digest.update(b"other\0")
    return digest.hexdigest()


def _digest_tree(root: Path, digest: hashlib._Hash) -> None:
    files = sorted(_walk(root))
    by_content = len(files) <= MAX_TREE_FILES
    digest.update(b"tree:contents\0" if by_content else b"tree:stat\0")
    for file in files:
        relative = os.fsencode(os.path.relpath(file, root))
        digest.update(relative + b"\0")
        if by_content:
            _digest_file(Path(file), digest)
        else:
            try:
                stat = os.lstat(file)
            except OSError:
                continue
            digest.update(f"{stat.st_size}:{stat.st_mtime_ns}\0".encode())


def _walk(root: Path) -> Iterable[str]:
    for directory, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name not in _SKIPPED_DIRS]
        for name in files:
            yield os.path.join(directory, name)


def _digest_file(path: Path, digest: hashlib._Hash) -> None:
    try:
        with open(path, "rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    except OSError as exc:
        digest.update(f"unreadable:{exc.errno}\0".encode())
    digest.update(b"\0")


def _absolute(text: str, base: Path) -> Path:
    return Path(os.path.abspath(base / os.path.expanduser(text)))


def _module_paths(module: str, base: Path) -> list[Path]:
    """Where ``python -m module`` would find a local module: ``pkg/`` or ``pkg.py`` under ``base``.

    Only the top-level package counts (``a.b`` runs code from ``a/__init__.py`` too); a module that is not
    there locally comes from the Python environment, outside the project.
    """
    top = module.split(".", 1)[0]
    if not top.isidentifier():
        return []
    found = [base / top, base / f"{top}.py"]
    return [Path(os.path.abspath(path)) for path in found if os.path.lexists(path)]
