/**
 * DOM helpers of the sidebar views. Data only ever becomes text nodes (createTextNode / textContent):
 * nothing here parses HTML, so a hostile string shows as the characters it is made of.
 */

/** Every class name of the sidebar starts with this. */
export const CLASS = 'jp-codemode-sidebar';

/** Strings longer than this are cut when shown (the rest is counted, not rendered). */
export const MAX_TEXT = 20000;

/** Attributes and text of an element made by `el`. */
export interface IElementOptions {
  /** Class suffixes: `'row'` becomes `jp-codemode-sidebar-row`. */
  cls?: string | string[];
  text?: string;
  title?: string;
  attrs?: Record<string, string>;
}

type Child = Node | string | null | undefined | false;

/** An element with prefixed classes and text children (strings become text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: IElementOptions = {},
  children: Child[] = []
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  const classes = typeof options.cls === 'string' ? [options.cls] : (options.cls ?? []);
  for (const name of classes) {
    node.classList.add(`${CLASS}-${name}`);
  }
  if (options.text !== undefined) {
    node.textContent = options.text;
  }
  if (options.title !== undefined) {
    node.title = clip(options.title, 2000);
  }
  for (const [key, value] of Object.entries(options.attrs ?? {})) {
    node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** A button with a text label that calls `onClick`. */
export function button(label: string, onClick: () => void, cls: string | string[] = []): HTMLButtonElement {
  const node = el('button', { cls: ['button', ...(typeof cls === 'string' ? [cls] : cls)], text: label });
  node.type = 'button';
  node.classList.add('jp-mod-styled');
  node.addEventListener('click', event => {
    event.stopPropagation();
    onClick();
  });
  return node;
}

/** `text` cut to `max` characters with a note of how many were left out. */
export function clip(text: string, max: number = MAX_TEXT): string {
  if (text.length <= max) {
    return text;
  }
  return `${text.slice(0, max)}… (${(text.length - max).toLocaleString('en')} more characters)`;
}

/** The first line of `text`, cut to `max` characters. */
export function firstLine(text: string, max = 120): string {
  const line = text.trim().split(/\r?\n/, 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** A byte count for people: 512 B, 1.5 kB, 2.0 MB. */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) {
    return '';
  }
  if (bytes < 1000) {
    return `${bytes} B`;
  }
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** An ISO time as the local date and time (or the text as given when it does not parse). */
export function formatTime(iso: string): string {
  const time = Date.parse(iso);
  if (!iso || Number.isNaN(time)) {
    return iso;
  }
  return new Date(time).toLocaleString();
}

/** A duration in milliseconds for people: 850 ms, 2.4 s, 3 min 5 s. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) {
    return '';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  if (ms < 60000) {
    return `${(ms / 1000).toFixed(1)} s`;
  }
  const minutes = Math.floor(ms / 60000);
  return `${minutes} min ${Math.round((ms - minutes * 60000) / 1000)} s`;
}

/** Entries of an object or array shown before "… N more". */
const MAX_ENTRIES = 300;
/** Nesting below which a value is summarised rather than opened. */
const MAX_DEPTH = 40;

/**
 * A collapsible tree of a JSON value: objects and arrays are <details> whose children are built when first
 * opened (a large value costs nothing until looked at), the top level open.
 */
export function jsonTree(value: unknown, open = true): HTMLElement {
  const root = el('div', { cls: 'json' });
  root.appendChild(jsonNode(value, 0, open));
  return root;
}

function jsonNode(value: unknown, depth: number, open: boolean): Node {
  if (value === null || typeof value !== 'object') {
    return jsonLeaf(value);
  }
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value as Record<string, unknown>);
  const summary = Array.isArray(value)
    ? `[…] ${entries.length} item${entries.length === 1 ? '' : 's'}`
    : `{…} ${entries.length} key${entries.length === 1 ? '' : 's'}`;
  if (entries.length === 0) {
    return el('span', { cls: 'json-empty', text: Array.isArray(value) ? '[]' : '{}' });
  }
  if (depth >= MAX_DEPTH) {
    return el('span', { cls: 'json-empty', text: `${summary} (too deep to show)` });
  }
  const details = el('details', { cls: 'json-node' }, [el('summary', { cls: 'json-summary', text: summary })]);
  let built = false;
  const build = (): void => {
    if (built) {
      return;
    }
    built = true;
    const list = el('div', { cls: 'json-children' });
    for (const [key, item] of entries.slice(0, MAX_ENTRIES)) {
      list.appendChild(
        el('div', { cls: 'json-entry' }, [
          el('span', { cls: 'json-key', text: Array.isArray(value) ? key : clip(key, 200) }),
          ': ',
          jsonNode(item, depth + 1, false)
        ])
      );
    }
    if (entries.length > MAX_ENTRIES) {
      list.appendChild(el('div', { cls: 'json-more', text: `… ${entries.length - MAX_ENTRIES} more` }));
    }
    details.appendChild(list);
  };
  details.addEventListener('toggle', () => {
    if (details.open) {
      build();
    }
  });
  if (open) {
    build();
    details.open = true;
  }
  return details;
}

function jsonLeaf(value: unknown): HTMLElement {
  if (typeof value === 'string') {
    return el('span', { cls: 'json-string', text: JSON.stringify(clip(value)) });
  }
  if (typeof value === 'number') {
    return el('span', { cls: 'json-number', text: String(value) });
  }
  if (typeof value === 'boolean') {
    return el('span', { cls: 'json-boolean', text: String(value) });
  }
  return el('span', { cls: 'json-null', text: value === null ? 'null' : String(value) });
}
