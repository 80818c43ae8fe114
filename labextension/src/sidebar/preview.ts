/**
 * Artifact previews by type. Images of a few raster types become an <img> from a blob: URL of the fetched
 * bytes; JSON a tree and CSV a table of the first rows, both as the trace draws them; everything else,
 * HTML and SVG included, text in a <pre>: nothing from an artifact is ever parsed as markup.
 */

import { clipCounted } from '../common/format';
import { columnsTable } from '../common/json';

import { el, jsonTree } from './dom';

/** Image types shown as images. SVG is not among them: it is markup, shown as text. */
export const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp']);

/** Rows of a CSV artifact shown (after the header). */
export const CSV_ROWS = 50;

/** Characters of a text artifact shown. */
const MAX_PREVIEW_TEXT = 200000;

/** A preview element and what to release when it goes (a blob: URL). */
export interface IPreview {
  node: HTMLElement;
  dispose(): void;
}

/** The MIME type without parameters, lower case: `Text/CSV; charset=utf-8` → `text/csv`. */
export function baseType(type: string): string {
  return type.split(';', 1)[0].trim().toLowerCase();
}

/** Whether `type` is JSON (`application/json` or a `+json` type). */
export function isJsonType(type: string): boolean {
  const base = baseType(type);
  return base === 'application/json' || base.endsWith('+json');
}

/** A preview of artifact bytes of the (stored) type `type`. */
export function previewArtifact(bytes: ArrayBuffer, type: string): IPreview {
  const base = baseType(type);
  if (IMAGE_TYPES.has(base)) {
    return imagePreview(bytes, base);
  }
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (isJsonType(base)) {
    try {
      return still(jsonTree(JSON.parse(text), true));
    } catch {
      return still(el('div', {}, [note('Not valid JSON; shown as text.'), textBlock(text)]));
    }
  }
  if (base === 'text/csv') {
    return still(csvTable(text));
  }
  if (base.startsWith('text/') || base.endsWith('+xml') || base === 'application/xml' || isMostlyText(text)) {
    return still(textBlock(text));
  }
  return still(note(`Binary data (${base || 'no type'}): download it to open it.`));
}

/** Splits CSV text into rows of fields (RFC 4180 quoting), stopping after `maxRows` rows. */
export function parseCsv(text: string, maxRows: number): { rows: string[][]; complete: boolean } {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endRow = (): void => {
    row.push(field);
    rows.push(row);
    row = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
      i += 1;
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
    } else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') {
        i += 1;
      }
      endRow();
      if (rows.length >= maxRows) {
        return { rows, complete: i + 1 >= text.length };
      }
    } else {
      field += c;
    }
    i += 1;
  }
  if (field !== '' || row.length) {
    endRow();
  }
  return { rows, complete: true };
}

function csvTable(text: string): HTMLElement {
  const { rows, complete } = parseCsv(text, CSV_ROWS + 1);
  if (!rows.length) {
    return note('An empty table.');
  }
  const [header, ...body] = rows;
  return el('div', { cls: 'csv' }, [
    columnsTable(header, body),
    complete ? null : note(`The first ${CSV_ROWS} rows; download the artifact for the rest.`)
  ]);
}

function textBlock(text: string): HTMLElement {
  return el('pre', { cls: 'preview-text', text: clipCounted(text, MAX_PREVIEW_TEXT) });
}

function note(text: string): HTMLElement {
  return el('p', { cls: 'note', text });
}

function imagePreview(bytes: ArrayBuffer, type: string): IPreview {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const image = el('img', { cls: 'preview-image', attrs: { alt: 'artifact image' } });
  image.src = url;
  return { node: image, dispose: () => URL.revokeObjectURL(url) };
}

/** Whether decoded bytes look like text (few replacement or control characters). */
function isMostlyText(text: string): boolean {
  const sample = text.slice(0, 4096);
  if (!sample) {
    return true;
  }
  const odd = sample.match(/[\uFFFD\u0000-\u0008\u000e-\u001f]/g)?.length ?? 0;
  return odd / sample.length < 0.02;
}

function still(node: HTMLElement): IPreview {
  return { node, dispose: () => undefined };
}
