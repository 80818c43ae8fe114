/**
 * The JupyterLab MIME renderer for codemode traces: a widget around a TraceView.
 *
 * JupyterLab calls `renderModel` again on the same renderer when a display is updated (the live view
 * while a cell runs), so the view is kept and updated in place rather than rebuilt.
 */

import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { ITraceHooks, TRACE_MIME } from './model';
import { TraceView } from './view';

/** The renderer widget. */
export class TraceRenderer extends Widget implements IRenderMime.IRenderer {
  private _mimeType: string;
  private _view: TraceView;

  constructor(options: IRenderMime.IRendererOptions, hooks?: ITraceHooks) {
    super();
    this._mimeType = options.mimeType || TRACE_MIME;
    this.addClass('jp-codemode-renderer');
    // As JupyterLab's own renderers do: which renderer drew an output can be read from the page.
    this.node.dataset.mimeType = this._mimeType;
    this._view = new TraceView(hooks);
    this.node.appendChild(this._view.node);
  }

  /** The view inside (for tests). */
  get view(): TraceView {
    return this._view;
  }

  /** Show the model's trace (its data and its metadata entry for the MIME type). */
  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const metadata = model.metadata ? model.metadata[this._mimeType] : undefined;
    this._view.update(model.data[this._mimeType], metadata);
    return Promise.resolve();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._view.dispose();
    super.dispose();
  }
}

/**
 * The factory the plugin registers: safe (it shows untrusted outputs as text), ranked before the
 * HTML fallback the kernel also sends.
 */
export function traceRendererFactory(hooks?: ITraceHooks): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [TRACE_MIME],
    defaultRank: -1,
    createRenderer: (options: IRenderMime.IRendererOptions) => new TraceRenderer(options, hooks)
  };
}
