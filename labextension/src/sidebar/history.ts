/**
 * The History section: `%%codemode` executions and `%%agent` requests of the workspace, newest first.
 * Opening one fetches the bundle its cell displayed and renders it with the notebook's renderers (so the
 * trace renderer shows it), untrusted.
 */
import { MimeModel, type IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { Panel, Widget } from '@lumino/widgets';

import { clipCounted, formatDuration } from '../common/format';

import type { IRun, IRunSummary } from './api';
import { button, el, firstLine, formatTime } from './dom';

/** Statuses with a colour of their own. */
const KNOWN_STATUSES = new Set(['ok', 'error', 'timeout', 'cancelled', 'interrupted', 'running']);

/** What the History section needs from the sidebar. */
export interface IHistoryViewOptions {
  rendermime: IRenderMimeRegistry;
  fetchRun: (run: IRunSummary) => Promise<IRun>;
}

/** The label of a run: "codemode #3", "agent #2". */
export function runLabel(run: IRunSummary): string {
  const kind =
    run.kind === 'agent' ? 'agent' : run.kind === 'codemode' ? 'codemode' : clipCounted(run.kind, 40);
  return run.number === null ? kind || 'run' : `${kind} #${run.number}`;
}

/** Lists runs; the open one is rendered above the list. */
export class HistoryView extends Panel {
  constructor(private readonly _options: IHistoryViewOptions) {
    super();
    this.addClass('jp-codemode-sidebar-section');
    this.addClass('jp-codemode-sidebar-history');
    this.title.label = 'History';
    this._detail = new Panel();
    this._detail.addClass('jp-codemode-sidebar-run-detail');
    this._detail.hide();
    this._listWidget = new Widget({ node: el('ul', { cls: 'list', attrs: { 'aria-label': 'History' } }) });
    this.addWidget(this._detail);
    this.addWidget(this._listWidget);
    this._render();
  }

  /** The runs shown. */
  get runs(): readonly IRunSummary[] {
    return this._runs;
  }

  /** The id of the open run, or ''. */
  get openId(): string {
    return this._openId;
  }

  /** Shows `runs`; the open run stays open. */
  setRuns(runs: IRunSummary[]): void {
    this._runs = runs;
    this._render();
  }

  /** Opens a run: fetches its bundle and renders it above the list. */
  async open(run: IRunSummary): Promise<void> {
    this.closeRun();
    this._openId = run.id;
    const generation = ++this._generation;
    const status = el('p', { cls: 'note', text: 'Loading…' });
    const header = new Widget({
      node: el('div', { cls: 'run-detail-head' }, [
        el('span', { cls: 'run-label', text: runLabel(run) }),
        el('span', { cls: 'run-status', text: clipCounted(run.status, 40) }),
        button('Close', () => this.closeRun(), 'close')
      ])
    });
    const statusWidget = new Widget({ node: status });
    this._detail.addWidget(header);
    this._detail.addWidget(statusWidget);
    this._detail.show();
    this._render();
    let full: IRun;
    try {
      full = await this._options.fetchRun(run);
    } catch (error) {
      if (generation === this._generation) {
        status.textContent = clipCounted(
          `Cannot load this run: ${error instanceof Error ? error.message : String(error)}`,
          2000
        );
      }
      return;
    }
    if (generation !== this._generation || this.isDisposed) {
      return;
    }
    const { rendermime } = this._options;
    const data = full.bundle.data as ReadonlyPartialJSONObject;
    const mimeType = rendermime.preferredMimeType(data, 'any');
    if (mimeType === undefined) {
      status.textContent = 'This run has no output the notebook can show.';
      return;
    }
    statusWidget.dispose();
    const renderer = rendermime.createRenderer(mimeType);
    renderer.addClass('jp-codemode-sidebar-run-output');
    this._detail.addWidget(renderer);
    await renderer.renderModel(
      new MimeModel({
        data,
        metadata: full.bundle.metadata as ReadonlyPartialJSONObject,
        trusted: false
      })
    );
  }

  /** Closes the open run. */
  closeRun(): void {
    this._generation += 1;
    this._openId = '';
    for (const widget of [...this._detail.widgets]) {
      widget.dispose();
    }
    this._detail.hide();
    this._render();
  }

  private _render(): void {
    const list = this._listWidget.node;
    if (!this._runs.length) {
      list.replaceChildren(el('li', { cls: 'empty', text: 'No executions or agent requests yet.' }));
      return;
    }
    list.replaceChildren(...this._runs.map(run => this._row(run)));
  }

  private _row(run: IRunSummary): HTMLElement {
    const status = KNOWN_STATUSES.has(run.status) ? run.status : 'other';
    const facts = [
      formatTime(run.finished),
      formatDuration(run.durationMs, 'compact'),
      run.toolCalls === null ? '' : `${run.toolCalls} tool call${run.toolCalls === 1 ? '' : 's'}`,
      run.replayed ? 'replayed' : '',
      run.model ? clipCounted(run.model, 80) : ''
    ].filter(Boolean);
    const summary = run.kind === 'agent' ? run.request || run.code : run.code || run.request;
    const row = el(
      'li',
      {
        cls: run.id === this._openId ? ['run', 'run-open'] : 'run',
        attrs: { role: 'button', tabindex: '0' }
      },
      [
        el('div', { cls: 'run-head' }, [
          el('span', { cls: ['run-kind', run.kind === 'agent' ? 'run-agent' : 'run-codemode'], text: runLabel(run) }),
          el('span', { cls: ['run-status', `run-status-${status}`], text: clipCounted(run.status, 40) })
        ]),
        summary ? el('div', { cls: 'run-summary', text: firstLine(summary) }) : null,
        el('div', { cls: 'run-meta', text: facts.join(' · ') })
      ]
    );
    const open = (): void => {
      void this.open(run);
    };
    row.addEventListener('click', open);
    row.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        open();
      }
    });
    return row;
  }

  private _runs: IRunSummary[] = [];
  private _openId = '';
  private _generation = 0;
  private _detail: Panel;
  private _listWidget: Widget;
}
