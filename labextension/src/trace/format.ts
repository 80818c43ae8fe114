/**
 * An argument list as it would be written in the call, a call's approval as one line, and the nodes a run
 * on a Ray cluster ran on.
 */

import { clip, plural } from '../common/format';
import { asObject, toJson } from '../common/values';

import { IApproval, INodeAttempt, IProgress } from './model';

/** Characters of an approval line (its parts come from the record, which may have been edited). */
export const APPROVAL_CHARS = 300;
/** Characters of a finished call's progress line (the message is the server's, of any length). */
export const PROGRESS_CHARS = 300;
/** Hex digits of a node id shown (the sidebar's Executor section shows the same). */
export const SHORT_NODE = 8;
/** Characters of the nodes line (an edited record may list any number of attempts). */
export const NODES_CHARS = 300;

const SCOPES: Record<string, string> = {
  kernel: 'this tool, for this kernel',
  session: 'this tool, for this session'
};

/**
 * `allowed by the user (once): its server marks it destructive (destructiveHint)`, `denied by the user:
 * ...`, `denied (no decision in time): ...`: the same line as the kernel's HTML and text views
 * (codemode_kernel/views/render.py `approval_text`).
 */
export function approvalText(approval: IApproval): string {
  const decision = approval.decision || 'decided';
  const { by, scope, reason } = approval;
  let who =
    by === 'timeout'
      ? ' (no decision in time)'
      : by === 'nobody'
        ? ' (nobody could be asked)'
        : by
          ? ` by ${by}`
          : '';
  if (decision === 'allowed' && scope) {
    const said = SCOPES[scope] ?? scope;
    // "the user (allowed earlier)" takes the scope inside its own parentheses.
    who = who.endsWith(')') ? `${who.slice(0, -1)}; ${said})` : `${who} (${said})`;
  }
  return clip(`${decision}${who}${reason ? `: ${reason}` : ''}`, APPROVAL_CHARS);
}

const ASKED_CHARS = 300;

/** JSON as Python's json.dumps writes it (`{"a": 1, "b": [2, 3]}`), so the line reads as the kernel's. */
function spacedJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(spacedJson).join(', ')}]`;
  }
  const obj = asObject(value);
  if (obj) {
    return `{${Object.entries(obj)
      .map(([key, item]) => `${JSON.stringify(key)}: ${spacedJson(item)}`)
      .join(', ')}}`;
  }
  return toJson(value);
}

/**
 * One question a server asked during a call and its answer, on one line, as the kernel's text view says it
 * (codemode_kernel/views/asked.py): `"Booking at ...?" -> accept by the user: {...}`, `to open URL (...) ->
 * decline (nobody could be asked)`, `the model (sampling) allowed by the user -> 10 characters from m`.
 * The record may be edited by hand: every field is optional. "" for an entry of an unknown kind.
 */
export function askedText(entry: Record<string, unknown>): string {
  const part = (key: string): Record<string, unknown> => asObject(entry[key]) ?? {};
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  const short = (value: unknown): string => clip(text(value).split(/\s+/).filter(Boolean).join(' '), 120);
  if (entry.kind === 'sampling') {
    if (entry.refused) {
      return clip(`the model (sampling), refused: ${text(entry.refused)}`, ASKED_CHARS);
    }
    const allowed = part('allowed');
    const answer = part('answer');
    const by = text(allowed.by) ? ` allowed by ${text(allowed.by)}` : '';
    const chars = typeof answer.chars === 'number' ? answer.chars : '?';
    const model = text(answer.model) || '?';
    return clip(`the model (sampling)${by} -> ${chars} characters from ${model}`, ASKED_CHARS);
  }
  if (entry.kind !== 'elicitation') {
    return '';
  }
  if (entry.refused) {
    return clip(`a question that was refused: ${text(entry.refused)}`, ASKED_CHARS);
  }
  const question = part('question');
  const answer = part('answer');
  const what =
    question.mode === 'url'
      ? `to open ${text(question.url)} (${short(question.message)})`
      : JSON.stringify(short(question.message));
  const by = text(answer.by);
  const who = by === 'nobody' ? ' (nobody could be asked)' : by ? ` by ${by}` : '';
  const content = asObject(answer.content);
  const shown = content && Object.keys(content).length ? `: ${spacedJson(content)}` : '';
  return clip(`${what} -> ${text(answer.action) || '?'}${who}${shown}`, ASKED_CHARS);
}

/** The colour class of an approval: amber when allowed, red for a denial (or anything else). */
export function approvalCategory(approval: IApproval): 'allowed' | 'denied' {
  return approval.decision === 'allowed' ? 'allowed' : 'denied';
}

/**
 * `city="Oslo", unit="celsius"`: the arguments as written in the call, at most about `limit`
 * characters (long values are cut before they are turned into JSON, so a 1 MB argument costs little).
 */
export function argumentsSummary(args: unknown, limit = 160): string {
  const obj = asObject(args);
  if (!obj) {
    return args === undefined || args === null ? '' : clip(toJson(args), limit);
  }
  const parts: string[] = [];
  let length = 0;
  for (const key of Object.keys(obj)) {
    if (length > limit) {
      break;
    }
    const value = obj[key];
    const text =
      typeof value === 'string'
        ? toJson(value.slice(0, limit)) + (value.length > limit ? '…' : '')
        : clip(toJson(value), limit);
    const part = `${key}=${text}`;
    parts.push(part);
    length += part.length + 2;
  }
  return clip(parts.join(', '), limit);
}

/** `3 of 5`, `3`, or '' when the record holds no usable value. */
export function progressValue(progress: IProgress): string {
  if (progress.progress === null) {
    return '';
  }
  return progress.total === null ? String(progress.progress) : `${progress.progress} of ${progress.total}`;
}

/**
 * A finished call's progress on one line: `5 updates, last: Oslo: day 5 of 5` (the last message, else the
 * last value), as the kernel's views write it (codemode_kernel/views/render.py `progress_text`).
 */
export function progressText(progress: IProgress): string {
  const parts: string[] = [];
  if (progress.count !== null) {
    parts.push(plural(progress.count, 'update'));
  }
  const last = progress.message || progressValue(progress);
  if (last) {
    parts.push(`last: ${last}`);
  }
  return clip(parts.join(', '), PROGRESS_CHARS);
}

/** What a running call's row says beside its bar: the message, else the value, else the count. */
export function progressWords(progress: IProgress): string {
  return (
    progress.message ||
    progressValue(progress) ||
    (progress.count !== null ? plural(progress.count, 'update') : '')
  );
}

/**
 * Where a run on a Ray cluster ran: `on node abcd1234`, or `moved: abcd1234 (lost) → efgh5678` when a lost
 * node moved it; '' off a cluster. The kernel's text and HTML views say the same (views/display.py
 * `nodes_text`).
 */
export function nodesText(nodes: INodeAttempt[]): string {
  const names = nodes.map(attempt => {
    const ended = attempt.outcome.split(':', 1)[0].trim();
    const ending = attempt.outcome === 'finished' ? '' : ` (${clip(ended || 'unknown', 40)})`;
    return `${attempt.node.slice(0, SHORT_NODE)}${ending}`;
  });
  if (!names.length) {
    return '';
  }
  return clip(names.length === 1 ? `on node ${names[0]}` : `moved: ${names.join(' → ')}`, NODES_CHARS);
}
