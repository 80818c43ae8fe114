"""CallLog: the one record of every tool call, read by widgets, the agent, replay and audits.

The log is bounded in memory. When it grows past ``max_entries`` the oldest records are appended to
``calls.jsonl`` in the spill directory (the workspace's ``.codemode/``) and dropped from memory; a
result larger than ``max_result_bytes`` is written to ``results/<id>.json`` there at once and the
record keeps a short preview and the file's name. Nothing is lost, and memory stays flat however long
a kernel runs.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

__all__ = ["CallLog", "CallRecord", "CallStatus"]

CallStatus = Literal[
    "running", "ok", "tool_error", "invalid_arguments", "timeout", "cancelled", "server_error"
]
"""``ok`` answered; ``tool_error`` the server reported isError; ``invalid_arguments`` refused before
sending; ``timeout`` the per-call timeout fired; ``cancelled`` the caller gave up (interrupt);
``server_error`` the connection or the protocol failed."""

_PREVIEW_CHARS = 2000


@dataclass(frozen=True)
class CallRecord:
    """One tool call. ``result`` is the MCP CallToolResult in wire (camelCase) JSON form."""

    id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    started: float
    status: CallStatus = "running"
    duration_ms: float | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    result_file: str | None = None
    """Set when the result was spilled to disk; ``result`` then holds ``{"preview": ...}`` only."""
    execution_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict of every field."""
        # Shallow on purpose: arguments and results are JSON already, and asdict() deep-copies them.
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["warnings"] = list(self.warnings)
        return data


@dataclass
class CallLog:
    """Thread-safe, bounded, append-only log of tool calls with spill-to-disk."""

    spill_dir: Path | None = None
    max_entries: int = 1000
    max_result_bytes: int = 256 * 1024
    _records: dict[str, CallRecord] = field(default_factory=dict, init=False)
    """In memory, by id, in the order calls started (an update keeps a record's place)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _listeners: list[Callable[[CallRecord], None]] = field(default_factory=list, init=False)
    spilled: int = field(default=0, init=False)

    def start(
        self, server: str, tool: str, arguments: dict[str, Any], *, execution_id: str | None = None
    ) -> CallRecord:
        """Record that a call begins and return its (running) record."""
        record = CallRecord(
            id=uuid.uuid4().hex[:12],
            server=server,
            tool=tool,
            arguments=arguments,
            started=time.time(),
            execution_id=execution_id,
        )
        self._put(record)
        return record

    def finish(
        self,
        record: CallRecord,
        status: CallStatus,
        *,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        warnings: tuple[str, ...] = (),
    ) -> CallRecord:
        """Record how a call ended; large results go to disk and keep a preview."""
        duration_ms = (time.time() - record.started) * 1000.0
        result_file = None
        big = result is not None and _rough_size(result) > self.max_result_bytes // 2
        if result is not None and big and self.spill_dir is not None:
            encoded = json.dumps(result, ensure_ascii=False)
            if len(encoded.encode()) > self.max_result_bytes:
                result_file = self._spill_result(record.id, encoded)
                result = {"preview": encoded[:_PREVIEW_CHARS], "bytes": len(encoded.encode())}
        done = replace(
            record,
            status=status,
            duration_ms=duration_ms,
            result=result,
            error=error,
            warnings=record.warnings + warnings,
            result_file=result_file,
        )
        self._put(done)
        return done

    def get(self, call_id: str) -> CallRecord | None:
        """The record with this id, from memory or the spill file."""
        with self._lock:
            found = self._records.get(call_id)
        if found is not None:
            return found
        return next((r for r in self._read_spilled() if r.id == call_id), None)

    def full_result(self, record: CallRecord) -> dict[str, Any] | None:
        """The complete result of a call, reading it back from disk when it was spilled."""
        if record.result_file is None or self.spill_dir is None:
            return record.result
        loaded: dict[str, Any] = json.loads((self.spill_dir / record.result_file).read_text())
        return loaded

    def records(self, *, include_spilled: bool = False) -> list[CallRecord]:
        """All records, oldest first (those spilled to disk too when asked)."""
        with self._lock:
            recent = list(self._records.values())
        return [*self._read_spilled(), *recent] if include_spilled else recent

    def __iter__(self) -> Iterator[CallRecord]:
        return iter(self.records())

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def subscribe(self, listener: Callable[[CallRecord], None]) -> Callable[[], None]:
        """Call ``listener`` with every new or updated record; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _put(self, record: CallRecord) -> None:
        overflow: list[CallRecord] = []
        with self._lock:
            self._records[record.id] = record
            if len(self._records) > self.max_entries:
                # Spill a tenth at once: one file append per hundred calls, not one per call.
                keep = self.max_entries - max(1, self.max_entries // 10)
                while len(self._records) > keep:
                    overflow.append(self._records.pop(next(iter(self._records))))
        if overflow:
            self._spill_records(overflow)
        for listener in list(self._listeners):
            listener(record)

    def _spill_records(self, records: list[CallRecord]) -> None:
        if self.spill_dir is None:
            return  # no workspace: the oldest records are dropped, as a bounded log must
        self.spill_dir.mkdir(parents=True, exist_ok=True)
        with (self.spill_dir / "calls.jsonl").open("a", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record.to_json(), ensure_ascii=False) + "\n")
        self.spilled += len(records)

    def _spill_result(self, call_id: str, encoded: str) -> str:
        assert self.spill_dir is not None
        folder = self.spill_dir / "results"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"results/{call_id}.json"
        (self.spill_dir / name).write_text(encoded, encoding="utf-8")
        return name

    def _read_spilled(self) -> list[CallRecord]:
        if self.spill_dir is None or not (self.spill_dir / "calls.jsonl").exists():
            return []
        out = []
        for line in (self.spill_dir / "calls.jsonl").read_text(encoding="utf-8").splitlines():
            data = json.loads(line)
            data["warnings"] = tuple(data.get("warnings", ()))
            out.append(CallRecord(**data))
        return out


def _rough_size(result: dict[str, Any]) -> int:
    """A cheap lower bound of a result's JSON size: its text and binary payloads, or its structured part.

    Encoding every result to measure it would cost more than the rest of the bookkeeping of a call.
    """
    size = 0
    for block in result.get("content") or ():
        if isinstance(block, dict):
            size += sum(len(v) for v in block.values() if isinstance(v, str))
            inner = block.get("resource")
            if isinstance(inner, dict):
                size += sum(len(v) for v in inner.values() if isinstance(v, str))
    structured = result.get("structuredContent")
    if structured is not None and size == 0:
        size = len(json.dumps(structured))
    return size
