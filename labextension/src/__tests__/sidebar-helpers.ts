/**
 * Shared pieces of the sidebar's tests: lookups by the sidebar's class names, clicks, waiting for
 * promises, bytes from text, and blob: URLs (jsdom has no URL.createObjectURL; the browser does).
 */

const PREFIX = 'jp-codemode-sidebar-';

if (typeof URL.createObjectURL !== 'function') {
  let next = 0;
  URL.createObjectURL = () => `blob:http://localhost/${++next}`;
  URL.revokeObjectURL = () => undefined;
}

/** Every element with the sidebar class `cls` (without its prefix). */
export function all(root: Element, cls: string): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(`.${PREFIX}${cls}`));
}

/** The text of the first element with the sidebar class `cls`. */
export function text(root: Element, cls: string): string {
  const found = root.querySelector(`.${PREFIX}${cls}`);
  if (!found) {
    throw new Error(`no .${PREFIX}${cls}`);
  }
  return found.textContent ?? '';
}

/** A click as a person makes it. */
export function click(node: Element): void {
  node.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true }));
}

/** Lets pending promises and timers of 0 ms settle. */
export async function flush(times = 5): Promise<void> {
  for (let i = 0; i < times; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
}

/** Lets timers run until `done()` holds (the sidebar's next poll), failing after `timeoutMs`. */
export async function until(done: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) {
      throw new Error(`not done within ${timeoutMs} ms`);
    }
    await new Promise(resolve => setTimeout(resolve, 10));
  }
}

/** The UTF-8 bytes of `text` (each char code below 256 kept as one byte when `raw`). */
export function bytes(value: string): ArrayBuffer {
  const raw = /^[\x00-\xff]*$/.test(value) && /[\x80-\xff]/.test(value);
  const array = raw
    ? Uint8Array.from(value, c => c.charCodeAt(0))
    : new TextEncoder().encode(value);
  return array.buffer.slice(array.byteOffset, array.byteOffset + array.byteLength) as ArrayBuffer;
}
