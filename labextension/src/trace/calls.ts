/**
 * The tool calls: a filter bar, a virtualized list of fixed-height rows, and a detail pane.
 *
 * Only the rows in view (plus a few either side) exist in the DOM, absolutely placed in a spacer as
 * tall as the whole list, so a record of 10,000 calls costs about twenty rows. Opening a row shows the
 * call's arguments and result in the detail pane under the list instead of growing the row: every row
 * keeps one height, so the arithmetic of the list stays trivial. Rows, open calls, the filter and the
 * scroll position live in this object and survive `update`, which the live view calls as calls start
 * and end; a row or a detail is rebuilt only when what it shows has changed.
 *
 * Each row is a grid of its own, so columns sized to their content would differ from row to row: the
 * widths of the number, server and status columns are worked out here from all the calls (in `ch`, the
 * width of a digit) and handed to the stylesheet as custom properties, so every row lines up and the
 * tool's name and arguments get the rest. The stylesheet drops columns when the trace is narrow.
 *
 * A call that needed approval has a bar at its row's left edge (amber allowed, red denied), the decision
 * as the row's tooltip, and the decision on a line of its own in its detail.
 *
 * A running call whose server reports progress has a bar beside its status (filled to progress/total, or
 * animated when the server gives no total) and the server's last message after its arguments, which give
 * it room first. A finished call keeps a line in its detail: `progress: 5 updates, last: ...`.
 */

import { appendMarked, button, clear, h, markText } from '../common/dom';
import { clip, formatDuration, plural } from '../common/format';
import { jsonView } from '../common/json';
import { toJson } from '../common/values';

import { statusBadge } from './badge';
import {
  approvalCategory,
  approvalText,
  argumentsSummary,
  askedText,
  progressText,
  progressValue,
  progressWords
} from './format';
import { ICall, ITraceHooks } from './model';
import { resultNode } from './result';
import { TEXT_LIMIT, textBlock } from './text';

/** The height of a row, in pixels (the CSS gives rows the same). */
export const ROW_HEIGHT = 26;
/** Rows visible at once before the list scrolls. */
export const MAX_VISIBLE_ROWS = 12;
/** Rows built beyond each edge of the view. */
export const OVERSCAN = 8;
const NAME_CHARS = 200;
/** Characters of the progress message on a running call's row (its tooltip has more). */
const ROW_MESSAGE_CHARS = 120;
const DETAIL_NAME_CHARS = 1000;
/** Characters of a status shown in the status filter's options. */
export const STATUS_OPTION_CHARS = 24;
// Caps of the content-sized columns, in characters (a longer server or status ellipsizes).
const SERVER_COLUMN_CHARS = 16;
const STATUS_COLUMN_CHARS = 24;

/**
 * The widths of the content-sized columns for `calls`, as CSS lengths: the call number (`#` and its
 * digits), the server name and the status badge (its mark, the word, and a progress bar when a
 * running call reports progress). Bold status words run a little wider than a digit, hence the slack.
 */
export function columnWidths(calls: readonly ICall[]): { seq: string; server: string; status: string } {
  let seq = 1;
  let server = 0;
  let status = 2;
  let progress = false;
  for (const call of calls) {
    if (call.seq !== null) {
      seq = Math.max(seq, String(call.seq).length);
    }
    server = Math.max(server, call.server.length);
    status = Math.max(status, call.status.length);
    progress = progress || (call.progress !== null && call.status === 'running');
  }
  const statusChars = Math.min(status, STATUS_COLUMN_CHARS) * 1.1 + 3 + (progress ? 5 : 0);
  return {
    seq: `${seq + 1.5}ch`,
    server: `${Math.min(server, SERVER_COLUMN_CHARS) + 1}ch`,
    status: `${Math.ceil(statusChars)}ch`
  };
}

interface IBuilt {
  node: HTMLElement;
  signature: string;
}

function progressFraction(call: ICall): number | null {
  const p = call.progress;
  if (!p || p.progress === null || p.total === null || p.total <= 0) {
    return null;
  }
  return Math.max(0, Math.min(1, p.progress / p.total));
}

/** `3 of 5: Oslo: day 3 of 5`: the bar's tooltip and the running detail's words. */
function progressLine(call: ICall, limit: number): string {
  const p = call.progress;
  if (!p) {
    return '';
  }
  const value = progressValue(p);
  const message = p.message ? clip(p.message, limit) : '';
  return markText(value && message ? `${value}: ${message}` : value || message || progressWords(p));
}

function progressBar(call: ICall): HTMLElement {
  const bar = h('span', 'progress');
  const fill = h('span', 'progress-fill');
  const fraction = progressFraction(call);
  bar.setAttribute('role', 'progressbar');
  if (fraction === null) {
    bar.classList.add('jp-codemode-progress-indeterminate');
  } else {
    fill.style.width = `${(fraction * 100).toFixed(1)}%`;
    bar.setAttribute('aria-valuenow', String(Math.round(fraction * 100)));
  }
  bar.appendChild(fill);
  bar.title = progressLine(call, 200);
  bar.setAttribute('aria-label', bar.title);
  return bar;
}

/** Whether the row shows a progress bar: the call runs and its server reported progress. */
function showsProgress(call: ICall): boolean {
  return call.progress !== null && call.status === 'running';
}

function progressKey(call: ICall): string {
  const p = call.progress;
  return p ? `${p.count}/${p.progress}/${p.total}/${p.message}` : '';
}

/** Whether `call` passes the tool text (matched against `server.tool`) and the status choice. */
export function matches(call: ICall, tool: string, status: string): boolean {
  if (status && call.status !== status) {
    return false;
  }
  if (!tool) {
    return true;
  }
  return `${call.server}.${call.tool}`.toLowerCase().includes(tool.toLowerCase());
}

/** The list of calls with its filter and detail pane. */
export class CallList {
  /** The whole section. */
  readonly node: HTMLElement;
  private _hooks: ITraceHooks;
  private _calls: ICall[] = [];
  private _shown: ICall[] = [];
  private _open = new Set<string>();
  private _rows = new Map<string, IBuilt>();
  private _details = new Map<string, IBuilt>();
  private _toolFilter = '';
  private _statusFilter = '';
  private _statusKey = '';
  private _columnsKey = '';
  private _count: HTMLElement;
  private _toolInput: HTMLInputElement;
  private _statusSelect: HTMLSelectElement;
  private _viewport: HTMLElement;
  private _spacer: HTMLElement;
  private _empty: HTMLElement;
  private _detail: HTMLElement;
  private _onScroll = (): void => this._renderRows();

  constructor(hooks: ITraceHooks = {}) {
    this._hooks = hooks;
    this.node = h('div', 'calls');
    const bar = h('div', 'calls-bar');
    this._count = h('span', 'calls-count');
    this._toolInput = h('input', 'calls-filter-tool');
    this._toolInput.type = 'search';
    this._toolInput.placeholder = 'filter by tool';
    this._toolInput.setAttribute('aria-label', 'filter the calls by tool or server');
    this._toolInput.addEventListener('input', () => {
      this._toolFilter = this._toolInput.value.trim();
      this._refresh();
    });
    this._statusSelect = h('select', 'calls-filter-status');
    this._statusSelect.setAttribute('aria-label', 'filter the calls by status');
    this._statusSelect.addEventListener('change', () => {
      this._statusFilter = this._statusSelect.value;
      this._refresh();
    });
    bar.append(this._count, this._toolInput, this._statusSelect);
    this._viewport = h('div', 'calls-viewport');
    this._viewport.setAttribute('role', 'list');
    this._spacer = h('div', 'calls-spacer');
    this._viewport.appendChild(this._spacer);
    this._viewport.addEventListener('scroll', this._onScroll);
    this._empty = h('div', 'muted calls-empty', 'no call matches the filter');
    this._detail = h('div', 'calls-detail');
    this.node.append(bar, this._viewport, this._empty, this._detail);
  }

  /** The calls now shown (after the filter), in order. */
  get shown(): readonly ICall[] {
    return this._shown;
  }

  /** Keys of the open calls. */
  get openKeys(): ReadonlySet<string> {
    return this._open;
  }

  /**
   * Show `calls` (in program order), keeping what is open, the filter and the scroll position;
   * `live`: the run is going on, and a list scrolled to its end follows new calls.
   */
  update(calls: ICall[], live = false): void {
    const before = this._shown.length;
    const follow = live && before > 0 && this._atBottom();
    this._calls = calls;
    this._updateColumns();
    this._updateStatusOptions();
    this._refresh();
    if (follow && this._shown.length > before && this._shown.length > MAX_VISIBLE_ROWS) {
      // Following the end of a growing list, as a log view does.
      this._viewport.scrollTop = this._shown.length * ROW_HEIGHT;
      this._renderRows();
    }
  }

  /** Open or close the call with `key`. */
  toggle(key: string): void {
    if (this._open.has(key)) {
      this._open.delete(key);
    } else {
      this._open.add(key);
    }
    this._renderRows();
    this._renderDetails();
  }

  /** Remove the listeners. */
  dispose(): void {
    this._viewport.removeEventListener('scroll', this._onScroll);
  }

  private _atBottom(): boolean {
    const total = this._shown.length * ROW_HEIGHT;
    return this._viewport.scrollTop + this._viewportHeight() >= total - ROW_HEIGHT;
  }

  private _viewportHeight(): number {
    return (
      this._viewport.clientHeight || Math.min(this._shown.length, MAX_VISIBLE_ROWS) * ROW_HEIGHT
    );
  }

  private _refresh(): void {
    const tool = this._toolFilter;
    const status = this._statusFilter;
    this._shown = tool || status ? this._calls.filter(c => matches(c, tool, status)) : this._calls;
    const total = this._calls.length;
    const shown = this._shown.length;
    this._count.textContent =
      shown === total
        ? plural(total, 'tool call')
        : `${shown.toLocaleString('en')} of ${plural(total, 'tool call')}`;
    this._spacer.style.height = `${shown * ROW_HEIGHT}px`;
    this._viewport.style.height = `${Math.min(shown, MAX_VISIBLE_ROWS) * ROW_HEIGHT}px`;
    this._empty.hidden = shown > 0 || total === 0;
    this._renderRows();
    this._renderDetails();
  }

  private _updateColumns(): void {
    const widths = columnWidths(this._calls);
    const key = `${widths.seq} ${widths.server} ${widths.status}`;
    if (key === this._columnsKey) {
      return;
    }
    this._columnsKey = key;
    const style = this.node.style;
    style.setProperty('--jp-codemode-seq-width', widths.seq);
    style.setProperty('--jp-codemode-server-width', widths.server);
    style.setProperty('--jp-codemode-status-width', widths.status);
  }

  private _updateStatusOptions(): void {
    const counts = new Map<string, number>();
    for (const call of this._calls) {
      counts.set(call.status, (counts.get(call.status) ?? 0) + 1);
    }
    if (this._statusFilter && !counts.has(this._statusFilter)) {
      counts.set(this._statusFilter, 0);
    }
    const entries = [...counts.entries()].sort((a, b) => a[0].localeCompare(b[0]));
    const key = toJson(entries);
    if (key === this._statusKey) {
      return;
    }
    this._statusKey = key;
    clear(this._statusSelect);
    const all = h('option', '', 'all statuses');
    all.value = '';
    this._statusSelect.appendChild(all);
    for (const [status, count] of entries) {
      // An option holds plain text only: the status cut short, its controls as markers (the whole
      // word is the option's tooltip), so a long status cannot widen the filter bar.
      const option = h('option', '', `${markText(clip(status, STATUS_OPTION_CHARS))} (${count})`);
      option.value = status;
      if (status.length > STATUS_OPTION_CHARS) {
        option.title = markText(clip(status, NAME_CHARS));
      }
      this._statusSelect.appendChild(option);
    }
    this._statusSelect.value = this._statusFilter;
  }

  private _renderRows(): void {
    const shown = this._shown;
    const top = this._viewport.scrollTop;
    const height = this._viewportHeight();
    const start = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const end = Math.min(shown.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const wanted = new Set<string>();
    for (let i = start; i < end; i++) {
      const call = shown[i];
      wanted.add(call.key);
      const signature = this._rowSignature(call, i);
      const built = this._rows.get(call.key);
      if (built && built.signature === signature) {
        continue;
      }
      const node = this._buildRow(call, i);
      if (built) {
        this._spacer.replaceChild(node, built.node);
      } else {
        this._spacer.appendChild(node);
      }
      this._rows.set(call.key, { node, signature });
    }
    for (const [key, built] of this._rows) {
      if (!wanted.has(key)) {
        built.node.remove();
        this._rows.delete(key);
      }
    }
  }

  private _rowSignature(call: ICall, position: number): string {
    return [
      position,
      this._open.has(call.key) ? 1 : 0,
      call.status,
      call.durationMs,
      progressKey(call),
      call.seq,
      call.index,
      call.approval ? approvalText(call.approval) : ''
    ].join('|');
  }

  private _buildRow(call: ICall, position: number): HTMLElement {
    const open = this._open.has(call.key);
    const approval = call.approval;
    const row = h(
      'div',
      `call-row${open ? ' call-row-open' : ''}${approval ? ` call-row-${approvalCategory(approval)}` : ''}`
    );
    if (approval) {
      row.title = markText(approvalText(approval));
    }
    row.setAttribute('role', 'listitem');
    row.setAttribute('aria-expanded', String(open));
    row.setAttribute('data-key', call.key);
    row.tabIndex = 0;
    row.style.top = `${position * ROW_HEIGHT}px`;
    row.style.height = `${ROW_HEIGHT}px`;
    row.appendChild(h('span', 'call-toggle', open ? '▾' : '▸'));
    row.appendChild(h('span', 'call-seq', call.seq === null ? '' : `#${call.seq}`));
    const name = h('span', 'call-name');
    appendMarked(name, clip(call.tool, NAME_CHARS) || '(no tool)');
    const args = h('span', 'call-args');
    appendMarked(args, `(${argumentsSummary(call.arguments)})`);
    name.appendChild(args);
    if (showsProgress(call) && call.progress) {
      // The server's last word, after the arguments (which shrink first when the row is short).
      name.classList.add('jp-codemode-call-name-progress');
      const words = h('span', 'call-progress-message');
      appendMarked(words, clip(progressWords(call.progress), ROW_MESSAGE_CHARS));
      name.appendChild(words);
    }
    row.appendChild(name);
    const server = h('span', 'call-server');
    appendMarked(server, clip(call.server, NAME_CHARS));
    row.appendChild(server);
    const status = h('span', 'call-status');
    status.appendChild(statusBadge(call.status));
    if (showsProgress(call)) {
      status.appendChild(progressBar(call));
    }
    row.appendChild(status);
    row.appendChild(h('span', 'call-duration', formatDuration(call.durationMs)));
    row.addEventListener('click', () => this.toggle(call.key));
    row.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        this.toggle(call.key);
      }
    });
    return row;
  }

  private _renderDetails(): void {
    const open = this._shown.filter(c => this._open.has(c.key));
    const wanted = new Set(open.map(c => c.key));
    for (const [key, built] of this._details) {
      if (!wanted.has(key)) {
        built.node.remove();
        this._details.delete(key);
      }
    }
    let previous: HTMLElement | null = null;
    for (const call of open) {
      const signature = this._detailSignature(call);
      let built = this._details.get(call.key);
      if (!built || built.signature !== signature) {
        const node = this._buildDetail(call);
        if (built) {
          built.node.replaceWith(node);
        }
        built = { node, signature };
        this._details.set(call.key, built);
      }
      // Keep the pane in program order.
      const expected: ChildNode | null = previous ? previous.nextSibling : this._detail.firstChild;
      if (expected !== built.node) {
        this._detail.insertBefore(built.node, expected);
      }
      previous = built.node;
    }
  }

  private _detailSignature(call: ICall): string {
    return [
      call.status,
      call.durationMs,
      progressKey(call),
      call.result === undefined ? 0 : 1,
      call.error,
      call.warnings.length,
      call.artifactId,
      call.approval ? approvalText(call.approval) : '',
      call.asked.length
    ].join('|');
  }

  private _buildDetail(call: ICall): HTMLElement {
    const node = h('div', 'call-detail');
    node.setAttribute('data-key', call.key);
    const head = h('div', 'call-detail-head');
    if (call.seq !== null) {
      head.appendChild(h('span', 'call-seq', `#${call.seq}`));
    }
    const name = h('span', 'call-detail-name');
    appendMarked(name, clip(call.tool, DETAIL_NAME_CHARS) || '(no tool)');
    head.appendChild(name);
    const server = h('span', 'call-server');
    appendMarked(server, clip(call.server, DETAIL_NAME_CHARS));
    head.appendChild(server);
    head.appendChild(statusBadge(call.status));
    head.appendChild(h('span', 'call-duration', formatDuration(call.durationMs)));
    const note = h('span', 'muted copy-note');
    head.appendChild(
      button('copy arguments', 'copy', 'copy the arguments as JSON', () => {
        void copyText(toJson(call.arguments ?? {}, 2), note);
      })
    );
    head.appendChild(note);
    head.appendChild(button('close', 'close', 'close this call', () => this.toggle(call.key)));
    node.appendChild(head);
    if (call.approval) {
      const line = h('div', `approval approval-${approvalCategory(call.approval)}`);
      appendMarked(line, approvalText(call.approval));
      node.appendChild(line);
    }
    // What the server asked during the call (a question to the person, a model completion) and the answer.
    for (const entry of call.asked.slice(0, 10)) {
      const text = askedText(entry);
      if (text) {
        const line = h('div', 'muted call-asked');
        appendMarked(line, `asked: ${text}`);
        node.appendChild(line);
      }
    }

    node.appendChild(h('div', 'label', 'arguments'));
    node.appendChild(jsonView(call.arguments ?? {}));
    if (showsProgress(call)) {
      const progress = h('div', 'call-progress');
      progress.appendChild(progressBar(call));
      progress.appendChild(h('span', 'muted', ` ${progressLine(call, 1000)}`));
      node.appendChild(progress);
    } else if (call.progress) {
      // Finished: how many updates its server sent, and the last one, on one quiet line.
      const summary = progressText(call.progress);
      if (summary) {
        node.appendChild(h('div', 'muted call-progress-summary', `progress: ${markText(summary)}`));
      }
    }
    if (call.error) {
      node.appendChild(textBlock(call.error, 'call-error'));
    }
    if (call.artifactId) {
      const stored = h('div', 'stored');
      stored.appendChild(
        h('span', 'muted', 'the whole result is stored as an artifact; a preview follows ')
      );
      const openArtifact = this._hooks.openArtifact;
      const link = button('', 'artifact-link', 'open the artifact', () =>
        openArtifact?.({ id: call.artifactId })
      );
      appendMarked(link, clip(call.artifactId, NAME_CHARS));
      link.disabled = !openArtifact;
      stored.appendChild(link);
      node.appendChild(stored);
    }
    if (call.result !== undefined) {
      node.appendChild(h('div', 'label', 'result'));
      node.appendChild(resultNode(call.result));
    } else if (call.status === 'running') {
      node.appendChild(h('div', 'muted', 'no result yet'));
    }
    for (const warning of call.warnings) {
      node.appendChild(h('div', 'warning', `warning: ${clip(warning, TEXT_LIMIT)}`));
    }
    return node;
  }
}

/** Put `text` on the clipboard and say how it went in `note` (some pages have no clipboard). */
export async function copyText(text: string, note: HTMLElement): Promise<boolean> {
  const clipboard = typeof navigator === 'undefined' ? undefined : navigator.clipboard;
  if (!clipboard || typeof clipboard.writeText !== 'function') {
    note.textContent = 'no clipboard here: select the arguments to copy them';
    return false;
  }
  try {
    await clipboard.writeText(text);
    note.textContent = 'copied';
    return true;
  } catch {
    note.textContent = 'could not copy (the browser refused)';
    return false;
  }
}
