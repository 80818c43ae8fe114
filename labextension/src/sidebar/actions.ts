/**
 * Sidebar actions that the kernel performs (`%codemode reconnect`, `%codemode load`), sent as silent
 * executions: no execution count, no history, no output in any cell.
 *
 * The names in them come from the server's data, so the code is built only from checked parts: a server
 * name goes in single quotes (the magic splits with shlex) and may not hold a quote, a backslash, a control
 * character, or IPython's `$`/`{}` expansion; an artifact id is letters, digits, `-` and `_`; the target
 * name is a Python identifier. Anything else is refused before it reaches the kernel.
 */
import type { Kernel, KernelMessage } from '@jupyterlab/services';

/** Where an action is: waiting behind a running cell, running, finished well or not. */
export type ActionState = 'queued' | 'running' | 'done' | 'error';

/** What the status line shows about an action. */
export interface IActionReport {
  state: ActionState;
  text: string;
}

/** A name or id the sidebar will not put into kernel code; the message says why. */
export class UnsafeActionError extends Error {}

/** Python keywords (3.12), which cannot be variable names. */
const KEYWORDS = new Set(
  (
    'False None True and as assert async await break class continue def del elif else except finally for ' +
    'from global if import in is lambda nonlocal not or pass raise return try while with yield'
  ).split(' ')
);

const IDENTIFIER = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u;
const ARTIFACT_ID = /^[A-Za-z0-9_-]{1,128}$/;
// Printable, no quote, backslash, `$`, `{`, `}` and no control, separator or bidi formatting characters.
const UNSAFE_SERVER_CHAR = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}'\\${}]/u;

/** Why `name` cannot be a Python variable name, or null when it can. */
export function identifierProblem(name: string): string | null {
  if (name === '') {
    return 'enter a name';
  }
  if (!IDENTIFIER.test(name)) {
    return `"${name}" is not a Python name (letters, digits and _, not starting with a digit)`;
  }
  if (KEYWORDS.has(name)) {
    return `"${name}" is a Python keyword`;
  }
  return null;
}

/** The silent code that reconnects one server. */
export function reconnectCode(server: string): string {
  return serverActionCode('reconnect', server);
}

/** The silent code that starts a new sign-in to one server (its link then shows in the sidebar). */
export function loginCode(server: string): string {
  return serverActionCode('login', server);
}

function serverActionCode(action: 'reconnect' | 'login', server: string): string {
  if (server === '' || server.length > 200 || UNSAFE_SERVER_CHAR.test(server)) {
    throw new UnsafeActionError(
      'this server name has characters the sidebar does not send to the kernel; ' +
        `run %codemode ${action} in a cell instead`
    );
  }
  return `%codemode ${action} '${server}'`;
}

/** The silent code that loads an artifact into the kernel under `name`. */
export function loadCode(artifactId: string, name: string): string {
  if (!ARTIFACT_ID.test(artifactId)) {
    throw new UnsafeActionError('this artifact id is not one the store makes; it is not sent to the kernel');
  }
  const problem = identifierProblem(name);
  if (problem !== null) {
    throw new UnsafeActionError(problem);
  }
  return `%codemode load ${artifactId} ${name}`;
}

const JOB_ID = /^[0-9a-f]{6,64}$/;

/** The silent code that stops a background run (`%codemode cancel`). */
export function cancelCode(jobId: string): string {
  if (!JOB_ID.test(jobId)) {
    throw new UnsafeActionError('this job id is not one the kernel makes; it is not sent to the kernel');
  }
  return `%codemode cancel ${jobId}`;
}

/** Output kept for the status line. */
const MAX_OUTPUT = 4000;

/**
 * Runs `code` silently and reports its progress: "queued" while the kernel is busy with a cell (requests
 * wait their turn), then "running", then the printed output or the error.
 */
export async function runSilently(
  kernel: Kernel.IKernelConnection,
  code: string,
  onUpdate: (report: IActionReport) => void = () => undefined
): Promise<IActionReport> {
  let output = '';
  let error = '';
  let started = false;
  onUpdate(
    kernel.status === 'idle'
      ? { state: 'running', text: 'running…' }
      : { state: 'queued', text: 'queued: the kernel is busy; this runs when the current cell ends' }
  );
  const future = kernel.requestExecute(
    { code, silent: true, store_history: false, allow_stdin: false, stop_on_error: false },
    true
  );
  future.onIOPub = (msg: KernelMessage.IIOPubMessage): void => {
    const content = msg.content as Record<string, unknown>;
    switch (msg.header.msg_type) {
      case 'status':
        if (content.execution_state === 'busy' && !started) {
          started = true;
          onUpdate({ state: 'running', text: 'running…' });
        }
        break;
      case 'stream':
        output += String(content.text ?? '');
        break;
      case 'error':
        error = `${String(content.ename ?? 'Error')}: ${String(content.evalue ?? '')}`;
        break;
      case 'display_data':
      case 'execute_result': {
        const data = content.data as Record<string, unknown> | undefined;
        if (data && typeof data['text/plain'] === 'string') {
          output += `${data['text/plain']}\n`;
        }
        break;
      }
    }
  };
  let report: IActionReport;
  try {
    const reply = await future.done;
    const content = reply.content as unknown as Record<string, unknown>;
    if (content.status === 'ok') {
      report = { state: 'done', text: tail(output) || 'done' };
    } else if (content.status === 'aborted') {
      report = { state: 'error', text: 'not run: the kernel aborted it after an error in a cell before it' };
    } else {
      const replyError = `${String(content.ename ?? 'Error')}: ${String(content.evalue ?? '')}`;
      report = { state: 'error', text: tail([output, error || replyError].filter(Boolean).join('\n')) };
    }
  } catch (reason) {
    report = {
      state: 'error',
      text: `the kernel did not answer: ${reason instanceof Error ? reason.message : String(reason)}`
    };
  }
  onUpdate(report);
  return report;
}

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_OUTPUT ? `…${trimmed.slice(trimmed.length - MAX_OUTPUT)}` : trimmed;
}
