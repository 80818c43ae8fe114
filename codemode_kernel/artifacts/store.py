"""ArtifactStore: data that programs and tool calls produce, kept in SQLite in the workspace.

    store = ArtifactStore.for_workspace(Path("."))     # .codemode/artifacts.db
    a = store.put({"rows": 3}, name="summary")
    store.load("summary")                              # {"rows": 3}

Blobs are content-addressed (sha256): the same data stored twice is kept once, under two metadata rows.
Every write is one transaction (``BEGIN IMMEDIATE``), so a process killed mid-write leaves either the
whole artifact or nothing, and several processes writing at once wait for each other (``busy_timeout``)
instead of failing. The journal is WAL where it works, the rollback journal elsewhere (``journal.py``).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from ..core.errors import ArtifactError, ArtifactNotFoundError
from . import codec
from .artifact import Artifact
from .journal import JournalChoice, set_journal

__all__ = ["DEFAULT_BUSY_TIMEOUT", "ArtifactStore"]

DEFAULT_BUSY_TIMEOUT = 30.0
"""Seconds a write waits for another process's write to finish before it fails."""

_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (
    sha256 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS artifacts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    name TEXT,
    type TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL,
    created TEXT NOT NULL,
    sha256 TEXT NOT NULL REFERENCES blobs(sha256),
    execution_id TEXT
);
CREATE INDEX IF NOT EXISTS artifacts_by_name ON artifacts(name, seq);
CREATE INDEX IF NOT EXISTS artifacts_by_execution ON artifacts(execution_id, seq);
"""
_COLUMNS = "id, name, type, description, size, created, sha256, execution_id"
_MAX_NAME = 256
_MAX_DESCRIPTION = 10_000
_LISTED_IN_ERRORS = 10


class ArtifactStore:
    """Artifacts in one SQLite file; safe to share between threads, and between processes through the file.

    The file and its directory are created on first use, not by the constructor.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        journal: JournalChoice = "auto",
        vfs: str | None = None,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        """Name the database file.

        Args:
            path: the database file (``.codemode/artifacts.db`` of a workspace: see ``for_workspace``).
            journal: ``auto`` (WAL unless on a network file system or refused), ``wal``, or ``rollback``.
            vfs: an SQLite VFS by name, e.g. ``unix-dotfile`` for file systems without POSIX locks.
            busy_timeout: seconds a write waits for other writers.
        """
        self.path = Path(path)
        self.journal = journal
        self.vfs = vfs
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0
        self._journal_mode: str | None = None

    @classmethod
    def for_workspace(cls, workspace: str | os.PathLike[str], **options: Any) -> ArtifactStore:
        """The store of a workspace: ``<workspace>/.codemode/artifacts.db``."""
        return cls(Path(workspace) / ".codemode" / "artifacts.db", **options)

    # -- lifecycle --------------------------------------------------------------------------------

    @property
    def journal_mode(self) -> str:
        """The journal in force: ``wal``, or ``delete`` (the rollback journal). Opens the store."""
        with self._connect():
            assert self._journal_mode is not None
            return self._journal_mode

    def close(self) -> None:
        """Close the database connection; the next use opens it again."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> ArtifactStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ArtifactStore {self.path}>"

    # -- writing ----------------------------------------------------------------------------------

    def put(
        self,
        data: Any,
        *,
        name: str | None = None,
        type: str | None = None,
        description: str | None = None,
        execution_id: str | None = None,
    ) -> Artifact:
        """Store a value (see ``codec.py`` for how each kind is stored) and return its metadata.

        Raises:
            ArtifactError: the value cannot be stored, ``type`` does not fit it, or a name is unusable.
        """
        blob, mime_type = codec.encode(data, type)
        name = _checked_name(name)
        description = _checked_description(description)
        digest = hashlib.sha256(blob).hexdigest()
        artifact = Artifact(
            id=uuid.uuid4().hex[:12],
            name=name,
            type=mime_type,
            description=description,
            size=len(blob),
            created=datetime.now(UTC).isoformat(timespec="milliseconds"),
            sha256=digest,
            execution_id=execution_id,
        )
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO blobs (sha256, size, data) VALUES (?, ?, ?)", (digest, len(blob), blob)
            )
            db.execute(
                f"INSERT INTO artifacts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    artifact.id,
                    name,
                    mime_type,
                    description,
                    artifact.size,
                    artifact.created,
                    digest,
                    execution_id,
                ),
            )
        return artifact

    def delete(self, id_or_name: str) -> Artifact:
        """Remove an artifact (by id, or the newest with that name); its data goes when nothing shares it."""
        with self._write() as db:
            artifact = self._find(db, id_or_name)
            db.execute("DELETE FROM artifacts WHERE id = ?", (artifact.id,))
            db.execute(
                "DELETE FROM blobs WHERE sha256 = ? AND NOT EXISTS "
                "(SELECT 1 FROM artifacts WHERE sha256 = blobs.sha256)",
                (artifact.sha256,),
            )
        return artifact

    # -- reading ----------------------------------------------------------------------------------

    def get(self, id_or_name: str) -> Artifact:
        """The artifact with this id, else the newest with this name.

        Raises:
            ArtifactNotFoundError: neither; the message lists the newest artifacts that exist.
        """
        with self._connect() as db:
            return self._find(db, id_or_name)

    def read_bytes(self, id_or_name: str) -> bytes:
        """The stored data of an artifact, checked against its sha256."""
        with self._connect() as db:
            artifact = self._find(db, id_or_name)
            row = db.execute("SELECT data FROM blobs WHERE sha256 = ?", (artifact.sha256,)).fetchone()
        data = bytes(row[0]) if row is not None else b""
        if row is None or hashlib.sha256(data).hexdigest() != artifact.sha256:
            raise ArtifactError(
                f"artifact {artifact.id} ({artifact.name or 'unnamed'}): its data is missing or damaged "
                f"in {self.path}"
            )
        return data

    def load(self, id_or_name: str) -> Any:
        """The value an artifact holds: JSON parsed, CSV as a DataFrame, text as str, the rest as bytes."""
        artifact = self.get(id_or_name)
        return codec.decode(self.read_bytes(artifact.id), artifact.type)

    def list(
        self, *, name: str | None = None, execution_id: str | None = None, limit: int | None = None
    ) -> list[Artifact]:
        """Artifacts, newest first; only those with this name or made by this execution when given."""
        where, params = _filters(name=name, execution_id=execution_id)
        sql = f"SELECT {_COLUMNS} FROM artifacts{where} ORDER BY seq DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, limit))
        with self._connect() as db:
            return [Artifact(*row) for row in db.execute(sql, params)]

    def __len__(self) -> int:
        with self._connect() as db:
            return int(db.execute("SELECT count(*) FROM artifacts").fetchone()[0])

    def _find(self, db: sqlite3.Connection, key: str) -> Artifact:
        if not isinstance(key, str):
            raise ArtifactNotFoundError(
                f"an artifact is named by its id or name (a str), not a {type(key).__name__}", key=repr(key)
            )
        row = db.execute(f"SELECT {_COLUMNS} FROM artifacts WHERE id = ?", (key,)).fetchone()
        if row is None:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM artifacts WHERE name = ? ORDER BY seq DESC LIMIT 1", (key,)
            ).fetchone()
        if row is None:
            raise ArtifactNotFoundError(self._missing(db, key), key=key)
        return Artifact(*row)

    def _missing(self, db: sqlite3.Connection, key: str) -> str:
        total = int(db.execute("SELECT count(*) FROM artifacts").fetchone()[0])
        if not total:
            return f"no artifact has the id or name {key!r}: there are no artifacts yet"
        names = [str(n) for (n,) in db.execute("SELECT DISTINCT name FROM artifacts WHERE name IS NOT NULL")]
        close = difflib.get_close_matches(key, names, n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        newest = [
            f"{name!r} ({id_}, {mime})" if name is not None else f"{id_} ({mime})"
            for id_, name, mime in db.execute(
                "SELECT id, name, type FROM artifacts ORDER BY seq DESC LIMIT ?", (_LISTED_IN_ERRORS,)
            )
        ]
        more = f" and {total - len(newest)} more" if total > len(newest) else ""
        return (
            f"no artifact has the id or name {key!r}{hint} "
            f"(there are {total}, newest first: {', '.join(newest)}{more})"
        )

    # -- the connection ---------------------------------------------------------------------------

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """The open connection, held under the store's lock (one statement sequence at a time)."""
        with self._lock:
            if self._connection is None or self._pid != os.getpid():  # a forked child opens its own
                self._connection = self._open()
                self._pid = os.getpid()
            try:
                yield self._connection
            except sqlite3.DatabaseError as exc:
                raise ArtifactError(f"artifact store {self.path}: {exc}") from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it is stored, or (on an error, or a killed process) none of it."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")  # take the write lock now: no deadlock when upgrading a read
            try:
                yield db
            except BaseException:
                db.rollback()
                raise
            db.commit()

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ArtifactError(
                f"cannot create the directory of the artifact store {self.path}: {exc}"
            ) from exc
        target = self.path.resolve().as_uri() + (f"?vfs={self.vfs}" if self.vfs else "")
        db = sqlite3.connect(
            target, uri=True, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self._journal_mode = set_journal(db, self.path, self.journal)
            self._create_schema(db)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise ArtifactError(
                f"artifact store {self.path} cannot be opened: {exc}; if the file is damaged, move it "
                "away and a new, empty store is made"
            ) from exc
        except BaseException:
            db.close()
            raise
        return db

    def _create_schema(self, db: sqlite3.Connection) -> None:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version == _SCHEMA_VERSION:
            return
        if version > _SCHEMA_VERSION:
            raise ArtifactError(
                f"artifact store {self.path} was written by a newer codemode (schema {version}); upgrade "
                "codemode-kernel to use it"
            )
        db.execute("BEGIN IMMEDIATE")  # two processes creating the schema at once take turns
        try:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        except BaseException:
            db.rollback()
            raise
        db.commit()


def _filters(**conditions: str | None) -> tuple[str, list[Any]]:
    """A WHERE clause (or nothing) for the conditions that are set; column names are ours, never input."""
    clauses = [f"{column} = ?" for column, value in conditions.items() if value is not None]
    params: list[Any] = [value for value in conditions.values() if value is not None]
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _checked_name(name: str | None) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME:
        raise ArtifactError(f"an artifact name is a non-empty str of at most {_MAX_NAME} characters")
    return name


def _checked_description(description: str | None) -> str:
    if description is None:
        return ""
    if not isinstance(description, str):
        raise ArtifactError(f"an artifact description is a str, not a {type(description).__name__}")
    return description[:_MAX_DESCRIPTION]
