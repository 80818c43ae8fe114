/**
 * The program's error: its line in context (from the program's source when the record has it), the
 * traceback folded underneath.
 */

import { appendMarked, h } from '../common/dom';
import { clip } from '../common/format';

import { ITraceError } from './model';
import { textBlock } from './text';

/** Lines shown before and after the failing one. */
export const CONTEXT_LINES = 2;
const LINE_CHARS = 2000;

function lineNode(number: number | null, text: string, failing: boolean): HTMLElement {
  const row = h('div', failing ? 'code-line code-line-failing' : 'code-line');
  row.appendChild(h('span', 'line-number', number === null ? '' : String(number)));
  const source = h('span', 'line-text');
  appendMarked(source, clip(text, LINE_CHARS));
  row.appendChild(source);
  return row;
}

/**
 * The lines around `line` (1-based) of `code`, the failing one marked; null when the source does not
 * have that line or it does not match the recorded source line (an edited record).
 */
export function contextNode(
  code: string,
  line: number,
  sourceLine: string,
  around = CONTEXT_LINES
): HTMLElement | null {
  if (!code || !Number.isInteger(line) || line < 1) {
    return null;
  }
  const lines = code.split('\n');
  if (line > lines.length) {
    return null;
  }
  if (sourceLine && lines[line - 1].trim() !== sourceLine.trim()) {
    return null;
  }
  const block = h('div', 'code-context');
  const first = Math.max(1, line - around);
  const last = Math.min(lines.length, line + around);
  for (let n = first; n <= last; n++) {
    block.appendChild(lineNode(n, lines[n - 1], n === line));
  }
  return block;
}

/** The error view: "line N: Type: message", the program lines around it, the traceback folded. */
export function errorNode(error: ITraceError, code: string): HTMLElement {
  const node = h('div', 'error');
  const where = error.line !== null ? `line ${error.line}: ` : '';
  const head = h('div', 'error-head');
  const message = clip(error.message, LINE_CHARS);
  appendMarked(head, `${where}${clip(error.type, 200)}: ${message}`);
  node.appendChild(head);
  if (message !== error.message) {
    const details = h('details', 'whole-message');
    details.appendChild(h('summary', 'summary', 'the whole message'));
    details.appendChild(textBlock(error.message));
    node.appendChild(details);
  }
  const context = error.line !== null ? contextNode(code, error.line, error.sourceLine) : null;
  if (context) {
    node.appendChild(context);
  } else if (error.sourceLine) {
    const block = h('div', 'code-context');
    block.appendChild(lineNode(error.line, error.sourceLine, true));
    node.appendChild(block);
  }
  if (error.traceback) {
    const details = h('details', 'traceback');
    details.appendChild(h('summary', 'summary', 'traceback'));
    details.appendChild(textBlock(error.traceback));
    node.appendChild(details);
  }
  return node;
}
