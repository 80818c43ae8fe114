/**
 * Short text forms shared by the trace and the sidebar: durations, sizes, counts, cut text.
 *
 * A trace writes durations and sizes in `full` (`2.03 s`, `333 bytes`, `111.6 kB`); the sidebar's narrow
 * lists write them `compact` (`2.0 s`, `333 B`, `112 kB`).
 */

/** Characters of a long text shown by `clipCounted` unless told otherwise. */
export const MAX_TEXT = 20000;

/** How much room a duration or a size has. */
export type Width = 'full' | 'compact';

/** `13 ms`, `2.03 s` (compact `2.0 s`), `4 min 5 s`; '' for no duration. */
export function formatDuration(ms: number | null, width: Width = 'full'): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) {
    return '';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  if (ms < 60000) {
    return `${(ms / 1000).toFixed(width === 'compact' ? 1 : 2)} s`;
  }
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

const UNITS = ['kB', 'MB', 'GB', 'TB'];

/** `333 bytes` (compact `333 B`), `1.2 kB`, `111.6 kB` (compact `112 kB`), `3.4 MB`; '' for no size. */
export function formatSize(bytes: number | null, width: Width = 'full'): string {
  if (bytes === null || !Number.isFinite(bytes) || bytes < 0) {
    return '';
  }
  if (bytes < 1000) {
    return width === 'compact' ? `${bytes} B` : `${bytes} byte${bytes === 1 ? '' : 's'}`;
  }
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const digits = width === 'compact' && value >= 10 ? 0 : 1;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** `n thing` or `n things`. */
export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;
}

/** `text` cut to `limit` characters with an ellipsis: names, labels, cells. */
export function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
}

/** `text` cut to `limit` characters with a note of how many were left out: messages, docs, code. */
export function clipCounted(text: string, limit: number = MAX_TEXT): string {
  if (text.length <= limit) {
    return text;
  }
  return `${text.slice(0, limit)}… (${(text.length - limit).toLocaleString('en')} more characters)`;
}
