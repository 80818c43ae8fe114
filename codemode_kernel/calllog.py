"""CallLog: the one record of every tool call, read by widgets, the agent, replay and audits.

The log is bounded in memory. When it grows past ``max_entries`` the oldest records are appended to
``calls.jsonl`` in the spill directory (the workspace's ``.codemode/``) and dropped from memory; a
result larger than ``max_result_bytes`` is written to ``results/<id>.json`` there at once and the
record keeps a short preview and the file's name. Nothing is lost, and memory stays flat however long
a kernel runs.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

__all__ = ["CallLog", "CallRecord", "CallStatus"]

log = logging.getLogger(__name__)

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
    _spill_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
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
                try:
                    result_file = self._spill_result(record.id, encoded)
                    result = {"preview": encoded[:_PREVIEW_CHARS], "bytes": len(encoded.encode())}
                except OSError as exc:
                    log.warning("could not write a large result to %s (%s); kept it", self.spill_dir, exc)
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
                # Spill a tenth at once (one file append per hundred calls), oldest first, and never a
                # call still running: its record would go to disk unfinished.
                excess = len(self._records) - (self.max_entries - max(1, self.max_entries // 10))
                for call_id, old in list(self._records.items()):
                    if excess <= 0:
                        break
                    if old.status != "running":
                        overflow.append(self._records.pop(call_id))
                        excess -= 1
        if overflow:
            self._spill_records(overflow)
        for listener in list(self._listeners):
            try:
                listener(record)
            except Exception:  # a broken widget must not break the tool call that is being recorded
                log.exception("a call log listener failed")

    def _spill_records(self, records: list[CallRecord]) -> None:
        if self.spill_dir is None:
            return  # no workspace: the oldest records are dropped, as a bounded log must
        lines = "".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in records)
        try:
            with self._spill_lock:
                self.spill_dir.mkdir(parents=True, exist_ok=True)
                with (self.spill_dir / "calls.jsonl").open("a", encoding="utf-8") as out:
                    out.write(lines)
        except OSError as exc:
            # Disk full or read-only: keep them in memory rather than lose them.
            log.warning("could not write the call log to %s (%s); keeping it in memory", self.spill_dir, exc)
            with self._lock:
                self._records = {**{r.id: r for r in records}, **self._records}
            return
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
        found: dict[str, CallRecord] = {}
        with self._spill_lock:
            text = (self.spill_dir / "calls.jsonl").read_text(encoding="utf-8", errors="replace")
        for line in text.splitlines():
            try:
                data = json.loads(line)
                data["warnings"] = tuple(data.get("warnings", ()))
                record = CallRecord(**data)
            except (ValueError, TypeError):
                continue  # a line cut short by a crash: skip it, keep the rest
            found[record.id] = record  # the last copy of a record wins
        return list(found.values())


def _rough_size(result: dict[str, Any]) -> int:
    """A cheap lower bound of a result's JSON size: its text and binary payloads plus its structured part.

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
    if structured is not None:
        size += len(json.dumps(structured))
    return size
