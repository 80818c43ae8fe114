/**
 * The whole trace view: a header, the tool calls, the value, the error, the program's output and the
 * stored artifacts.
 *
 * `update` is called again and again on the same view while a cell runs (the trace grows in place):
 * each section is rebuilt only when its data changed, and the call list keeps its own state, so open
 * calls, the filter and the scroll position survive. Nothing here throws on odd data: a record that
 * cannot be read at all is said so in the view.
 */

import { appendMarked, button, clear, h, marked, markText } from '../common/dom';
import { clip, formatDuration, formatSize, plural } from '../common/format';
import { toJson } from '../common/values';

import { statusBadge } from './badge';
import { CallList } from './calls';
import { errorNode } from './error';
import { argumentsSummary, nodesText } from './format';
import { ITrace, ITraceHooks, parseTrace } from './model';
import { valueNode } from './result';
import { streamBlock } from './text';

const REPLAYED = 'replayed from the record: no server was called';
/** Notes the view lists (the last ones); the record keeps them all. */
const NOTES_SHOWN = 20;

/** A section that is rebuilt only when its signature changes. */
class Section {
  readonly node: HTMLElement;
  private _signature: string | null = null;

  constructor(cls: string) {
    this.node = h('div', `section ${cls}`);
    this.node.hidden = true;
  }

  /** Rebuild with `build` when `signature` differs from the last one (null hides the section). */
  set(signature: string | null, build: (node: HTMLElement) => void): void {
    if (signature === this._signature) {
      return;
    }
    this._signature = signature;
    clear(this.node);
    this.node.hidden = signature === null;
    if (signature !== null) {
      build(this.node);
    }
  }
}

function isEmptyValue(value: Record<string, unknown> | null): boolean {
  return value === null || (value.kind === 'json' && value.data === null);
}

/** The trace view the MIME renderer (and the sidebar's history) shows. */
export class TraceView {
  /** The view's element. */
  readonly node: HTMLElement;
  private _hooks: ITraceHooks;
  private _header: HTMLElement;
  private _notice: HTMLElement;
  private _calls: CallList;
  private _callsSection: HTMLElement;
  private _notes = new Section('notes');
  private _pending = new Section('pending');
  private _value = new Section('value-section');
  private _error = new Section('error-section');
  private _stdout = new Section('stdout');
  private _stderr = new Section('stderr');
  private _artifacts = new Section('artifacts');
  private _disposed = false;

  constructor(hooks: ITraceHooks = {}) {
    this._hooks = hooks;
    this.node = h('div', 'trace');
    this._header = h('div', 'header');
    this._notice = h('div', 'notice');
    this._notice.hidden = true;
    this._calls = new CallList(hooks);
    this._callsSection = h('div', 'section calls-section');
    this._callsSection.appendChild(this._calls.node);
    this._callsSection.hidden = true;
    this.node.append(
      this._header,
      this._notice,
      this._notes.node,
      this._callsSection,
      this._pending.node,
      this._value.node,
      this._error.node,
      this._stdout.node,
      this._stderr.node,
      this._artifacts.node
    );
  }

  /** Whether `dispose` was called. */
  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The call list (for the tests and the plugin). */
  get calls(): CallList {
    return this._calls;
  }

  /**
   * Show the trace in `data` (the MIME value) with the ids and timings in `metadata` (the MIME
   * type's entry of the output's metadata). Either may be anything; this never throws.
   */
  update(data: unknown, metadata?: unknown): void {
    if (this._disposed) {
      return;
    }
    try {
      this._notice.hidden = true;
      this._render(parseTrace(data, metadata));
    } catch (error) {
      clear(this._notice);
      this._notice.textContent = `This trace could not be shown in full: ${String(error)}`;
      this._notice.hidden = false;
    }
  }

  /** Drop the listeners and detach the view. */
  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._calls.dispose();
    this.node.remove();
  }

  private _render(trace: ITrace): void {
    this._renderHeader(trace);
    if (!trace.valid) {
      this._notice.textContent = 'This output holds no codemode trace that can be read.';
      this._notice.hidden = false;
    }
    this._notes.set(trace.notes.length ? toJson([trace.notes, trace.notesDropped]) : null, node => {
      this._renderNotes(node, trace);
    });
    const live = trace.status === 'running' || trace.status === 'pending';
    this._callsSection.hidden = trace.calls.length === 0;
    this._calls.update(trace.calls, live);
    const pending = !live && trace.pendingCalls.length > 0; // while running they are rows above
    this._pending.set(pending ? toJson(trace.pendingCalls) : null, node => {
      node.appendChild(h('div', 'label', 'still running when the program ended'));
      for (const call of trace.pendingCalls) {
        const line = h('div', 'pending-call');
        const tool = clip(call.tool, 200);
        appendMarked(line, `${tool}(${argumentsSummary(call.arguments)}) · ${clip(call.server, 200)}`);
        node.appendChild(line);
      }
    });
    const value = trace.value;
    this._value.set(isEmptyValue(value) ? null : toJson(value), node => {
      node.appendChild(h('div', 'label', 'value'));
      node.appendChild(valueNode(value as Record<string, unknown>));
    });
    const error = trace.error;
    this._error.set(error ? toJson(error) + trace.code : null, node => {
      if (error) {
        node.appendChild(errorNode(error, trace.code));
      }
    });
    this._stdout.set(trace.stdout ? trace.stdout : null, node => {
      node.appendChild(streamBlock('stdout', trace.stdout, 'stdout-text'));
    });
    this._stderr.set(trace.stderr ? trace.stderr : null, node => {
      node.appendChild(streamBlock('stderr', trace.stderr, 'stderr-text'));
    });
    this._artifacts.set(trace.artifacts.length ? toJson(trace.artifacts) : null, node => {
      this._renderArtifacts(node, trace);
    });
  }

  private _renderHeader(trace: ITrace): void {
    const header = this._header;
    clear(header);
    header.appendChild(h('span', 'title', 'codemode'));
    header.appendChild(statusBadge(trace.status));
    const calls = trace.calls.length;
    const parts: string[] = [];
    if (trace.status === 'running') {
      // The kernel sends the clock about once a second while nothing else happens.
      const running = trace.calls.filter(c => c.status === 'running').length;
      const elapsed = formatDuration(trace.durationMs);
      if (elapsed) {
        parts.push(trace.timeoutS !== null ? `${elapsed} of ${trace.timeoutS} s` : `${elapsed} so far`);
      }
      parts.push(
        calls ? `${plural(calls, 'call')}: ${calls - running} done, ${running} running` : 'no call yet'
      );
    } else {
      const duration = formatDuration(trace.durationMs);
      if (duration) {
        parts.push(duration);
      }
      parts.push(plural(calls, 'tool call'));
    }
    header.appendChild(h('span', 'summary', parts.join(' · ')));
    const where = nodesText(trace.nodes);
    if (where) {
      const nodes = marked('span', 'nodes', where);
      nodes.title = markText(clip(trace.nodes.map(n => `node ${n.node}: ${n.outcome}`).join('\n'), 2000));
      header.appendChild(nodes);
    }
    if (trace.replayed) {
      header.appendChild(h('span', 'note replayed', REPLAYED));
    }
    if (trace.outputTruncated) {
      header.appendChild(h('span', 'note truncated', 'output truncated'));
    }
    const title: string[] = [];
    if (trace.executionId) {
      title.push(`execution ${clip(trace.executionId, 100)}`);
    }
    if (trace.timeoutS !== null) {
      title.push(`timeout ${trace.timeoutS} s`);
    }
    if (trace.protections.length) {
      title.push(`sandbox: ${clip(trace.protections.join(', '), 1000)}`);
    }
    header.title = title.join('\n');
  }

  /** The notes, newest last; the last `NOTES_SHOWN` of a long run, with a count of the others. */
  private _renderNotes(node: HTMLElement, trace: ITrace): void {
    node.appendChild(h('div', 'label', 'notes'));
    const shown = trace.notes.slice(-NOTES_SHOWN);
    const earlier = trace.notes.length - shown.length + trace.notesDropped;
    if (earlier > 0) {
      node.appendChild(h('div', 'muted', `… ${plural(earlier, 'earlier note')}`));
    }
    const list = h('ul', 'note-list');
    for (const note of shown) {
      const item = h('li', 'note-item');
      appendMarked(item, clip(note.message, 2000));
      const fields = Object.entries(note.data).map(([key, value]) => `${key}=${toJson(value)}`);
      if (fields.length) {
        const data = h('span', 'muted');
        appendMarked(data, ` · ${clip(fields.join(' '), 2000)}`);
        item.appendChild(data);
      }
      list.appendChild(item);
    }
    node.appendChild(list);
  }

  private _renderArtifacts(node: HTMLElement, trace: ITrace): void {
    node.appendChild(h('div', 'label', 'stored artifacts'));
    const list = h('ul', 'artifact-list');
    const open = this._hooks.openArtifact;
    for (const artifact of trace.artifacts) {
      const item = h('li', 'artifact');
      const name = artifact.name || '(unnamed)';
      const link = button('', 'artifact-link', 'open in the Code Mode sidebar', () =>
        open?.({ id: artifact.id || undefined, name: artifact.name || undefined })
      );
      appendMarked(link, clip(name, 200));
      link.disabled = !open;
      item.appendChild(link);
      const facts = [clip(artifact.type, 200), formatSize(artifact.size)].filter(Boolean).join(', ');
      if (facts) {
        item.appendChild(h('span', 'muted', ` ${facts}`));
      }
      if (artifact.description) {
        item.appendChild(h('span', 'artifact-description', ` ${clip(artifact.description, 2000)}`));
      }
      if (artifact.sha256) {
        item.title = `sha256 ${clip(artifact.sha256, 100)}`;
      }
      list.appendChild(item);
    }
    node.appendChild(list);
  }
}
