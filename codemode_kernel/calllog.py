"""CallLog: the one record of every tool call, read by widgets, the agent, replay and audits.

The log is bounded in memory. When it grows past ``max_entries`` the oldest records are appended to
``calls.jsonl`` in the spill directory (the workspace's ``.codemode/``) and dropped from memory. A
result larger than ``max_result_bytes`` is stored at once as an artifact (in the ArtifactStore of that
directory), and the record keeps a short preview and the artifact's id: large data never floods a trace,
a widget or a model's context, and ``full_result`` reads it back. Nothing is lost, and memory stays flat
however long a kernel runs.
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
from typing import Any

from .artifacts import ArtifactStore
from .core.errors import ArtifactError
from .core.records import ApprovalRecord, CallProgress, CallStatus, ToolCallRecord

__all__ = [
    "DEFAULT_ARTIFACT_THRESHOLD",
    "CallLog",
    "CallProgress",
    "CallRecord",
    "CallStatus",
    "ToolCallRecord",
    "call_order",
]

log = logging.getLogger(__name__)

_PREVIEW_CHARS = 2000
DEFAULT_ARTIFACT_THRESHOLD = 64 * 1024
"""Bytes of JSON above which a tool result is stored as an artifact (``codeMode.artifactThresholdBytes``)."""


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
    artifact_id: str | None = None
    """Set when the result was stored as an artifact; ``result`` then holds ``{"preview", "bytes"}`` only,
    and ``CallLog.full_result`` (or the artifact) gives the whole."""
    execution_id: str | None = None
    seq: int | None = None
    """The call's number in its execution, as the program issued it (a parallel batch in submission order);
    None for calls made outside a program."""
    approval: ApprovalRecord | None = None
    """For a call that needed approval (``approvals.py``): the decision, who made it, and why it was asked."""
    progress: CallProgress | None = None
    """The server's progress notifications so far (``CallLog.progress``); kept when the call ends."""
    asked: tuple[dict[str, Any], ...] = ()
    """What the server asked during the call (elicitation, sampling) and the answers (``CallLog.asked``)."""

    def to_json(self) -> ToolCallRecord:
        """The call's record (core/records.py's ``ToolCallRecord``): every field, as JSON."""
        # Shallow on purpose: arguments and results are JSON already, and asdict() deep-copies them.
        record = ToolCallRecord(
            id=self.id,
            server=self.server,
            tool=self.tool,
            arguments=self.arguments,
            started=self.started,
            status=self.status,
            duration_ms=self.duration_ms,
            result=self.result,
            error=self.error,
            warnings=list(self.warnings),
            artifact_id=self.artifact_id,
            execution_id=self.execution_id,
            seq=self.seq,
            approval=self.approval,
            progress=self.progress,
        )
        if self.asked:  # left out when nothing was asked: records stay as saved notebooks hold them
            record["asked"] = list(self.asked)
        return record


def call_order(record: CallRecord) -> tuple[bool, int, float]:
    """Sort key: a program's calls by their number, then any unnumbered ones by start time."""
    return (record.seq is None, record.seq or 0, record.started)


@dataclass
class CallLog:
    """Thread-safe, bounded, append-only log of tool calls with spill-to-disk.

    ``artifacts`` is where results larger than ``max_result_bytes`` go; by default the store in
    ``spill_dir`` (opened on first use). Without either, or with ``max_result_bytes=None``, results stay
    whole in the records.
    """

    spill_dir: Path | None = None
    max_entries: int = 1000
    max_result_bytes: int | None = DEFAULT_ARTIFACT_THRESHOLD
    artifacts: ArtifactStore | None = None
    _records: dict[str, CallRecord] = field(default_factory=dict, init=False)
    """In memory, by id, in the order calls started (an update keeps a record's place)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _spill_lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _listeners: list[Callable[[CallRecord], None]] = field(default_factory=list, init=False)
    spilled: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.artifacts is None and self.spill_dir is not None:
            self.artifacts = ArtifactStore(self.spill_dir / "artifacts.db")

    def start(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        execution_id: str | None = None,
        seq: int | None = None,
    ) -> CallRecord:
        """Record that a call begins and return its (running) record."""
        record = CallRecord(
            id=uuid.uuid4().hex[:12],
            server=server,
            tool=tool,
            arguments=arguments,
            started=time.time(),
            execution_id=execution_id,
            seq=seq,
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
        """Record how a call ended; a large result becomes an artifact and the record keeps a preview."""
        duration_ms = (time.time() - record.started) * 1000.0
        with self._lock:
            current = self._records.get(record.id)
        if current is not None and current.progress is not None:
            record = replace(record, progress=current.progress)  # the progress recorded while it ran
        if current is not None and current.asked:
            record = replace(record, asked=current.asked)  # the questions asked while it ran
        artifact_id = None
        if result is not None and self.artifacts is not None:
            result, artifact_id = self._store_if_large(record, result)
        done = replace(
            record,
            status=status,
            duration_ms=duration_ms,
            result=result,
            error=error,
            warnings=record.warnings + warnings,
            artifact_id=artifact_id,
        )
        self._put(done)
        return done

    def progress(
        self, record: CallRecord, progress: float, total: float | None, message: str | None
    ) -> CallRecord:
        """Record one progress notification on a running call and show the updated record to listeners.

        A notification that arrives after the call ended (the server sent it late) is not recorded.
        """
        with self._lock:
            current = self._records.get(record.id)
            if current is None or current.status != "running":
                return current or record
            count = (current.progress or {"count": 0})["count"] + 1
            updated = replace(
                current,
                progress=CallProgress(count=count, progress=progress, total=total, message=message),
            )
            self._records[record.id] = updated  # in place: checked and set under one lock, never spilled
        self._notify(updated)
        return updated

    def asked(self, record_id: str, entry: dict[str, Any]) -> CallRecord | None:
        """Record what the server asked during a running call (a question and its answer) and show it.

        None when the call is no longer running (the question came late, or the call is gone).
        """
        with self._lock:
            current = self._records.get(record_id)
            if current is None or current.status != "running":
                return None
            updated = replace(current, asked=(*current.asked, entry))
            self._records[record_id] = updated
        self._notify(updated)
        return updated

    def _store_if_large(
        self, record: CallRecord, result: dict[str, Any]
    ) -> tuple[dict[str, Any], str | None]:
        """The result to keep in the record, and the artifact that holds the whole when it was large."""
        limit = self.max_result_bytes
        assert self.artifacts is not None
        if limit is None or _rough_size(result) <= limit // 2:
            return result, None  # cheap check first: encoding every result would cost more than the call
        encoded = json.dumps(result, ensure_ascii=False).encode()
        if len(encoded) <= limit:
            return result, None
        try:
            artifact = self.artifacts.put(
                encoded,
                type="application/json",
                name=f"{record.tool} result",
                # No call id here: a run's record lists this description and must read the same every
                # run; the call's record names the artifact (artifact_id) instead.
                description=f"the whole result of a {record.server}/{record.tool} call",
                execution_id=record.execution_id,
            )
        except (ArtifactError, OSError) as exc:
            log.warning("could not store a large result as an artifact (%s); kept it in the log", exc)
            return result, None
        # The id stays out of the result: a record's result must read the same on every run (nbval).
        return {"preview": _preview(result), "bytes": len(encoded)}, artifact.id

    def get(self, call_id: str) -> CallRecord | None:
        """The record with this id, from memory or the spill file."""
        with self._lock:
            found = self._records.get(call_id)
        if found is not None:
            return found
        return next((r for r in self._read_spilled() if r.id == call_id), None)

    def full_result(self, record: CallRecord) -> dict[str, Any] | None:
        """The complete result of a call, read back from the artifact store when it was stored there.

        Raises:
            ArtifactNotFoundError: the artifact was deleted since.
        """
        if record.artifact_id is None or self.artifacts is None:
            return record.result
        loaded: dict[str, Any] = self.artifacts.load(record.artifact_id)
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
        self._notify(record)

    def _notify(self, record: CallRecord) -> None:
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

    def _read_spilled(self) -> list[CallRecord]:
        if self.spill_dir is None or not (self.spill_dir / "calls.jsonl").exists():
            return []
        found: dict[str, CallRecord] = {}
        with self._spill_lock:
            text = (self.spill_dir / "calls.jsonl").read_text(encoding="utf-8", errors="replace")
        known = {f.name for f in fields(CallRecord)}
        for line in text.splitlines():
            try:
                data = json.loads(line)
                data["warnings"] = tuple(data.get("warnings", ()))
                # Keys of other versions (``result_file`` before artifacts) must not cost the record.
                record = CallRecord(**{k: v for k, v in data.items() if k in known})
            except (ValueError, TypeError, AttributeError):
                continue  # a line cut short by a crash: skip it, keep the rest
            found[record.id] = record  # the last copy of a record wins
        return list(found.values())


def _preview(result: dict[str, Any]) -> str:
    """The start of what a reader would look at: the text blocks, else the structured part, else the JSON."""
    texts = [
        b["text"]
        for b in result.get("content") or ()
        if isinstance(b, dict) and isinstance(b.get("text"), str)
    ]
    if texts:
        text = "\n".join(texts)
    elif result.get("structuredContent") is not None:
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
    else:
        text = json.dumps(result, ensure_ascii=False)
    return text if len(text) <= _PREVIEW_CHARS else text[:_PREVIEW_CHARS] + "…"


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
