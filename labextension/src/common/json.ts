/**
 * JSON values as a collapsible tree, and lists of records as tables: a call's arguments and result in the
 * trace, a tool's schemas and a JSON artifact in the sidebar.
 *
 * A level's children are built only when it is opened, and a closed level is only measured as far as
 * deciding whether it fits on one line, so a large value costs little until looked at. The rules follow
 * the kernel's HTML fallback (render.py): the top level open (unless asked otherwise), a small container
 * written on one line, a list of flat records (or of equal-length rows of scalars) as a table, a hundred
 * children at a time, nothing opened below MAX_DEPTH levels. Keys, strings and cells show bidirectional
 * controls as markers (as the rows and code lines do), so a value holding a right-to-left override cannot
 * read backwards.
 */

import { appendMarked, button, clear, h, marked } from './dom';
import { clip, plural } from './format';
import { asObject, toJson } from './values';

/** Children shown per level before "show more". */
export const MAX_ITEMS = 100;
/** Rows shown per table before "show more". */
export const MAX_ROWS = 50;
/** Levels of nesting opened; a container deeper than this is summarised, not opened. */
export const MAX_DEPTH = 40;
const MAX_COLUMNS = 20;
const INLINE_CHARS = 80;
const SCALAR_CHARS = 4000;
const CELL_CHARS = 1000;

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null;
}

/**
 * Whether `JSON.stringify(value)` may be at most `limit` characters, learnt without writing it: a lower
 * bound of its length is counted until it passes `limit`, so a large closed level is not turned into
 * text just to find it does not fit on one line (each container counts, so a cycle ends the count too).
 */
function mayFit(value: unknown, limit: number): boolean {
  let budget = limit;
  const visit = (item: unknown): boolean => {
    if (item === null || typeof item !== 'object') {
      // a string is at least its length and quotes, any other scalar at least one character
      budget -= typeof item === 'string' ? item.length + 2 : 1;
      return budget >= 0;
    }
    budget -= 2;
    if (budget < 0) {
      return false;
    }
    if (Array.isArray(item)) {
      return item.every(visit);
    }
    const record = item as Record<string, unknown>;
    return Object.keys(record).every(key => {
      const child = record[key];
      if (child === undefined || typeof child === 'function' || typeof child === 'symbol') {
        return true; // left out of the JSON, key and all
      }
      budget -= key.length + 3;
      return budget >= 0 && visit(child);
    });
  };
  return visit(value);
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
 * of records as a table, any other container as a toggle whose children are built when first opened
 * (open at once when `open`), or, below MAX_DEPTH, a summary.
 */
export function jsonNode(value: unknown, depth = 0, open = depth === 0): HTMLElement {
  if (!isContainer(value)) {
    return scalarNode(value);
  }
  const empty = Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
  if (empty) {
    return h('span', 'json-scalar', Array.isArray(value) ? '[]' : '{}');
  }
  if (depth > 0 && mayFit(value, INLINE_CHARS)) {
    const compact = toJson(value);
    if (compact.length <= INLINE_CHARS) {
      return marked('span', 'json-inline json-scalar', compact);
    }
  }
  if (depth >= MAX_DEPTH) {
    return h('span', 'json-deep json-scalar', `${containerLabel(value)} (too deep to show)`);
  }
  if (Array.isArray(value)) {
    const table = recordsTable(value);
    if (table) {
      return table;
    }
  }
  const node = h('div', 'json-node');
  const toggle = button(containerLabel(value), 'json-toggle', 'open or close', () => setOpen(!isOpen));
  node.appendChild(toggle);
  let isOpen = false;
  let children: HTMLElement | null = null;
  const setOpen = (next: boolean): void => {
    isOpen = next;
    toggle.setAttribute('aria-expanded', String(isOpen));
    node.classList.toggle('jp-codemode-open', isOpen);
    if (isOpen && !children) {
      children = childList(value, depth);
      node.appendChild(children);
    }
    if (children) {
      children.hidden = !isOpen;
    }
  };
  setOpen(open);
  return node;
}

/**
 * A JSON tree in its frame (the trace's value section, a result's structured content, the sidebar's
 * schemas and JSON artifacts), its top level open unless `open` is false.
 */
export function jsonView(value: unknown, open = true): HTMLElement {
  const frame = h('div', 'json');
  frame.appendChild(jsonNode(value, 0, open));
  return frame;
}
