/**
 * JSON values as a collapsible tree, and lists of records as tables.
 *
 * A level's children are built only when it is opened, so a large result costs nothing until looked
 * at. The rules follow the kernel's HTML fallback (render.py): the top level open, a small container
 * written on one line, a list of flat records (or of equal-length rows of scalars) as a table. Keys,
 * strings and cells show bidirectional controls as markers (as the rows and code lines do), so a value
 * holding a right-to-left override cannot read backwards.
 */

import { appendMarked, button, clear, h, marked } from './dom';
import { clip, plural } from './format';
import { asObject, toJson } from './model';

/** Children shown per level before "show more". */
export const MAX_ITEMS = 100;
/** Rows shown per table before "show more". */
export const MAX_ROWS = 50;
const MAX_COLUMNS = 20;
const INLINE_CHARS = 80;
const SCALAR_CHARS = 4000;
const CELL_CHARS = 1000;

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null;
}

function scalarNode(value: unknown): HTMLElement {
  const kind = value === null ? 'null' : typeof value;
  const text = toJson(value);
  if (text.length <= SCALAR_CHARS) {
    return marked('span', `json-${kind} json-scalar`, text);
  }
  const wrapper = h('span', 'json-long');
  const node = marked('span', `json-${kind} json-scalar`, text.slice(0, SCALAR_CHARS));
  const rest = (text.length - SCALAR_CHARS).toLocaleString('en');
  const more = button(`… ${rest} more characters`, 'show-all', 'show all', () => {
    clear(node);
    appendMarked(node, text);
    more.remove();
  });
  wrapper.append(node, more);
  return wrapper;
}

/** A cell's text: strings as they are, null empty, anything else as JSON. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  return clip(typeof value === 'string' ? value : toJson(value), CELL_CHARS);
}

function tableNode(header: string[] | null, rows: unknown[][]): HTMLElement {
  const wrapper = h('div', 'table-wrapper');
  const table = h('table', 'table');
  if (header) {
    const head = h('thead');
    const tr = h('tr');
    for (const column of header) {
      tr.appendChild(marked('th', '', clip(column, CELL_CHARS)));
    }
    head.appendChild(tr);
    table.appendChild(head);
  }
  const body = h('tbody');
  table.appendChild(body);
  wrapper.appendChild(table);
  let shown = 0;
  const more = h('div', 'more');
  const addRows = (): void => {
    const end = Math.min(rows.length, shown + MAX_ROWS);
    for (; shown < end; shown++) {
      const tr = h('tr');
      for (const cell of rows[shown]) {
        tr.appendChild(marked('td', '', cellText(cell)));
      }
      body.appendChild(tr);
    }
    if (shown >= rows.length) {
      more.remove();
    } else {
      label.textContent = `… ${plural(rows.length - shown, 'more row')} `;
    }
  };
  const label = h('span', 'muted');
  more.append(label, button('show more', 'show-more', `show ${MAX_ROWS} more rows`, addRows));
  wrapper.appendChild(more);
  addRows();
  return wrapper;
}

/**
 * A table when every item is a flat record with few columns, or when the items are two or more rows
 * of scalars of one length (two to twenty cells, as SQL results come); otherwise null.
 */
export function recordsTable(items: unknown[]): HTMLElement | null {
  if (items.length === 0) {
    return null;
  }
  if (items.every(Array.isArray)) {
    const rows = items as unknown[][];
    const width = rows[0].length;
    if (width < 2 || width > MAX_COLUMNS || rows.length < 2) {
      return null;
    }
    if (rows.some(row => row.length !== width || row.some(isContainer))) {
      return null;
    }
    return tableNode(null, rows);
  }
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const record = asObject(item);
    if (!record) {
      return null;
    }
    for (const key of Object.keys(record)) {
      if (isContainer(record[key])) {
        return null;
      }
      if (!seen.has(key)) {
        if (columns.length >= MAX_COLUMNS) {
          return null;
        }
        seen.add(key);
        columns.push(key);
      }
    }
  }
  if (columns.length === 0) {
    return null;
  }
  const rows = items.map(item => {
    const record = item as Record<string, unknown>;
    return columns.map(c => record[c]);
  });
  return tableNode(columns, rows);
}

/** A table from column names and rows of cells (a value of kind "table"). */
export function columnsTable(columns: string[], rows: unknown[][]): HTMLElement {
  return tableNode(columns, rows);
}

function containerLabel(value: Record<string, unknown> | unknown[]): string {
  return Array.isArray(value)
    ? `[…] ${plural(value.length, 'item')}`
    : `{…} ${plural(Object.keys(value).length, 'key')}`;
}

function childList(value: Record<string, unknown> | unknown[], depth: number): HTMLElement {
  const list = h('ul', 'json-children');
  const entries: [string | null, unknown][] = Array.isArray(value)
    ? value.map(v => [null, v])
    : Object.keys(value).map(k => [k, value[k]]);
  let shown = 0;
  const more = h('li', 'more');
  const addItems = (): void => {
    const end = Math.min(entries.length, shown + MAX_ITEMS);
    for (; shown < end; shown++) {
      const [key, child] = entries[shown];
      const item = h('li', 'json-item');
      if (key !== null) {
        item.appendChild(marked('span', 'json-key', clip(key, SCALAR_CHARS)));
        item.appendChild(document.createTextNode(': '));
      }
      item.appendChild(jsonNode(child, depth + 1));
      list.insertBefore(item, more);
    }
    if (shown >= entries.length) {
      more.remove();
    } else {
      label.textContent = `… ${(entries.length - shown).toLocaleString('en')} more `;
    }
  };
  const label = h('span', 'muted');
  more.append(label, button('show more', 'show-more', `show ${MAX_ITEMS} more`, addItems));
  list.appendChild(more);
  addItems();
  return list;
}

/**
 * A JSON value as a tree node: a scalar as a coloured token, a small container on one line, a list
 * of records as a table, any other container as a toggle whose children are built when first opened.
 */
export function jsonNode(value: unknown, depth = 0): HTMLElement {
  if (!isContainer(value)) {
    return scalarNode(value);
  }
  const empty = Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
  if (empty) {
    return h('span', 'json-scalar', Array.isArray(value) ? '[]' : '{}');
  }
  if (depth > 0) {
    const compact = toJson(value);
    if (compact.length <= INLINE_CHARS) {
      return marked('span', 'json-inline json-scalar', compact);
    }
  }
  if (Array.isArray(value)) {
    const table = recordsTable(value);
    if (table) {
      return table;
    }
  }
  const node = h('div', 'json-node');
  const toggle = button(containerLabel(value), 'json-toggle', 'open or close', () => setOpen(!open));
  node.appendChild(toggle);
  let open = false;
  let children: HTMLElement | null = null;
  const setOpen = (next: boolean): void => {
    open = next;
    toggle.setAttribute('aria-expanded', String(open));
    node.classList.toggle('jp-codemode-open', open);
    if (open && !children) {
      children = childList(value, depth);
      node.appendChild(children);
    }
    if (children) {
      children.hidden = !open;
    }
  };
  setOpen(depth === 0);
  return node;
}

/** A JSON tree in its frame (the value section, a result's structured content). */
export function jsonView(value: unknown): HTMLElement {
  const frame = h('div', 'json');
  frame.appendChild(jsonNode(value, 0));
  return frame;
}
