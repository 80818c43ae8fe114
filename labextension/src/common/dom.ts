/**
 * Small DOM helpers that only ever put data into the page as text, for the trace renderer and the sidebar.
 *
 * Every string from a tool, a server, a model or a program reaches the DOM through `textContent` or
 * `createTextNode` here; attributes are set by name from a fixed list in the callers. Nothing in this
 * package assigns `innerHTML`.
 */

/** The prefix of every class the trace renderer sets (the sidebar's add `sidebar-` to it). */
export const PREFIX = 'jp-codemode-';

/**
 * An element with the classes `cls` (space separated), each with `prefix` before it, and, optionally, a
 * text child.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
  prefix = PREFIX
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    for (const name of cls.split(' ')) {
      if (name) {
        node.classList.add(prefix + name);
      }
    }
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** Remove every child of `node`. */
export function clear(node: Node): void {
  while (node.firstChild) {
    node.removeChild(node.firstChild);
  }
}

/** A `<button type="button">` with a label, a tooltip, a click handler and the classes `button` and `cls`. */
export function button(
  label: string,
  cls: string,
  title: string,
  onClick: (event: MouseEvent) => void,
  prefix = PREFIX
): HTMLButtonElement {
  const node = h('button', `button ${cls}`, label, prefix);
  node.type = 'button';
  if (title) {
    node.title = title;
  }
  node.addEventListener('click', onClick);
  return node;
}

// Bidirectional controls (embeddings, overrides, isolates, marks) can make a line read differently from
// what it is ("Trojan Source"); in names, arguments and code they are shown as visible markers instead.
const BIDI = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Whether `text` holds a bidirectional control character. */
export function hasBidi(text: string): boolean {
  BIDI.lastIndex = 0;
  return BIDI.test(text);
}

function bidiMarker(control: string): string {
  return `⟨U+${control.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

/**
 * `text` with each bidirectional control replaced by its marker, as plain text: for places that hold
 * only text (an `<option>`, a tooltip).
 */
export function markText(text: string): string {
  return hasBidi(text) ? text.replace(BIDI, bidiMarker) : text;
}

/**
 * Append `text` to `parent` as text, with each bidirectional control replaced by a visible marker
 * such as `⟨U+202E⟩` (its own span, so a theme can colour it).
 */
export function appendMarked(parent: HTMLElement, text: string): void {
  if (!hasBidi(text)) {
    parent.appendChild(document.createTextNode(text));
    return;
  }
  BIDI.lastIndex = 0;
  let last = 0;
  for (let match = BIDI.exec(text); match; match = BIDI.exec(text)) {
    if (match.index > last) {
      parent.appendChild(document.createTextNode(text.slice(last, match.index)));
    }
    const marker = h('span', 'bidi', bidiMarker(match[0]));
    marker.title = 'a bidirectional control character';
    parent.appendChild(marker);
    last = match.index + match[0].length;
  }
  if (last < text.length) {
    parent.appendChild(document.createTextNode(text.slice(last)));
  }
}

/** An element whose text is `text` with bidirectional controls made visible. */
export function marked<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls: string,
  text: string
): HTMLElementTagNameMap[K] {
  const node = h(tag, cls);
  appendMarked(node, text);
  return node;
}
