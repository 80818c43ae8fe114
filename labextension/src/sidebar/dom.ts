/**
 * The sidebar's way of making elements: the shared helpers of ../common with the sidebar's class prefix.
 * Data only ever becomes text nodes (createTextNode / textContent): nothing here parses HTML, so a hostile
 * string shows as the characters it is made of.
 */
import { button as commonButton, h, PREFIX } from '../common/dom';
import { clip, clipCounted } from '../common/format';
import { jsonView } from '../common/json';

/** Every class name of the sidebar starts with this. */
export const CLASS = `${PREFIX}sidebar`;

const SIDEBAR_PREFIX = `${CLASS}-`;

/** Attributes and text of an element made by `el`. */
export interface IElementOptions {
  /** Class suffixes: `'row'` becomes `jp-codemode-sidebar-row`. */
  cls?: string | string[];
  text?: string;
  title?: string;
  attrs?: Record<string, string>;
}

type Child = Node | string | null | undefined | false;

function classList(cls: string | string[] | undefined): string {
  return typeof cls === 'string' ? cls : (cls ?? []).join(' ');
}

/** An element with prefixed classes and text children (strings become text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: IElementOptions = {},
  children: Child[] = []
): HTMLElementTagNameMap[K] {
  const node = h(tag, classList(options.cls), options.text, SIDEBAR_PREFIX);
  if (options.title !== undefined) {
    node.title = clipCounted(options.title, 2000);
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

/**
 * A JupyterLab-styled button with a text label that calls `onClick`; the click goes no further (a button
 * in a row that opens on a click must not open it too).
 */
export function button(label: string, onClick: () => void, cls: string | string[] = []): HTMLButtonElement {
  const node = commonButton(
    label,
    classList(cls),
    '',
    event => {
      event.stopPropagation();
      onClick();
    },
    SIDEBAR_PREFIX
  );
  node.classList.add('jp-mod-styled');
  return node;
}

/** A JSON value as the trace shows one (a tree opened level by level), in the sidebar's frame. */
export function jsonTree(value: unknown, open = true): HTMLElement {
  const tree = jsonView(value, open);
  tree.classList.add(`${CLASS}-json`);
  return tree;
}

/** The first line of `text`, cut to `max` characters. */
export function firstLine(text: string, max = 120): string {
  return clip(text.trim().split(/\r?\n/, 1)[0] ?? '', max);
}

/** An ISO time as the local date and time (or the text as given when it does not parse). */
export function formatTime(iso: string): string {
  const time = Date.parse(iso);
  if (!iso || Number.isNaN(time)) {
    return iso;
  }
  return new Date(time).toLocaleString();
}
