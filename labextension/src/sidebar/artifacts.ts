/**
 * The Artifacts section: the workspace's artifacts, newest first; one opens in place to its preview, a
 * "Load into kernel" form and a Download button.
 */
import { Widget } from '@lumino/widgets';

import { clipCounted, formatSize } from '../common/format';

import { identifierProblem } from './actions';
import type { IArtifactData, IArtifactInfo } from './api';
import { button, el, formatTime } from './dom';
import { type IPreview, previewArtifact } from './preview';

/** Artifacts larger than this are not fetched for a preview (download them instead). */
export const MAX_PREVIEW_BYTES = 10_000_000;

/** What the Artifacts section needs from the sidebar. */
export interface IArtifactsViewOptions {
  fetchData: (artifact: IArtifactInfo) => Promise<IArtifactData>;
  onLoad: (artifact: IArtifactInfo, name: string) => void;
  onDownload: (artifact: IArtifactInfo) => void;
}

/** A Python name to offer for loading an artifact: its own name where that is one, else made from it. */
export function suggestName(name: string): string {
  if (identifierProblem(name) === null) {
    return name;
  }
  let made = name.replace(/[^\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]+/gu, '_').replace(/^_+|_+$/g, '');
  if (!made || /^\p{Nd}/u.test(made)) {
    made = `artifact_${made}`.replace(/_+$/, '');
  }
  return identifierProblem(made) === null ? made.slice(0, 60) : 'artifact';
}

/** Lists artifacts and opens one at a time. */
export class ArtifactsView extends Widget {
  constructor(private readonly _options: IArtifactsViewOptions) {
    super();
    this.addClass('jp-codemode-sidebar-section');
    this.addClass('jp-codemode-sidebar-artifacts');
    this.title.label = 'Artifacts';
    this._list = el('ul', { cls: 'list', attrs: { 'aria-label': 'Artifacts' } });
    this.node.appendChild(this._list);
    this._render();
  }

  /** The artifacts shown. */
  get artifacts(): readonly IArtifactInfo[] {
    return this._artifacts;
  }

  /** The id of the open artifact, or ''. */
  get openId(): string {
    return this._openId;
  }

  /** Shows `artifacts`; the open one stays open while it is listed. */
  setArtifacts(artifacts: IArtifactInfo[]): void {
    this._artifacts = artifacts;
    if (this._openId && !artifacts.some(a => a.id === this._openId)) {
      this._close();
    }
    this._render();
  }

  /**
   * Opens the artifact with `ref.id`, else the newest named `ref.name`; false when none is listed.
   */
  select(ref: { id?: string; name?: string }): boolean {
    const found =
      (ref.id ? this._artifacts.find(a => a.id === ref.id) : undefined) ??
      (ref.name ? this._artifacts.find(a => a.name === ref.name) : undefined);
    if (!found) {
      return false;
    }
    this._openArtifact(found);
    this._render();
    this._rows.get(found.id)?.scrollIntoView?.({ block: 'start' });
    return true;
  }

  /** Closes the open artifact. */
  closeArtifact(): void {
    this._close();
    this._render();
  }

  dispose(): void {
    this._close();
    super.dispose();
  }

  private _render(): void {
    this._rows.clear();
    if (!this._artifacts.length) {
      this._list.replaceChildren(el('li', { cls: 'empty', text: 'No artifacts in this workspace yet.' }));
      return;
    }
    this._list.replaceChildren(...this._artifacts.map(artifact => this._row(artifact)));
  }

  private _row(artifact: IArtifactInfo): HTMLElement {
    const open = artifact.id === this._openId;
    const head = el(
      'div',
      {
        cls: 'artifact-head',
        attrs: { role: 'button', tabindex: '0', 'aria-expanded': String(open) }
      },
      [
        el('span', { cls: 'artifact-name', text: clipCounted(artifact.name || artifact.id, 200) }),
        el('span', { cls: 'artifact-type', text: clipCounted(artifact.type, 100) }),
        el('span', { cls: 'artifact-size', text: formatSize(artifact.size, 'compact') }),
        el('span', { cls: 'artifact-time', text: formatTime(artifact.created) })
      ]
    );
    const toggle = (): void => {
      if (artifact.id === this._openId) {
        this._close();
      } else {
        this._openArtifact(artifact);
      }
      this._render();
    };
    head.addEventListener('click', toggle);
    head.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        toggle();
      }
    });
    const row = el('li', { cls: open ? ['artifact', 'artifact-open'] : 'artifact' }, [
      head,
      open ? this._detail : null
    ]);
    this._rows.set(artifact.id, row);
    return row;
  }

  private _openArtifact(artifact: IArtifactInfo): void {
    if (artifact.id === this._openId && this._detail) {
      return;
    }
    this._close();
    this._openId = artifact.id;
    const generation = ++this._generation;
    const previewHost = el('div', { cls: 'preview' }, [el('p', { cls: 'note', text: 'Loading…' })]);
    const name = el('input', {
      cls: 'load-name',
      attrs: { type: 'text', 'aria-label': 'Python name to load the artifact as', spellcheck: 'false' }
    });
    name.value = suggestName(artifact.name);
    const problem = el('div', { cls: 'load-problem', attrs: { role: 'alert' } });
    const loadButton = button('Load into kernel', () => load(), 'load');
    const load = (): void => {
      const message = identifierProblem(name.value);
      problem.textContent = message ?? '';
      if (message === null) {
        this._options.onLoad(artifact, name.value);
      }
    };
    name.addEventListener('input', () => {
      const message = identifierProblem(name.value);
      problem.textContent = message ?? '';
      loadButton.disabled = message !== null;
    });
    name.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        load();
      }
    });
    this._detail = el('div', { cls: 'artifact-detail' }, [
      artifact.description
        ? el('p', { cls: 'artifact-description', text: clipCounted(artifact.description) })
        : null,
      el('div', {
        cls: 'artifact-meta',
        text: `id ${artifact.id}` + (artifact.executionId ? ` · execution ${artifact.executionId}` : '')
      }),
      previewHost,
      el('div', { cls: 'load-form' }, [
        name,
        loadButton,
        button('Download', () => this._options.onDownload(artifact), 'download')
      ]),
      problem
    ]);
    if (artifact.size > MAX_PREVIEW_BYTES) {
      previewHost.replaceChildren(
        el('p', {
          cls: 'note',
          text: `${formatSize(artifact.size, 'compact')}: too large to preview; download it.`
        })
      );
      return;
    }
    this._options.fetchData(artifact).then(
      data => {
        if (generation !== this._generation || this.isDisposed) {
          return;
        }
        // The stored type decides, not the served one (the server sends unsafe types as octet-stream).
        this._preview = previewArtifact(data.bytes, artifact.type || data.contentType);
        previewHost.replaceChildren(this._preview.node);
      },
      (error: unknown) => {
        if (generation === this._generation) {
          const text = `Cannot load the preview: ${error instanceof Error ? error.message : String(error)}`;
          previewHost.replaceChildren(el('p', { cls: 'error', text: clipCounted(text, 2000) }));
        }
      }
    );
  }

  private _close(): void {
    this._generation += 1;
    this._preview?.dispose();
    this._preview = null;
    this._detail = null;
    this._openId = '';
  }

  private _artifacts: IArtifactInfo[] = [];
  private _openId = '';
  private _detail: HTMLElement | null = null;
  private _preview: IPreview | null = null;
  private _generation = 0;
  private _rows = new Map<string, HTMLElement>();
  private _list: HTMLElement;
}
