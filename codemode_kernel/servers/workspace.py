"""Demo workspace MCP server: list, read, write and search real files under one root directory.

Every path a tool receives is resolved (``..``, absolute paths and symlinks included) before it is used,
and anything that lands outside the root is refused with an error that names the path. ``read_file``
returns plain text with no output schema on purpose: it is the demos' example of a tool whose result is
just text.

Run it by hand with ``python -m codemode_kernel.servers.workspace --root DIR``.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from codemode_kernel import __version__
from codemode_kernel.servers._serving import build_parser, run_main, tool_description

__all__ = [
    "FileEntry",
    "SearchMatch",
    "SearchResult",
    "WorkspaceTools",
    "WriteResult",
    "build_server",
    "main",
]

DEFAULT_PORT = 8766
MAX_FILE_BYTES = 1_000_000
MAX_ENTRIES = 1_000
MAX_MATCHES = 200
MAX_LINE_CHARS = 300

RelativePath = Annotated[
    str, Field(description="Path relative to the workspace root; '.' is the root itself")
]

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
_OVERWRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


class FileEntry(BaseModel):
    """One entry of a directory listing."""

    name: str = Field(description="File or directory name")
    path: str = Field(description="Path relative to the workspace root, usable with the other tools")
    type: Literal["file", "directory", "symlink", "other"] = Field(description="What the entry is")
    size: int | None = Field(description="Size in bytes for files, null otherwise")


class WriteResult(BaseModel):
    """What write_file did."""

    path: str = Field(description="Path written, relative to the workspace root")
    bytes_written: int = Field(description="Size of the file now, in bytes (UTF-8)")
    created: bool = Field(description="True if the file did not exist before")


class SearchMatch(BaseModel):
    """One line that contains the query."""

    path: str = Field(description="File path relative to the workspace root")
    line: int = Field(description="Line number, starting at 1")
    text: str = Field(description="The line, stripped and cut to 300 characters")


class SearchResult(BaseModel):
    """The lines that matched a search, in file and line order."""

    matches: list[SearchMatch] = Field(description="Matching lines")
    files_searched: int = Field(description="Number of text files read")
    truncated: bool = Field(description="True if the search stopped at 200 matches")


class WorkspaceTools:
    """The tools of the workspace demo server, confined to one root directory."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def _resolve(self, path: str) -> Path:
        """Return the real location of ``path`` or refuse it if it is not under the root.

        Resolving first (``..``, symlinks, absolute paths) and checking after is what makes the check
        hold: comparing the text of the path would let ``a/../../etc`` or a symlink through.
        """
        if "\x00" in path:
            raise ToolError(f"Refused: {path!r} contains a NUL character.")
        try:
            target = (self.root / path).resolve()
        except (OSError, RuntimeError) as exc:
            raise ToolError(f"Cannot resolve {path!r}: {exc}") from exc
        if target != self.root and self.root not in target.parents:
            raise ToolError(
                f"Refused: {path!r} is outside the workspace root; use a path inside the workspace."
            )
        return target

    def _relative(self, target: Path) -> str:
        return target.relative_to(self.root).as_posix() if target != self.root else "."

    def list_files(
        self,
        path: RelativePath = ".",
        pattern: Annotated[
            str | None, Field(description="Glob on entry names such as '*.txt'; null lists everything")
        ] = None,
    ) -> list[FileEntry]:
        """List the entries of one directory of the workspace (not recursive), sorted by name."""
        directory = self._resolve(path)
        if not directory.is_dir():
            raise ToolError(
                f"{path!r} is not a directory." if directory.exists() else f"No such directory: {path!r}"
            )
        children = sorted(
            (
                child
                for child in directory.iterdir()
                if pattern is None or fnmatch.fnmatchcase(child.name, pattern)
            ),
            key=lambda child: child.name,
        )
        if len(children) > MAX_ENTRIES:
            raise ToolError(f"{path!r} has {len(children)} entries, more than {MAX_ENTRIES}; pass a pattern.")
        return [self._entry(child) for child in children]

    def _entry(self, child: Path) -> FileEntry:
        # The entry itself, not what a symlink points to: the link may lead outside the workspace.
        relative = f"{self._relative(child.parent)}/{child.name}".removeprefix("./")
        if child.is_symlink():
            return FileEntry(name=child.name, path=relative, type="symlink", size=None)
        if child.is_dir():
            return FileEntry(name=child.name, path=relative, type="directory", size=None)
        if child.is_file():
            return FileEntry(name=child.name, path=relative, type="file", size=child.stat().st_size)
        return FileEntry(name=child.name, path=relative, type="other", size=None)

    def read_file(self, path: RelativePath) -> str:
        """Read a UTF-8 text file of the workspace and return its whole content as plain text.

        Files over 1 MB and files that are not UTF-8 text are refused with an error.
        """
        target = self._resolve(path)
        if target.is_dir():
            raise ToolError(f"{path!r} is a directory; use list_files to see what it holds.")
        if not target.is_file():
            raise ToolError(f"No such file: {path!r}")
        size = target.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ToolError(
                f"{path!r} is {size:,} bytes; read_file refuses files over {MAX_FILE_BYTES:,} bytes (1 MB)."
            )
        try:
            return target.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{path!r} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc

    def write_file(
        self,
        path: RelativePath,
        content: Annotated[str, Field(description="The complete new text of the file")],
    ) -> WriteResult:
        """Write text to a file of the workspace, replacing it if it exists and creating missing directories.

        The content is stored as UTF-8; more than 1 MB is refused.
        """
        data = content.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise ToolError(
                f"The content is {len(data):,} bytes; write_file refuses more than {MAX_FILE_BYTES:,}."
            )
        target = self._resolve(path)
        if target == self.root or target.is_dir():
            raise ToolError(f"{path!r} is a directory; give a file path.")
        created = not target.exists()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return WriteResult(path=self._relative(target), bytes_written=len(data), created=created)

    def search_files(
        self,
        query: Annotated[str, Field(description="Text to look for, ignoring case")],
        path: Annotated[
            str, Field(description="File or directory to search, relative to the workspace root")
        ] = ".",
    ) -> SearchResult:
        """Find the lines that contain some text, in the text files under a directory of the workspace.

        Case-insensitive plain text, not a regular expression. Hidden files and directories (names starting
        with a dot, such as .git), files over 1 MB and files that are not UTF-8 text are skipped. Stops
        after 200 matches.
        """
        if not query:
            raise ToolError("The query is empty; give the text to search for.")
        start = self._resolve(path)
        if not start.exists():
            raise ToolError(f"No such file or directory: {path!r}")
        needle = query.casefold()
        matches: list[SearchMatch] = []
        searched = 0
        for file in self._text_files(start):
            text = self._readable_text(file)
            if text is None:
                continue
            searched += 1
            for number, line in enumerate(text.splitlines(), start=1):
                if needle in line.casefold():
                    if len(matches) == MAX_MATCHES:
                        return SearchResult(matches=matches, files_searched=searched, truncated=True)
                    matches.append(
                        SearchMatch(
                            path=self._relative(file), line=number, text=line.strip()[:MAX_LINE_CHARS]
                        )
                    )
        return SearchResult(matches=matches, files_searched=searched, truncated=False)

    def _text_files(self, start: Path) -> list[Path]:
        """Every non-hidden file under ``start``, in a stable order, without following directory symlinks."""
        if start.is_file():
            return [start]
        found: list[Path] = []
        for directory, subdirectories, files in os.walk(start):
            subdirectories[:] = sorted(name for name in subdirectories if not name.startswith("."))
            found.extend(Path(directory, name) for name in sorted(files) if not name.startswith("."))
        return found

    def _readable_text(self, file: Path) -> str | None:
        """Return the text of ``file``, or None if it leads out of the root, is too big or is not text."""
        try:
            real = file.resolve()
            if self.root not in real.parents or not real.is_file() or real.stat().st_size > MAX_FILE_BYTES:
                return None
            return real.read_text(encoding="utf-8")
        except (OSError, RuntimeError, UnicodeDecodeError):
            return None


def build_server(root: Path | None = None) -> MCPServer[Any]:
    """Return the workspace demo server for ``root``, ready to run or to connect to in memory.

    Args:
        root: The directory the tools may touch; ``None`` means the current working directory.

    Raises:
        NotADirectoryError: ``root`` is not an existing directory.
    """
    root = Path.cwd() if root is None else root
    if not root.is_dir():
        raise NotADirectoryError(f"The workspace root {root} is not an existing directory")
    tools = WorkspaceTools(root)
    server: MCPServer[Any] = MCPServer(
        "workspace",
        title="Demo workspace",
        version=__version__,
        instructions="Files under one workspace directory: list, read, write and search them. "
        "Paths are relative to the workspace root; paths leading outside it are refused.",
        log_level="WARNING",
    )
    server.add_tool(tools.list_files, description=tool_description(tools.list_files), annotations=_READ_ONLY)
    # structured_output=False: the plain-text tool of the demos, with no output schema at all.
    server.add_tool(
        tools.read_file,
        description=tool_description(tools.read_file),
        annotations=_READ_ONLY,
        structured_output=False,
    )
    server.add_tool(tools.write_file, description=tool_description(tools.write_file), annotations=_OVERWRITES)
    server.add_tool(
        tools.search_files, description=tool_description(tools.search_files), annotations=_READ_ONLY
    )
    return server


def _parser() -> argparse.ArgumentParser:
    parser = build_parser(
        "python -m codemode_kernel.servers.workspace",
        "Demo MCP server: list, read, write and search files under one root directory, never outside it.",
        DEFAULT_PORT,
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="directory the tools may touch (default: the current directory)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Run the workspace demo server from the command line (see ``--help``).

    Args:
        argv: Command-line arguments without the program name; ``None`` reads ``sys.argv``.
    """
    parser = _parser()

    def build(args: argparse.Namespace) -> MCPServer[Any]:
        try:
            return build_server(args.root)
        except NotADirectoryError as exc:
            parser.error(str(exc))

    run_main(build, parser, argv)


if __name__ == "__main__":
    main()
