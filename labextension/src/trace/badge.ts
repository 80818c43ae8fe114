/**
 * Status badges: green for ok, amber while running, red for every kind of failure.
 */

import { appendMarked, h, markText } from '../common/dom';
import { clip } from '../common/format';

const RUNNING = new Set(['running', 'pending']);

/** `ok`, `running` or `failed`: the colour class of a call's or a run's status. */
export function statusCategory(status: string): 'ok' | 'running' | 'failed' {
  if (status === 'ok') {
    return 'ok';
  }
  return RUNNING.has(status) ? 'running' : 'failed';
}

const MARKS = { ok: '✓', running: '…', failed: '✗' };

/**
 * A badge with a mark and the status word (the word as text, whatever it is, bidirectional controls
 * shown as markers); its tooltip holds the word too, for a column too narrow for it.
 */
export function statusBadge(status: string): HTMLElement {
  const category = statusCategory(status);
  const word = clip(status, 40);
  const node = h('span', `badge badge-${category}`);
  appendMarked(node, `${MARKS[category]} ${word}`);
  node.setAttribute('data-status', word);
  node.title = markText(word);
  return node;
}
