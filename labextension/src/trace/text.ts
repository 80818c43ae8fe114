/**
 * Blocks of program or tool text: capped so a 1 MB line does not stall the page, with "show all".
 */

import { button, h } from '../common/dom';
import { plural } from '../common/format';

/** Characters shown before "show all". */
export const TEXT_LIMIT = 10000;

/**
 * A `<pre>` holding `text`, at most `limit` characters of it until "show all" is pressed (which still
 * sets `textContent`: the text is never parsed as markup).
 */
export function textBlock(text: string, cls = '', limit = TEXT_LIMIT): HTMLElement {
  const wrapper = h('div', 'text');
  const pre = h('pre', `pre ${cls}`);
  wrapper.appendChild(pre);
  if (text.length <= limit) {
    pre.textContent = text;
    return wrapper;
  }
  pre.textContent = text.slice(0, limit);
  const more = h('div', 'more');
  more.appendChild(
    h('span', 'muted', `… ${(text.length - limit).toLocaleString('en')} more characters `)
  );
  more.appendChild(
    button('show all', 'show-all', 'show the whole text', () => {
      pre.textContent = text;
      more.remove();
    })
  );
  wrapper.appendChild(more);
  return wrapper;
}

/** Number of lines in `text` (a final newline does not start another). */
export function countLines(text: string): number {
  let lines = text ? 1 : 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (i < text.length - 1) {
      lines++;
    }
  }
  return lines;
}

/**
 * A titled, folded block for stdout or stderr: the cell printed the same text as it ran, so the record
 * only offers it (the sidebar's history, a saved notebook's reader); its title says how long it is.
 */
export function streamBlock(title: string, text: string, cls: string): HTMLDetailsElement {
  const details = h('details', `stream ${cls}`);
  const lines = countLines(text);
  const summary = h('summary', 'summary', `${title} (${plural(lines, 'line')})`);
  details.appendChild(summary);
  details.appendChild(textBlock(text, cls));
  details.open = false;
  return details;
}
