/**
 * The client of codemode-kernel's jupyter_server extension (`/codemode/api/...`).
 *
 * The server reads what the kernel wrote into the workspace (`.codemode/`), so the sidebar works while a cell
 * runs and after a restart. Every answer is normalised here into the typed records below: the views can then
 * trust the field types (never the contents: every string is still untrusted text). The keys read are those
 * of the generated record types (`KernelState`, `ArtifactMetadata`...: codemode_kernel/core/records.py).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { asList, asNumber, asObject } from '../common/values';
import type {
  ArtifactMetadata,
  ExecutorNode,
  ExecutorState,
  JobEntry,
  KernelState,
  ServerEntry,
  ToolEntry,
  Untrusted
} from '../records.generated';

/** One MCP server as the kernel's hub sees it. */
export interface IServerInfo {
  name: string;
  /** connecting, ready, failed, disabled, closed (or whatever a newer kernel says). */
  state: string;
  transport: string;
  toolCount: number;
  error: string;
  fix: string;
  /** The link of a sign-in waiting for the person (an http(s) URL), or '' when there is none. */
  signinUrl: string;
}

/** One tool as a Python function of the kernel. */
export interface IToolInfo {
  /** The Python function name. */
  name: string;
  server: string;
  /** The MCP tool name. */
  tool: string;
  /** The Python `def` line. */
  signature: string;
  doc: string;
  inputSchema: unknown;
  outputSchema: unknown;
  /** Example call text that "Insert a call" puts into the cell. */
  call: string;
}

/** One node of the Ray cluster the kernel runs programs on. */
export interface IExecutorNode {
  /** The Ray node id (hex). */
  node: string;
  address: string;
  alive: boolean;
  cpus: number | null;
  /** Workers prepared there, and programs running there: null until a run used the node. */
  prepared: number | null;
  running: number | null;
}

/** Where the kernel runs programs. */
export interface IExecutorInfo {
  /** `local` or `ray` (or whatever a newer kernel says). */
  backend: string;
  /** Ray: the address in force. */
  address: string;
  /** Ray: the cluster's nodes; null until the cluster first answered. */
  nodes: IExecutorNode[] | null;
  /** Ray: this kernel's programs running on the nodes, and waiting for one. */
  running: number | null;
  queued: number | null;
  /** Ray: why the nodes shown may be out of date, or ''. */
  problem: string;
}

/** A background run of the kernel (`%%codemode --background`). */
export interface IJobInfo {
  /** The execution id (12 hex digits). */
  id: string;
  /** `running`, `cancelling`, then the record's status. */
  status: string;
  firstLine: string;
  /** When it started (ms since the epoch), or null when the kernel's time does not parse. */
  started: number | null;
  /** How long it ran, once it ended; null while it runs. */
  seconds: number | null;
}

/** What a Code Mode kernel last wrote about itself. */
export interface IKernelState {
  version: number;
  kernelId: string;
  pid: number | null;
  workspace: string;
  /** Changes whenever the kernel rewrites its state; compared, never parsed. */
  updated: string;
  servers: IServerInfo[];
  tools: IToolInfo[];
  /** Null when the kernel has not said (its tools have not started, or it is older). */
  executor: IExecutorInfo | null;
  /** The background runs, newest first (empty before the first one, or from an older kernel). */
  jobs: IJobInfo[];
}

/** One stored artifact, without its data. */
export interface IArtifactInfo {
  id: string;
  name: string;
  type: string;
  description: string;
  size: number;
  created: string;
  executionId: string;
}

/** One `%%codemode` execution or `%%agent` request, newest first in a listing. */
export interface IRunSummary {
  id: string;
  kind: string;
  number: number | null;
  kernelId: string;
  cellId: string;
  code: string;
  request: string;
  model: string;
  status: string;
  toolCalls: number | null;
  finished: string;
  durationMs: number | null;
  replayed: boolean;
}

/** The MIME bundle a run displayed in its cell. */
export interface IRunBundle {
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/** A run with the bundle its cell showed. */
export interface IRun extends IRunSummary {
  bundle: IRunBundle;
}

/** The bytes of an artifact and the type the server sent them with. */
export interface IArtifactData {
  bytes: ArrayBuffer;
  contentType: string;
}

/** A file to save: the bytes and a file name without directories. */
export interface IDownload {
  blob: Blob;
  filename: string;
}

/** A failed request: the HTTP status (0 for a network failure) and the server's message. */
export class CodeModeApiError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message);
    this.name = 'CodeModeApiError';
  }
}

/** Calls the REST API with the page's Jupyter credentials (ServerConnection). */
export class CodeModeClient {
  constructor(settings?: ServerConnection.ISettings) {
    this.settings = settings ?? ServerConnection.makeSettings();
  }

  /** The connection settings (base URL, token, fetch). */
  readonly settings: ServerConnection.ISettings;

  /** The kernel's state, or null when it wrote none (not a Code Mode kernel, or still starting). */
  async state(kernelId: string): Promise<IKernelState | null> {
    const response = await this._get(['kernels', kernelId, 'state'], true);
    if (response === null) {
      return null;
    }
    return normalizeState(await this._json(response));
  }

  /** The workspace's artifacts, newest first. */
  async artifacts(kernelId: string): Promise<IArtifactInfo[]> {
    const body = asRecord(await this._json(await this._must(['kernels', kernelId, 'artifacts'])));
    return asList(body.artifacts).map(normalizeArtifact);
  }

  /** The bytes of one artifact. */
  async artifactData(kernelId: string, artifactId: string): Promise<IArtifactData> {
    const response = await this._must(['kernels', kernelId, 'artifacts', artifactId]);
    return {
      bytes: await response.arrayBuffer(),
      contentType: response.headers.get('Content-Type') ?? 'application/octet-stream'
    };
  }

  /** The URL the server serves an artifact as an attachment from. */
  downloadUrl(kernelId: string, artifactId: string): string {
    return this._url(['kernels', kernelId, 'artifacts', artifactId]) + '?download=1';
  }

  /**
   * An artifact as a file to save, fetched from the `?download=1` URL with the page's credentials (a plain
   * link would not carry a token that is not in a cookie).
   */
  async download(kernelId: string, artifact: IArtifactInfo): Promise<IDownload> {
    const response = await this._request(this.downloadUrl(kernelId, artifact.id));
    if (!response.ok) {
      throw await apiError(response);
    }
    const disposition = response.headers.get('Content-Disposition') ?? '';
    return {
      blob: await response.blob(),
      filename: safeFilename(filenameFromDisposition(disposition) || artifact.name || artifact.id)
    };
  }

  /** The executions and agent requests of the workspace, newest first. */
  async history(kernelId: string): Promise<IRunSummary[]> {
    const body = asRecord(await this._json(await this._must(['kernels', kernelId, 'history'])));
    return asList(body.runs).map(normalizeRunSummary);
  }

  /** One run with the bundle its cell displayed. */
  async run(kernelId: string, runId: string): Promise<IRun> {
    const body = asRecord(await this._json(await this._must(['kernels', kernelId, 'history', runId])));
    const bundle = asRecord(body.bundle);
    return {
      ...normalizeRunSummary(body),
      bundle: { data: asRecord(bundle.data), metadata: asRecord(bundle.metadata) }
    };
  }

  private _url(parts: string[]): string {
    return URLExt.join(this.settings.baseUrl, 'codemode/api', ...parts.map(encodeURIComponent));
  }

  private async _request(url: string): Promise<Response> {
    try {
      return await ServerConnection.makeRequest(url, { method: 'GET' }, this.settings);
    } catch (error) {
      throw new CodeModeApiError(0, `cannot reach the Jupyter server: ${describe(error)}`);
    }
  }

  /** The response, or null for a 404 when `missingOk`; an error for any other failure. */
  private async _get(parts: string[], missingOk: boolean): Promise<Response | null> {
    const response = await this._request(this._url(parts));
    if (response.status === 404 && missingOk) {
      return null;
    }
    if (!response.ok) {
      throw await apiError(response);
    }
    return response;
  }

  private async _must(parts: string[]): Promise<Response> {
    return (await this._get(parts, false)) as Response;
  }

  private async _json(response: Response): Promise<unknown> {
    try {
      return await response.json();
    } catch (error) {
      throw new CodeModeApiError(response.status, `the server's answer is not JSON: ${describe(error)}`);
    }
  }
}

/** Turns a `state` answer into an IKernelState, tolerating missing or mistyped fields. */
export function normalizeState(value: unknown): IKernelState {
  const body: Untrusted<KernelState> = asRecord(value);
  return {
    version: asNumber(body.version) ?? 0,
    kernelId: asString(body.kernel_id),
    pid: asNumber(body.pid),
    workspace: asString(body.workspace),
    updated: typeof body.updated === 'number' ? String(body.updated) : asString(body.updated),
    servers: asList(body.servers).map(normalizeServer),
    tools: asList(body.tools).map(normalizeTool),
    executor: normalizeExecutor(body.executor),
    jobs: asList(body.jobs).map(normalizeJob)
  };
}

function normalizeJob(value: unknown): IJobInfo {
  const body: Untrusted<JobEntry> = asRecord(value);
  const started = Date.parse(asString(body.started));
  return {
    id: asString(body.id),
    status: asString(body.status) || 'unknown',
    firstLine: asString(body.first_line),
    started: Number.isNaN(started) ? null : started,
    seconds: asNumber(body.seconds)
  };
}

/** A state's `executor`, or null when it has none (an object without a backend is none). */
export function normalizeExecutor(value: unknown): IExecutorInfo | null {
  const body: Untrusted<ExecutorState> | null = asObject(value);
  const backend = asString(body?.backend);
  if (body === null || !backend) {
    return null;
  }
  return {
    backend,
    address: asString(body.address),
    nodes: Array.isArray(body.nodes) ? body.nodes.map(normalizeNode) : null,
    running: asNumber(body.running),
    queued: asNumber(body.queued),
    problem: asString(body.problem)
  };
}

function normalizeNode(value: unknown): IExecutorNode {
  const body: Untrusted<ExecutorNode> = asRecord(value);
  return {
    node: asString(body.node),
    address: asString(body.address),
    alive: body.alive === true,
    cpus: asNumber(body.cpus),
    prepared: asNumber(body.prepared),
    running: asNumber(body.running)
  };
}

function normalizeServer(value: unknown): IServerInfo {
  const body: Untrusted<ServerEntry> = asRecord(value);
  return {
    name: asString(body.name),
    state: asString(body.state),
    transport: asString(body.transport),
    toolCount: asNumber(body.tool_count) ?? 0,
    error: asString(body.error),
    fix: asString(body.fix),
    signinUrl: webLink(asString(body.signin_url))
  };
}

/** `text` if it is an http(s) URL, else '': a link the sidebar opens is never javascript: or data:. */
export function webLink(text: string): string {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : '';
  } catch {
    return '';
  }
}

function normalizeTool(value: unknown): IToolInfo {
  const body: Untrusted<ToolEntry> = asRecord(value);
  return {
    name: asString(body.name),
    server: asString(body.server),
    tool: asString(body.tool),
    signature: asString(body.signature),
    doc: asString(body.doc),
    inputSchema: body.input_schema ?? null,
    outputSchema: body.output_schema ?? null,
    call: asString(body.call)
  };
}

function normalizeArtifact(value: unknown): IArtifactInfo {
  const body: Untrusted<ArtifactMetadata> = asRecord(value);
  return {
    id: asString(body.id),
    name: asString(body.name),
    type: asString(body.type),
    description: asString(body.description),
    size: asNumber(body.size) ?? 0,
    created: asString(body.created),
    executionId: asString(body.execution_id)
  };
}

function normalizeRunSummary(value: unknown): IRunSummary {
  const body = asRecord(value);
  const calls = body.tool_calls;
  return {
    id: asString(body.id),
    kind: asString(body.kind),
    number: asNumber(body.number),
    kernelId: asString(body.kernel_id),
    cellId: asString(body.cell_id),
    code: asString(body.code),
    request: asString(body.request),
    model: asString(body.model),
    status: asString(body.status),
    toolCalls: Array.isArray(calls) ? calls.length : asNumber(calls),
    finished: asString(body.finished),
    durationMs: asNumber(body.duration_ms),
    replayed: body.replayed === true
  };
}

/** The file name a Content-Disposition header suggests (RFC 6266 `filename*` first), or ''. */
export function filenameFromDisposition(header: string): string {
  const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[2].trim());
    } catch {
      // a malformed escape: fall back to the plain parameter
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(header);
  if (plain) {
    return (plain[1] ?? plain[2] ?? '').replace(/\\(.)/g, '$1').trim();
  }
  return '';
}

/** A name to save a file under: no directories, no control or bidi characters, not empty, not too long. */
export function safeFilename(name: string): string {
  const cleaned = name
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
    .replace(/[\\/:*?"<>|]/g, '_')
    .replace(/^[.\s]+/, '')
    .trim()
    .slice(0, 200);
  return cleaned || 'artifact';
}

async function apiError(response: Response): Promise<CodeModeApiError> {
  let message = '';
  try {
    const body = asRecord(await response.json());
    message = asString(body.message);
  } catch {
    // not JSON: the status line says enough
  }
  return new CodeModeApiError(
    response.status,
    message || `the server answered ${response.status} ${response.statusText}`.trim()
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `value` as an object to read fields from (an empty one when it is not). */
function asRecord(value: unknown): Record<string, unknown> {
  return asObject(value) ?? {};
}

/** `value` as text where the server sent a scalar; any other value reads as missing (''). */
function asString(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  return '';
}
