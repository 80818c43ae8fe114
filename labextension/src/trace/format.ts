/**
 * Short text forms: durations, sizes, an argument list as it would be written in the call.
 */

import { asObject, toJson } from './model';

/** `13 ms`, `2.03 s`, `4 min 5 s`. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) {
    return '';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  if (ms < 60000) {
    return `${(ms / 1000).toFixed(2)} s`;
  }
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** `333 bytes`, `1.2 kB`, `3.4 MB`. */
export function formatSize(bytes: number | null): string {
  if (bytes === null || !Number.isFinite(bytes) || bytes < 0) {
    return '';
  }
  if (bytes < 1000) {
    return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  }
  if (bytes < 1e6) {
    return `${(bytes / 1e3).toFixed(1)} kB`;
  }
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** `n thing` or `n things`. */
export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;
}

/** `text` cut to `limit` characters with an ellipsis. */
export function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
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
