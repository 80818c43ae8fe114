/**
 * A tool's result (an MCP CallToolResult in wire form) and a program's value (the executor's envelope).
 *
 * Images and audio are inlined only from base64 data with a MIME type from a short allow-list of
 * raster and audio formats: never SVG (it can carry script) and never a URL the data names.
 */

import { h } from '../common/dom';
import { clip, formatSize, plural } from '../common/format';
import { columnsTable, jsonView } from '../common/json';
import { asList, asNumber, asObject } from '../common/values';

import { asText } from './model';
import { textBlock } from './text';

/** Image types shown inline. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp'
]);

/** Audio types given a player. */
export const AUDIO_TYPES: ReadonlySet<string> = new Set([
  'audio/wav',
  'audio/x-wav',
  'audio/mpeg',
  'audio/ogg',
  'audio/webm'
]);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const URI_CHARS = 2000;

/** Whether `data` is strict base64 (no whitespace, padded). */
export function isBase64(data: unknown): data is string {
  return typeof data === 'string' && data.length % 4 === 0 && BASE64.test(data);
}

/** An `<img>` or `<audio>` for allow-listed base64 media; otherwise a line saying it is not shown. */
export function mediaNode(kind: 'image' | 'audio', mime: string, data: unknown): HTMLElement {
  const allowed = kind === 'image' ? IMAGE_TYPES : AUDIO_TYPES;
  if (!allowed.has(mime) || !isBase64(data) || data.length === 0) {
    return h('div', 'muted', `${kind} (${clip(mime, 100) || 'no type'}), not shown inline`);
  }
  const source = `data:${mime};base64,${data}`;
  if (kind === 'image') {
    const img = h('img', 'image');
    img.setAttribute('alt', `${mime} image`);
    img.setAttribute('src', source);
    return img;
  }
  const audio = h('audio', 'audio');
  audio.controls = true;
  audio.setAttribute('src', source);
  return audio;
}

/** Text that may hold JSON: a tree or table when it parses as an object or list, else text. */
function textOrJson(text: string, cls = ''): HTMLElement {
  const first = text.charAt(text.search(/\S/));
  if ((first === '{' || first === '[') && text.length < 5e6) {
    try {
      return jsonView(JSON.parse(text));
    } catch {
      // not JSON: shown as text
    }
  }
  return textBlock(text, cls);
}

function contentNode(item: Record<string, unknown>): HTMLElement {
  const kind = asText(item.type);
  if (kind === 'text') {
    return textOrJson(asText(item.text));
  }
  if (kind === 'image' || kind === 'audio') {
    return mediaNode(kind, asText(item.mimeType), item.data);
  }
  if (kind === 'resource_link') {
    const node = h('div', 'resource');
    node.append(
      h('span', 'muted', 'resource link: '),
      h('code', 'code', clip(asText(item.uri), URI_CHARS)),
      document.createTextNode(' '),
      h('span', '', clip(asText(item.name), URI_CHARS))
    );
    return node;
  }
  if (kind === 'resource') {
    const resource = asObject(item.resource) ?? {};
    const node = h('div', 'resource');
    const head = h('div');
    head.append(
      h('span', 'muted', 'resource '),
      h('code', 'code', clip(asText(resource.uri), URI_CHARS))
    );
    node.appendChild(head);
    if ('text' in resource) {
      node.appendChild(textBlock(asText(resource.text)));
    } else if ('blob' in resource) {
      const size = typeof resource.blob === 'string' ? Math.floor((resource.blob.length * 3) / 4) : null;
      const mime = clip(asText(resource.mimeType), 100);
      node.appendChild(h('div', 'muted', `binary ${mime} ${formatSize(size)}`));
    }
    return node;
  }
  return jsonView(item);
}

/**
 * A tool call's result: an artifact's preview, the structured content as a tree or table, then each
 * content item (text content is skipped beside structured content: it is the same data for older
 * clients).
 */
export function resultNode(result: unknown): HTMLElement {
  const node = h('div', 'result');
  const obj = asObject(result);
  if (!obj) {
    node.appendChild(result === undefined ? h('div', 'muted', 'no result yet') : jsonView(result));
    return node;
  }
  if ('preview' in obj && !('content' in obj)) {
    const bytes = asNumber(obj.bytes);
    const note = bytes === null ? 'preview' : `preview of ${formatSize(bytes)}`;
    node.appendChild(h('div', 'muted', note));
    node.appendChild(textOrJson(asText(obj.preview)));
    return node;
  }
  if (obj.isError === true) {
    node.classList.add('jp-codemode-result-error');
  }
  const structured = obj.structuredContent;
  const hasStructured = structured !== undefined && structured !== null;
  if (hasStructured) {
    node.appendChild(jsonView(structured));
  }
  for (const entry of asList(obj.content)) {
    const item = asObject(entry);
    if (!item) {
      node.appendChild(jsonView(entry));
      continue;
    }
    if (hasStructured && item.type === 'text') {
      continue;
    }
    node.appendChild(contentNode(item));
  }
  if (!node.firstChild) {
    node.appendChild(h('div', 'muted', 'empty result'));
  }
  return node;
}

/** A program's value from its envelope: a tree, a table, text, an image or a short description. */
export function valueNode(envelope: Record<string, unknown>): HTMLElement {
  const kind = asText(envelope.kind);
  const node = h('div', `value value-${kind.replace(/[^a-z]/g, '') || 'unknown'}`);
  const note = (text: string): void => {
    node.appendChild(h('div', 'muted', text));
  };
  if (kind === 'json') {
    node.appendChild(jsonView(envelope.data));
    if (envelope.truncated === true) {
      const length = asNumber(envelope.length);
      note(length === null ? 'truncated' : `truncated (${plural(length, 'item')} in all)`);
    }
  } else if (kind === 'text') {
    node.appendChild(textBlock(asText(envelope.text)));
    if (envelope.truncated === true) {
      note(`truncated (${formatSize(asNumber(envelope.size)) || 'longer'} in all)`);
    }
  } else if (kind === 'table') {
    const columns = asList(envelope.columns).map(asText);
    const rows = asList(envelope.rows).filter(Array.isArray) as unknown[][];
    const count = asNumber(envelope.row_count) ?? rows.length;
    const origin = asText(envelope.origin);
    note(`${origin ? `${origin}: ` : ''}${plural(count, 'row')}, ${plural(columns.length, 'column')}`);
    node.appendChild(columnsTable(columns, rows));
    if (count > rows.length) {
      note(`${plural(count - rows.length, 'more row')} not sent`);
    }
  } else if (kind === 'image') {
    node.appendChild(mediaNode('image', asText(envelope.mime_type), envelope.data));
  } else if (kind === 'repr') {
    const type = clip(asText(envelope.type), 200);
    if (type) {
      note(type);
    }
    node.appendChild(textBlock(asText(envelope.repr)));
  } else if (kind === 'bytes') {
    const mime = asText(envelope.mime_type);
    note(`bytes: ${formatSize(asNumber(envelope.size))}${mime ? ` (${clip(mime, 100)})` : ''}`);
    if (IMAGE_TYPES.has(mime) && envelope.truncated !== true) {
      node.appendChild(mediaNode('image', mime, envelope.data));
    }
  } else {
    node.appendChild(jsonView(envelope));
  }
  return node;
}
