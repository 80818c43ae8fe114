"""Demo SQLite MCP server: read-only SQL over a generated sample database, plus a bar chart as an image.

By default it serves the sample database (tables ``cities``, ``stations``, ``readings``) that
:mod:`codemode_kernel.servers._sample_db` generates into the user's cache on first start; ``--db`` points
it at any other SQLite file. Either way the file is opened read-only (``mode=ro``, ``PRAGMA query_only``)
and ``ATTACH`` is refused, so no tool call can change or create a file on disk.

Run it by hand with ``python -m codemode_kernel.servers.sqlite --help``.
"""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Image
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from codemode_kernel import __version__
from codemode_kernel.servers._chart import bar_chart_png
from codemode_kernel.servers._sample_db import ensure_sample_database
from codemode_kernel.servers._serving import build_parser, run_main, tool_description

__all__ = ["ColumnInfo", "DatabaseTools", "QueryResult", "TableDescription", "build_server", "main"]

DEFAULT_PORT = 8767
QUERY_TIMEOUT_SECONDS = 10.0
MAX_ROWS = 10_000
MAX_BARS = 200

Value = str | int | float | None
Sql = Annotated[str, Field(description="One SQL statement (SELECT, WITH ... SELECT, or a read-only PRAGMA)")]

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class ColumnInfo(BaseModel):
    """One column of a table, as SQLite declares it."""

    name: str = Field(description="Column name")
    type: str = Field(description="Declared SQL type, empty if none was declared")
    not_null: bool = Field(description="True if the column refuses NULL")
    primary_key: bool = Field(description="True if the column is part of the primary key")


class TableDescription(BaseModel):
    """The columns and size of one table."""

    table: str = Field(description="Table name")
    columns: list[ColumnInfo] = Field(description="Columns in declaration order")
    row_count: int = Field(description="Number of rows in the table")


class QueryResult(BaseModel):
    """The rows a query returned, at most limit of them."""

    columns: list[str] = Field(description="Column names, in the order of each row's values")
    rows: list[list[Value]] = Field(description="One list of values per row; BLOBs are given as hex strings")
    row_count: int = Field(description="Number of rows returned here")
    truncated: bool = Field(description="True if the query had more rows than the limit")


def _authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
    """Refuse what ``mode=ro`` does not: ATTACH creates and reads other files, query_only could be undone."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() == "query_only" and arg2 is not None:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


@contextlib.contextmanager
def _reported_as_tool_errors(sql: str) -> Iterator[None]:
    """Turn SQLite's exceptions into ToolErrors whose message tells the caller what to change."""
    try:
        yield
    except sqlite3.Error as exc:
        text = str(exc)
        if "readonly" in text:
            raise ToolError(
                f"Refused: the database is opened read-only, so {sql.strip()[:80]!r} cannot run ({text})."
            ) from exc
        if "not authorized" in text:
            raise ToolError(
                f"Refused: {sql.strip()[:80]!r} is not authorized. ATTACH, DETACH and changing query_only "
                "are not allowed."
            ) from exc
        if "interrupted" in text:
            raise ToolError(
                f"The query ran longer than {QUERY_TIMEOUT_SECONDS:g} s and was stopped."
            ) from exc
        raise ToolError(f"SQL error: {text}") from exc


def _json_value(value: object) -> Value:
    if isinstance(value, bytes):
        return value.hex()
    if value is None or isinstance(value, str | int | float):
        return value
    return str(value)


class DatabaseTools:
    """The tools of the sqlite demo server, bound to one database file opened read-only per call.

    A connection per call keeps the tools thread-safe (the SDK runs synchronous tools on worker threads)
    and lets a stuck query be stopped by its own deadline.
    """

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True)
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(_authorize)
        deadline = time.monotonic() + QUERY_TIMEOUT_SECONDS
        # A SQLite call cannot be cancelled from the client (it runs on a worker thread), so it stops itself.
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        return conn

    def _table_names(self, conn: sqlite3.Connection) -> list[str]:
        rows = conn.execute(
            "SELECT name FROM sqlite_master"
            " WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        return [str(row[0]) for row in rows]

    def list_tables(self) -> list[str]:
        """List the tables and views of the database, sorted by name."""
        with _reported_as_tool_errors("list tables"), contextlib.closing(self._connect()) as conn:
            return self._table_names(conn)

    def describe_table(
        self, table: Annotated[str, Field(description="Name of a table or view")]
    ) -> TableDescription:
        """Describe one table: its columns with their declared types, and how many rows it holds."""
        with _reported_as_tool_errors(table), contextlib.closing(self._connect()) as conn:
            names = self._table_names(conn)
            if table not in names:
                raise ToolError(f"No table named {table!r}. Tables: {', '.join(names) or '(none)'}.")
            # Safe to quote into the SQL: the name is one the database itself just listed.
            quoted = '"' + table.replace('"', '""') + '"'
            columns = [
                ColumnInfo(name=row[1], type=row[2] or "", not_null=bool(row[3]), primary_key=bool(row[5]))
                for row in conn.execute(f"PRAGMA table_info({quoted})")
            ]
            (count,) = conn.execute(f"SELECT COUNT(*) FROM {quoted}").fetchone()
            return TableDescription(table=table, columns=columns, row_count=int(count))

    def query(
        self,
        sql: Sql,
        limit: Annotated[int, Field(ge=1, le=MAX_ROWS, description="Most rows to return")] = 100,
    ) -> QueryResult:
        """Run one read-only SQL statement and return its columns and rows.

        The database is opened read-only: INSERT, UPDATE, DELETE, CREATE and ATTACH are refused with an
        error. Rows past the limit are dropped and reported with truncated=true.
        """
        if not sql.strip():
            raise ToolError("The SQL statement is empty.")
        with _reported_as_tool_errors(sql), contextlib.closing(self._connect()) as conn:
            cursor = conn.execute(sql)
            columns = [str(column[0]) for column in cursor.description or ()]
            fetched = cursor.fetchmany(limit + 1)
        rows = [[_json_value(value) for value in row] for row in fetched[:limit]]
        return QueryResult(columns=columns, rows=rows, row_count=len(rows), truncated=len(fetched) > limit)

    def chart(
        self,
        sql: Sql,
        width: Annotated[int, Field(ge=64, le=2000, description="Image width in pixels")] = 480,
        height: Annotated[int, Field(ge=48, le=2000, description="Image height in pixels")] = 240,
    ) -> Image:
        """Draw a bar chart of a query's result and return it as a PNG image.

        Each row becomes one bar, in row order; the row's last column is the bar's height and must be a
        number. The image has no labels, so order the rows (ORDER BY) the way they should be read.
        At most 200 rows.
        """
        result = self.query(sql, MAX_BARS)
        if result.truncated:
            raise ToolError(
                f"The query returned more than {MAX_BARS} rows; a chart holds at most {MAX_BARS} bars."
            )
        if not result.rows:
            raise ToolError("The query returned no rows, so there is nothing to chart.")
        values: list[float] = []
        for number, row in enumerate(result.rows, start=1):
            value = row[-1] if row else None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ToolError(f"Row {number}: the last column must be a number to chart, got {value!r}.")
            values.append(float(value))
        try:
            png = bar_chart_png(values, width, height)
        except ValueError as exc:
            raise ToolError(f"Cannot draw the chart: {exc}.") from exc
        return Image(data=png, format="png")


def build_server(db_path: Path | None = None) -> MCPServer[Any]:
    """Return the sqlite demo server for ``db_path``, ready to run or to connect to in memory.

    Args:
        db_path: An existing SQLite file to serve read-only; ``None`` serves the sample database,
            building it into the cache first if needed.

    Raises:
        FileNotFoundError: ``db_path`` does not exist (an explicit path is never created).
    """
    if db_path is None:
        db_path = ensure_sample_database()
    elif not db_path.is_file():
        raise FileNotFoundError(f"No SQLite database at {db_path}")
    tools = DatabaseTools(db_path)
    server: MCPServer[Any] = MCPServer(
        "sqlite",
        title="Demo SQLite",
        version=__version__,
        instructions="Read-only SQL over one SQLite database; by default generated demo data about cities, "
        "weather stations and their daily readings.",
        log_level="WARNING",
    )
    for tool in (tools.list_tables, tools.describe_table, tools.query, tools.chart):
        server.add_tool(tool, description=tool_description(tool), annotations=_READ_ONLY)
    return server


def _parser() -> argparse.ArgumentParser:
    parser = build_parser(
        "python -m codemode_kernel.servers.sqlite",
        "Demo MCP server: read-only SQL over a generated sample database (or --db), and bar charts as PNG.",
        DEFAULT_PORT,
    )
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        help="SQLite file to serve read-only (default: the sample database, built into "
        "$XDG_CACHE_HOME/codemode or ~/.cache/codemode on first start)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Run the sqlite demo server from the command line (see ``--help``).

    Args:
        argv: Command-line arguments without the program name; ``None`` reads ``sys.argv``.
    """
    parser = _parser()

    def build(args: argparse.Namespace) -> MCPServer[Any]:
        try:
            return build_server(args.db)
        except FileNotFoundError as exc:
            parser.error(str(exc))
        except OSError as exc:
            # Typically a read-only home directory: say so and name the way out instead of a traceback.
            parser.error(f"cannot build the sample database ({exc}); set XDG_CACHE_HOME or pass --db")

    run_main(build, parser, argv)


if __name__ == "__main__":
    main()
