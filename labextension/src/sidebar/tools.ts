/**
 * The Tools section: a search box and the kernel's tool functions, each opening to its signature,
 * docstring and schemas, with "Insert a call".
 */
import { Widget } from '@lumino/widgets';

import { clipCounted } from '../common/format';

import type { IToolInfo } from './api';
import { button, el, firstLine, jsonTree } from './dom';

/** Rows rendered at once; a search narrows the rest. */
const MAX_ROWS = 400;

/** What the Tools section needs from the sidebar. */
export interface IToolsViewOptions {
  onInsert: (call: string, tool: IToolInfo) => void;
}

/** Whether `tool` matches every word of `query` (name, tool name, server, signature or docstring). */
export function toolMatches(tool: IToolInfo, query: string): boolean {
  const haystack = [tool.name, tool.tool, tool.server, tool.signature, tool.doc].join('\n').toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every(word => haystack.includes(word));
}

/** Lists and filters the tools of the kernel's state; open rows stay open across updates. */
export class ToolsView extends Widget {
  constructor(private readonly _options: IToolsViewOptions) {
    super();
    this.addClass('jp-codemode-sidebar-section');
    this.addClass('jp-codemode-sidebar-tools');
    this.title.label = 'Tools';
    this._search = el('input', {
      cls: 'search',
      attrs: { type: 'search', placeholder: 'Search tools', 'aria-label': 'Search tools' }
    });
    this._search.addEventListener('input', () => this._render());
    this._count = el('div', { cls: 'count' });
    this._list = el('ul', { cls: 'list', attrs: { 'aria-label': 'Tools' } });
    this.node.append(this._search, this._count, this._list);
    this._render();
  }

  /** The search text. */
  get query(): string {
    return this._search.value;
  }

  set query(value: string) {
    this._search.value = value;
    this._render();
  }

  /** Shows `tools` (the search and the open rows are kept). */
  setTools(tools: IToolInfo[]): void {
    this._tools = tools;
    this._render();
  }

  private _render(): void {
    const matching = this._tools.filter(tool => toolMatches(tool, this._search.value));
    const rows = matching.slice(0, MAX_ROWS).map(tool => this._row(tool));
    this._list.replaceChildren(...rows);
    let count = `${matching.length} of ${this._tools.length} tools`;
    if (matching.length > MAX_ROWS) {
      count += ` (the first ${MAX_ROWS} shown: narrow the search)`;
    }
    this._count.textContent = this._tools.length ? count : 'No tools.';
  }

  private _row(tool: IToolInfo): HTMLElement {
    const key = `${tool.server}\u0000${tool.name}`;
    const details = el('details', { cls: 'tool' }, [
      el('summary', { cls: 'tool-summary' }, [
        el('span', { cls: 'tool-name', text: clipCounted(tool.name, 200) }),
        el('span', { cls: 'tool-server', text: clipCounted(tool.server, 200) }),
        tool.doc ? el('span', { cls: 'tool-doc-line', text: firstLine(tool.doc) }) : null
      ])
    ]);
    let built = false;
    const build = (): void => {
      if (!built) {
        built = true;
        details.appendChild(this._body(tool));
      }
    };
    details.addEventListener('toggle', () => {
      if (details.open) {
        this._open.add(key);
        build();
      } else {
        this._open.delete(key);
      }
    });
    if (this._open.has(key)) {
      build();
      details.open = true;
    }
    return details;
  }

  private _body(tool: IToolInfo): HTMLElement {
    return el('div', { cls: 'tool-body' }, [
      el('pre', { cls: 'signature', text: clipCounted(tool.signature) }),
      tool.tool && tool.tool !== tool.name
        ? el('div', { cls: 'tool-mcp-name', text: `MCP tool: ${clipCounted(tool.tool, 200)}` })
        : null,
      tool.doc ? el('pre', { cls: 'doc', text: clipCounted(tool.doc) }) : null,
      el('div', { cls: 'label', text: 'Input schema' }),
      jsonTree(tool.inputSchema, false),
      tool.outputSchema !== null ? el('div', { cls: 'label', text: 'Output schema' }) : null,
      tool.outputSchema !== null ? jsonTree(tool.outputSchema, false) : null,
      tool.call ? button('Insert a call', () => this._options.onInsert(tool.call, tool), 'insert') : null
    ]);
  }

  private _tools: IToolInfo[] = [];
  private _open = new Set<string>();
  private _search: HTMLInputElement;
  private _count: HTMLElement;
  private _list: HTMLElement;
}
