/**
 * Status badges: green for ok, amber while running, grey for cancelled (someone stopped the run: not the
 * program's failure), red for every kind of failure.
 */

import { appendMarked, h, markText } from '../common/dom';
import { clip } from '../common/format';

const RUNNING = new Set(['running', 'pending']);

/** `ok`, `running`, `cancelled` or `failed`: the colour class of a call's or a run's status. */
export function statusCategory(status: string): 'ok' | 'running' | 'cancelled' | 'failed' {
  if (status === 'ok' || status === 'cancelled') {
    return status;
  }
  return RUNNING.has(status) ? 'running' : 'failed';
}

const MARKS = { ok: '✓', running: '…', cancelled: '■', failed: '✗' };

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
