/**
 * The trace record as the renderer uses it, read defensively from an output's data and metadata.
 *
 * Notebooks are edited by hand and by other tools, so any field may be missing or of the wrong type:
 * `parseTrace` never throws and keeps whatever is usable. The kernel keeps run-to-run stable fields in
 * the data and the volatile ones (ids, timings) in the metadata, call by call in the same index order;
 * here they are joined again. The keys read are those of the generated record types
 * (`TraceRecord`, `TraceMetadata`...: codemode_kernel/core/records.py), so a renamed key fails the build.
 */

import { asList, asNumber, asObject, toJson } from '../common/values';
import type {
  ApprovalRecord,
  ArtifactIds,
  CallProgress,
  CallTimes,
  ErrorRecord,
  NodeAttempt,
  NoteRecord,
  PendingCall,
  TraceArtifact,
  TraceCall,
  TraceMetadata,
  TraceRecord,
  Untrusted
} from '../records.generated';

/** The MIME type of a codemode trace. */
export const TRACE_MIME = 'application/vnd.codemode.trace.v1+json';

/**
 * A call's progress as its server reported it (MCP progress notifications): `count` notifications so far
 * (null in a record without it), the last one's `progress`, `total` (null: open-ended) and `message`
 * (one line; '' when there was none).
 */
export interface IProgress {
  count: number | null;
  progress: number | null;
  total: number | null;
  message: string;
}

/**
 * Who allowed or denied a call that needed approval (a destructive tool, or one the config lists), and why
 * it was asked: `decision` is `allowed` or `denied`, `by` `the user`, `the client`, `timeout`, `nobody`...,
 * `scope` `once`, `kernel` or `session`.
 */
export type IApproval = Record<Exclude<keyof ApprovalRecord, 'origin'>, string>;

/** One tool call, data and metadata joined. */
export interface ICall {
  /** Identifies the call across live updates (its seq, else its id, else its index). */
  key: string;
  /** Its index in the record's list. */
  index: number;
  seq: number | null;
  server: string;
  tool: string;
  arguments: unknown;
  status: string;
  /** The CallToolResult in wire form, an artifact preview (`{preview, bytes}`), or undefined. */
  result: unknown;
  error: string;
  warnings: string[];
  /** Null when the call needed no approval. */
  approval: IApproval | null;
  progress: IProgress | null;
  /** What the server asked during the call (elicitation, sampling), as objects; empty when nothing. */
  asked: Record<string, unknown>[];
  durationMs: number | null;
  id: string;
  artifactId: string;
  started: number | null;
}

/** A stored artifact. */
export interface IArtifact {
  id: string;
  name: string;
  type: string;
  description: string;
  size: number | null;
  sha256: string;
  created: string;
}

/** The program's error. */
export interface ITraceError {
  type: string;
  message: string;
  line: number | null;
  column: number | null;
  sourceLine: string;
  traceback: string;
}

/** A call still in flight when the run ended. */
export interface IPendingCall {
  server: string;
  tool: string;
  arguments: unknown;
}

/** Where one attempt of a run on a Ray cluster ran (its node id, hex), and how it ended there. */
export interface INodeAttempt {
  node: string;
  /** `finished`, or why the run moved on: `lost: ...`. */
  outcome: string;
}

/** What the program said with `notify(message, **data)`, in order. */
export interface INote {
  message: string;
  data: Record<string, unknown>;
}

/** A whole trace. */
export interface ITrace {
  /** False when the data was not a trace object at all. */
  valid: boolean;
  status: string;
  code: string;
  value: Record<string, unknown> | null;
  error: ITraceError | null;
  stdout: string;
  stderr: string;
  outputTruncated: boolean;
  calls: ICall[];
  artifacts: IArtifact[];
  pendingCalls: IPendingCall[];
  timeoutS: number | null;
  replayed: boolean;
  executionId: string;
  durationMs: number | null;
  protections: string[];
  /** On a Ray cluster: the node of each attempt, in order (more than one when a lost node moved the run). */
  nodes: INodeAttempt[];
  /** The program's notes (`notify()`), live and at the end; `notesDropped` more were counted, not kept. */
  notes: INote[];
  notesDropped: number;
}

/** `value` as text: strings as they are, numbers and booleans written out, anything else as JSON. */
export function asText(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (value === null || value === undefined) {
    return '';
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  return toJson(value);
}

/** A trace object from an output's data (the MIME value, or a whole bundle holding it). */
function unwrap(value: unknown): Record<string, unknown> | null {
  const obj = asObject(value);
  if (obj && TRACE_MIME in obj && !('status' in obj) && !('tool_calls' in obj)) {
    return asObject(obj[TRACE_MIME]);
  }
  return obj;
}

/** A record's `progress`, or null when it is missing or holds nothing usable. */
export function parseProgress(value: unknown): IProgress | null {
  const obj: Untrusted<CallProgress> | null = asObject(value);
  if (!obj) {
    return null;
  }
  const count = asNumber(obj.count);
  const progress = {
    count: count !== null && Number.isInteger(count) && count > 0 ? count : null,
    progress: asNumber(obj.progress),
    total: asNumber(obj.total),
    // One line: the row has one, and a message with line breaks would not fit it.
    message: typeof obj.message === 'string' ? obj.message.split(/\s+/).filter(Boolean).join(' ') : ''
  };
  return progress.count !== null || progress.progress !== null || progress.message ? progress : null;
}

/** A record's `approval`, or null when it is missing or holds nothing usable. */
export function parseApproval(value: unknown): IApproval | null {
  const obj: Untrusted<ApprovalRecord> | null = asObject(value);
  if (!obj) {
    return null;
  }
  const approval = {
    decision: asText(obj.decision),
    by: asText(obj.by),
    scope: asText(obj.scope),
    reason: asText(obj.reason)
  };
  return approval.decision || approval.by || approval.reason ? approval : null;
}

function parseCall(value: unknown, meta: unknown, index: number): ICall {
  const call: Untrusted<TraceCall> = asObject(value) ?? {};
  const extra: Untrusted<CallTimes> = asObject(meta) ?? {};
  const seq = asNumber(call.seq);
  const id = asText(extra.id);
  return {
    key: seq !== null ? `s${seq}` : id ? `i${id}` : `x${index}`,
    index,
    seq,
    server: asText(call.server),
    tool: asText(call.tool),
    arguments: call.arguments,
    status: asText(call.status) || 'unknown',
    result: call.result === null ? undefined : call.result,
    error: asText(call.error),
    warnings: asList(call.warnings).map(asText),
    approval: parseApproval(call.approval),
    progress: parseProgress(call.progress),
    asked: asList(call.asked)
      .map(asObject)
      .filter((entry): entry is Record<string, unknown> => entry !== null),
    durationMs: asNumber(extra.duration_ms),
    id,
    artifactId: asText(extra.artifact_id),
    started: asNumber(extra.started)
  };
}

/** The calls in the order the program made them: by seq, unnumbered ones last in record order. */
export function sortCalls(calls: ICall[]): ICall[] {
  return calls.slice().sort((a, b) => {
    if (a.seq !== null && b.seq !== null) {
      return a.seq - b.seq || a.index - b.index;
    }
    if (a.seq !== null) {
      return -1;
    }
    if (b.seq !== null) {
      return 1;
    }
    return a.index - b.index;
  });
}

function parseError(value: unknown): ITraceError | null {
  const error: Untrusted<ErrorRecord> | null = asObject(value);
  if (!error) {
    return null;
  }
  return {
    type: asText(error.type) || 'Error',
    message: asText(error.message),
    line: asNumber(error.line),
    column: asNumber(error.column),
    sourceLine: asText(error.source_line),
    traceback: asText(error.traceback)
  };
}

function parseArtifact(value: unknown, meta: unknown): IArtifact {
  const artifact: Untrusted<TraceArtifact> = asObject(value) ?? {};
  const extra: Untrusted<ArtifactIds> = asObject(meta) ?? {};
  return {
    id: asText(extra.id),
    name: asText(artifact.name),
    type: asText(artifact.type),
    description: asText(artifact.description),
    size: asNumber(artifact.size),
    sha256: asText(artifact.sha256),
    created: asText(extra.created)
  };
}

/** A trace metadata's `nodes`: the attempts that name a node, in order. */
export function parseNodes(value: unknown): INodeAttempt[] {
  return asList(value)
    .map(entry => {
      const attempt: Untrusted<NodeAttempt> = asObject(entry) ?? {};
      return { node: asText(attempt.node), outcome: asText(attempt.outcome) };
    })
    .filter(attempt => attempt.node !== '');
}

/** A trace's `notes`: each with a message or data (an entry that is neither is left out). */
export function parseNotes(value: unknown): INote[] {
  return asList(value)
    .map(entry => {
      const note: Untrusted<NoteRecord> = asObject(entry) ?? {};
      return { message: asText(note.message), data: asObject(note.data) ?? {} };
    })
    .filter(note => note.message !== '' || Object.keys(note.data).length > 0);
}

/** Read a trace from an output's data and metadata (either may be anything). */
export function parseTrace(data: unknown, metadata?: unknown): ITrace {
  const trace = unwrap(data);
  const meta: Untrusted<TraceMetadata> = unwrap(metadata) ?? {};
  const record: Untrusted<TraceRecord> = trace ?? {};
  const metaCalls = asList(meta.tool_calls);
  const metaArtifacts = asList(meta.artifacts);
  const calls = asList(record.tool_calls).map((c, i) => parseCall(c, metaCalls[i], i));
  const keys = new Set<string>();
  for (const call of calls) {
    if (keys.has(call.key)) {
      call.key = `${call.key}#${call.index}`; // a repeated seq in an edited record
    }
    keys.add(call.key);
  }
  return {
    valid: trace !== null,
    status: asText(record.status) || 'unknown',
    code: asText(record.code),
    value: asObject(record.value),
    error: parseError(record.error),
    stdout: asText(record.stdout),
    stderr: asText(record.stderr),
    outputTruncated: record.output_truncated === true,
    calls: sortCalls(calls),
    artifacts: asList(record.artifacts).map((a, i) => parseArtifact(a, metaArtifacts[i])),
    pendingCalls: asList(record.pending_calls).map(p => {
      const call: Untrusted<PendingCall> = asObject(p) ?? {};
      return {
        server: asText(call.server),
        tool: asText(call.tool),
        arguments: call.arguments
      };
    }),
    timeoutS: asNumber(record.timeout_s),
    replayed: record.replayed === true,
    executionId: asText(meta.execution_id),
    durationMs: asNumber(meta.duration_ms),
    protections: asList(meta.protections).map(asText),
    nodes: parseNodes(meta.nodes),
    notes: parseNotes(record.notes),
    notesDropped: Math.max(0, asNumber(record.notes_dropped) ?? 0)
  };
}

/** What the page around the renderer offers it (the plugin passes the sidebar's "open artifact"). */
export interface ITraceHooks {
  /** Open a stored artifact (by its id when known, else by name), e.g. in the Code Mode sidebar. */
  openArtifact?: (ref: { id?: string; name?: string }) => void;
}
