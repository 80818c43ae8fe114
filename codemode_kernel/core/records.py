"""The records a run leaves, as JSON: the one definition every side reads.

A run's record (``ExecutionRecord``: ``ExecutionResult.to_dict()``), a tool call's (``ToolCallRecord``:
``CallRecord.to_json()``), an artifact's metadata (``ArtifactMetadata``: ``Artifact.to_dict()``), an
approval (``ApprovalRecord``: ``Decision.to_json()``), a value (``ValueEnvelope``) and an error
(``ErrorRecord``) are defined here once. The Python objects serialise to them (mypy checks it where they
are built); ``codemode serve``'s outputSchema is derived from them (``serve/record.py``); the trace a cell
displays (``TraceRecord`` and ``TraceMetadata``, ``views/display.py``) and the kernel's state file for the
sidebar (``KernelState``, ``kernel/state_file.py``) are typed with them; and the JupyterLab extension's
types and its test fixtures are generated from them (``scripts/record_types.py``, with ``--check``).

Two records only a worker's frames carry are here too, so that a worker loads one module of records: why
the kernel refused a request (``RequestError``) and a program's ``llm()`` arguments (``LLMRequest``).
docs/protocol.md lists them with the values, errors and artifacts inside frames (``worker/protocol.py``'s
``RECORDS``); the extension never sees them (they are not in ``RECORD_TYPES``).

Why TypedDicts: a record is plain JSON on every wire (a worker's frame, a notebook, MCP structured content),
and this module must stay importable by a worker (standard library only).

This module does not use ``from __future__ import annotations``: ``NotRequired`` must be evaluated when
the class is made, or ``__required_keys__`` (which the generators read) would be wrong.
"""

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "NOTES_PER_RUN",
    "NOTE_DATA_BYTES",
    "NOTE_MESSAGE_CHARS",
    "RECORD_TYPES",
    "ApprovalRecord",
    "ArtifactIds",
    "ArtifactMetadata",
    "BytesEnvelope",
    "CallProgress",
    "CallStatus",
    "CallTimes",
    "ErrorRecord",
    "ExecutionRecord",
    "ExecutionStatus",
    "ExecutorNode",
    "ExecutorState",
    "ImageEnvelope",
    "JobEntry",
    "JsonEnvelope",
    "KernelState",
    "LLMRequest",
    "NodeAttempt",
    "NoteRecord",
    "PendingCall",
    "ReprEnvelope",
    "RequestError",
    "ServerEntry",
    "TableEnvelope",
    "TextEnvelope",
    "ToolCallRecord",
    "ToolEntry",
    "TraceArtifact",
    "TraceCall",
    "TraceMetadata",
    "TraceRecord",
    "ValueEnvelope",
]

NonfinitePath = list[str | int]
"""Where a NaN or an infinity sits in ``data`` (or ``rows``): keys and indexes from the top."""


# --- values and errors ------------------------------------------------------------------------------------


class JsonEnvelope(TypedDict):
    """JSON data; numpy values add ``dtype`` (and ``shape`` for arrays)."""

    kind: Literal["json"]
    data: Any
    nonfinite: NotRequired[list[NonfinitePath]]
    """Paths of the floats that travel as ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``."""
    truncated: NotRequired[bool]
    length: NotRequired[int]
    """With ``truncated``: the number of items of the list or dict that was cut."""
    dtype: NotRequired[str]
    shape: NotRequired[list[int]]


class TextEnvelope(TypedDict):
    """A str at top level (so a string and a list are never confused)."""

    kind: Literal["text"]
    text: str
    truncated: NotRequired[bool]
    size: NotRequired[int]
    """With ``truncated``: the UTF-8 size of the whole text."""


class BytesEnvelope(TypedDict):
    """Bytes as base64 ``data``; ``size`` is the length of the whole value."""

    kind: Literal["bytes"]
    data: str
    size: int
    mime_type: NotRequired[str]
    """When the bytes are a known image format."""
    truncated: NotRequired[bool]


class ImageEnvelope(TypedDict):
    """A PNG, JPEG, GIF or WebP image as base64 ``data``."""

    kind: Literal["image"]
    mime_type: str
    data: str


class TableEnvelope(TypedDict):
    """A pandas DataFrame (``origin: dataframe``) or a list of dicts with the same keys (``records``)."""

    kind: Literal["table"]
    origin: Literal["records", "dataframe"]
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    nonfinite: NotRequired[list[NonfinitePath]]
    dtypes: NotRequired[list[str]]
    """A DataFrame's column dtypes, in the order of ``columns``."""


class ReprEnvelope(TypedDict):
    """Anything else: its (clipped) ``repr`` and the qualified name of its type."""

    kind: Literal["repr"]
    repr: str
    type: str
    truncated: NotRequired[bool]
    size: NotRequired[int]


ValueEnvelope = JsonEnvelope | TextEnvelope | BytesEnvelope | ImageEnvelope | TableEnvelope | ReprEnvelope
"""A value as data, never a pickle: ``{"kind": ..., ...}`` (worker/values.py makes and checks them)."""


class ErrorRecord(TypedDict):
    """Why a program failed: ``type`` and ``message``; a worker's record also says where."""

    type: str
    """The exception's qualified type name (``ZeroDivisionError``, ``tools.ToolError``...)."""
    message: str
    line: NotRequired[int | None]
    """1-based, in the code as written (Markdown fences and ``%%codemode`` lines count)."""
    column: NotRequired[int | None]
    source_line: NotRequired[str | None]
    traceback: NotRequired[str]
    """The program's own frames only, as Python prints a traceback."""


# --- a worker's requests ---------------------------------------------------------------------------------


class RequestError(TypedDict):
    """Why the kernel refused a tool call or an artifact request; the worker raises it by ``type``."""

    type: str
    """An error class the worker knows (``ToolError``, ``ArtifactNotFoundError``...); others: ServerError."""
    message: str
    tool: NotRequired[str]
    server: NotRequired[str | None]
    field: NotRequired[str | None]
    """ToolArgumentError: the argument at fault."""
    timeout: NotRequired[float]
    """ToolTimeoutError: the call's timeout, in seconds."""
    key: NotRequired[str | None]
    """ArtifactNotFoundError: the id or name that was not found."""


class LLMRequest(TypedDict):
    """The ``arguments`` of a program's ``llm()``: a ``tool_call`` of the pseudo tool codemode/llm."""

    prompt: str
    system: NotRequired[str]
    max_tokens: NotRequired[int]


# --- artifacts --------------------------------------------------------------------------------------------


class TraceArtifact(TypedDict):
    """An artifact as a trace's data holds it: what reads the same on every run."""

    name: str | None
    type: str
    """Its MIME type."""
    description: str
    size: int
    sha256: str


class ArtifactIds(TypedDict):
    """An artifact's keys that change from run to run: a trace keeps them in its output's metadata."""

    id: str
    created: str
    """UTC, ISO 8601."""
    execution_id: str | None


class ArtifactMetadata(TraceArtifact, ArtifactIds):
    """One stored artifact, without its data (``Artifact.to_dict()``)."""


# --- tool calls -------------------------------------------------------------------------------------------

CallStatus = Literal[
    "running", "ok", "tool_error", "invalid_arguments", "timeout", "cancelled", "server_error", "denied"
]
"""``ok`` answered; ``tool_error`` the server reported isError; ``invalid_arguments`` refused before
sending; ``timeout`` the per-call timeout fired; ``cancelled`` the caller gave up (interrupt);
``server_error`` the connection or the protocol failed; ``denied`` it needed approval and did not get it
(nothing was sent)."""


class ApprovalRecord(TypedDict):
    """A call that needed approval: the decision, who made it, its scope, why it was asked, for whom."""

    decision: Literal["allowed", "denied"]
    by: str
    """Who decided: ``the user``, ``the client``, ``codemode run --approve all``, ``timeout``..."""
    scope: Literal["once", "kernel", "session"]
    """``kernel``: allowed for the rest of this kernel; ``session``: for the serve client's session."""
    reason: str
    origin: NotRequired[Literal["model", "notebook_tool", "person", "unstated"]]
    """Whose call it was, when not a program's (a program's record leaves it out)."""


class CallProgress(TypedDict):
    """A call's progress as its server reported it: ``count`` notifications, the last one's values."""

    count: int
    progress: float
    total: float | None
    message: str | None


class TraceCall(TypedDict):
    """A tool call as a trace's data holds it: what reads the same on every run."""

    server: str
    tool: str
    arguments: dict[str, Any]
    status: CallStatus
    result: dict[str, Any] | None
    """The MCP CallToolResult as wire JSON; ``{"preview", "bytes"}`` when it went to an artifact."""
    error: str | None
    warnings: list[str]
    seq: int | None
    """Its number in the execution, as the program issued it."""
    approval: NotRequired[ApprovalRecord | None]
    progress: NotRequired[CallProgress | None]
    """The server's progress notifications on the call: how many, and the last one."""
    asked: NotRequired[list[dict[str, Any]]]
    """What the server asked its client during the call (``hub/server_requests.py``): each a ``kind``
    (``elicitation``, ``sampling``), the question and the answer."""


class _CallIds(TypedDict):
    """A call's keys that change from run to run."""

    id: str
    started: float
    """When it started (``time.time()``)."""
    duration_ms: float | None
    execution_id: str | None
    artifact_id: str | None
    """The artifact holding the whole result when it was too large for the record."""


class CallTimes(_CallIds):
    """A call's keys that change from run to run: a trace keeps them in its output's metadata."""

    result_file: NotRequired[None]
    """Always null: where records before the artifact store kept a large result."""


class ToolCallRecord(TraceCall, _CallIds):
    """One tool call of the execution, as the call log recorded it (``CallRecord.to_json()``)."""


# --- a run ------------------------------------------------------------------------------------------------

ExecutionStatus = Literal["ok", "error", "timeout", "crashed", "internal", "pending", "cancelled"]
"""``ok`` the program finished; ``error`` it raised (the model can fix it); ``timeout`` it was stopped
at its deadline; ``crashed`` the worker died (a signal, memory, ``os._exit``, a broken channel);
``internal`` our own failure (an agent must stop); ``pending`` replay stopped at unanswered tool calls;
``cancelled`` someone stopped it before its deadline (a background run's cancel)."""


class PendingCall(TypedDict):
    """A call a replay could not answer from its record (status ``pending``): who must run it, and how."""

    server: str
    tool: str
    arguments: dict[str, Any]
    seq: int | None
    """The call's number in the run; its answer keeps it (``owned.answered``)."""
    id: NotRequired[str]
    """In ``codemode serve``'s reply: the id the client's answer names (``call_<seq>``)."""


class NoteRecord(TypedDict):
    """A note the program sent with ``notify(message, **data)``, as whoever watched the run got it."""

    message: str
    """At most ``NOTE_MESSAGE_CHARS`` characters (a longer one is cut, and says so)."""
    data: dict[str, Any]
    """The keyword arguments, JSON values (at most ``NOTE_DATA_BYTES`` as JSON, else ``{"cut": size}``)."""
    at_ms: float
    """Milliseconds since the run was asked for."""


NOTE_MESSAGE_CHARS = 2000
"""The longest note message kept; a program's longer one is cut."""
NOTE_DATA_BYTES = 16_384
"""The most JSON a note's data may take; a program's larger data is replaced by its size."""
NOTES_PER_RUN = 1000
"""Notes one run keeps; later ones are counted (``notes_dropped``), not kept."""


class _Outcome(TypedDict):
    """What a run's record and its trace share: how it ended, its value or error, what it printed."""

    status: ExecutionStatus
    value: ValueEnvelope | None
    error: ErrorRecord | None
    stdout: str
    stderr: str
    output_truncated: bool
    timeout_s: float
    pending_calls: list[PendingCall]
    completed: bool
    """It ended with ``complete(answer, **data)``: ``value`` is ``{"answer": ..., "data": {...}}``."""
    notes: NotRequired[list[NoteRecord]]
    """What the program sent with ``notify()``, in order (present when it sent any)."""
    notes_dropped: NotRequired[int]
    """Notes beyond ``NOTES_PER_RUN``, counted but not kept."""


class NodeAttempt(TypedDict):
    """Where one attempt of a run on a Ray cluster ran, and how it ended there."""

    node: str
    """The Ray node id (hex)."""
    outcome: str
    """``finished``, or why the run moved on: ``lost: ...`` (the node went away while it ran)."""


class ExecutionRecord(_Outcome):
    """One run, whole (``ExecutionResult.to_dict()``): what ``codemode run --json`` prints."""

    execution_id: str
    tool_calls: list[ToolCallRecord]
    artifacts: list[ArtifactMetadata]
    duration_ms: float
    protections: list[str]
    """Isolation layers in force; ``missing:<layer>: reason`` entries name those that were not."""
    nodes: NotRequired[list[NodeAttempt]]
    """On a Ray cluster: the node of each attempt, in order (more than one when a lost node moved it)."""


class TraceRecord(_Outcome):
    """A run as a cell's trace output holds it (``application/vnd.codemode.trace.v1+json``).

    Only what reads the same on every run, so that a stored notebook compares equal; the rest is in
    ``TraceMetadata``.
    """

    tool_calls: list[TraceCall]
    artifacts: list[TraceArtifact]
    code: NotRequired[str]
    """The program as written, for the lines around an error."""
    replayed: NotRequired[bool]
    """It ran on the recorded tool results of an earlier run: no server was called."""


class TraceMetadata(TypedDict):
    """A trace output's metadata: what changes from run to run.

    The run's id, duration and protections, and each call's (each artifact's) ids and times, in the order
    of the data's lists.
    """

    execution_id: str
    duration_ms: float
    protections: list[str]
    tool_calls: list[CallTimes]
    artifacts: list[ArtifactIds]
    nodes: NotRequired[list[NodeAttempt]]
    """On a Ray cluster: the node of each attempt (the record's ``nodes``); node ids change every run."""


# --- the kernel's state file (the JupyterLab sidebar) ------------------------------------------------------


class ServerEntry(TypedDict):
    """One server as the sidebar shows it: state, tools, error and fix, the link of a sign-in waiting."""

    name: str
    state: str
    """``connecting``, ``ready``, ``failed``, ``disabled``, ``closed``."""
    transport: str
    tool_count: int
    error: str | None
    fix: str | None
    signin_url: str | None


class ToolEntry(TypedDict):
    """One tool as the sidebar shows it: its stub's ``def`` line, its docstring, schemas, a call to insert."""

    name: str
    """The Python function's name."""
    server: str
    tool: str
    """The MCP tool's name."""
    signature: str
    doc: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    call: str


class ExecutorNode(TypedDict):
    """One node of the Ray cluster as the sidebar shows it."""

    node: str
    """The Ray node id (hex)."""
    address: str | None
    alive: bool
    cpus: float
    """The CPUs the node offers Ray."""
    prepared: int | None
    """Workers its actor has ready for the next runs; null until a run used the node."""
    running: int | None
    """Programs running on it now; null until a run used the node."""


class ExecutorState(TypedDict):
    """Where the kernel runs programs: this machine (``local``), or a Ray cluster's nodes and queue."""

    backend: Literal["local", "ray"]
    address: NotRequired[str]
    """Ray: the address in force (``auto``, ``HOST:PORT``, ``ray://HOST:10001``)."""
    nodes: NotRequired[list[ExecutorNode]]
    """Ray: every node the cluster lists, dead ones too; absent until the cluster first answered."""
    running: NotRequired[int]
    """Ray: this kernel's programs running on the nodes."""
    queued: NotRequired[int]
    """Ray: this kernel's programs waiting for a node with their resources free."""
    problem: NotRequired[str | None]
    """Ray: why the nodes shown may be out of date (the cluster failed or did not answer in time)."""


class JobEntry(TypedDict):
    """A background run of the kernel (``%%codemode --background``), as the sidebar lists it."""

    id: str
    status: str
    """``running``, ``cancelling``, then the record's status (``ok``, ``error``, ``cancelled``...)."""
    first_line: str
    started: str
    """When it started (UTC, ISO 8601): the sidebar counts a running one's seconds from it."""
    seconds: float | None
    """How long it ran, once it ended; None while it runs."""


class KernelState(TypedDict):
    """``codemode-<kernel id>.json``: what a kernel last wrote about itself for the sidebar."""

    version: int
    kernel_id: str
    pid: int
    workspace: str
    problem: str | None
    servers: list[ServerEntry]
    tools: list[ToolEntry]
    executor: NotRequired[ExecutorState]
    """Where programs run; absent until the kernel's tools started (or when they could not)."""
    jobs: NotRequired[list[JobEntry]]
    """The background runs, newest first (kernel/state_file.py lists the last 20); absent before one."""
    updated: NotRequired[str]
    """When it was written (UTC, ISO 8601); compared, never parsed."""


RECORD_TYPES: tuple[Any, ...] = (
    JsonEnvelope,
    TextEnvelope,
    BytesEnvelope,
    ImageEnvelope,
    TableEnvelope,
    ReprEnvelope,
    ErrorRecord,
    ArtifactMetadata,
    TraceArtifact,
    ArtifactIds,
    ApprovalRecord,
    CallProgress,
    ToolCallRecord,
    TraceCall,
    CallTimes,
    PendingCall,
    NodeAttempt,
    NoteRecord,
    ExecutionRecord,
    TraceRecord,
    TraceMetadata,
    ServerEntry,
    ToolEntry,
    ExecutorNode,
    ExecutorState,
    JobEntry,
    KernelState,
)
"""Every record, in the order the generated TypeScript declares them."""
