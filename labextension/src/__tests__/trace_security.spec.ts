/**
 * Hostile strings in every field of a trace are shown as text: no element but the renderer's own is
 * created, no attribute carries script, bidirectional overrides are made visible, and a 1 MB line is
 * capped (and still fast).
 */

import { TraceView } from '../trace';
import { all, one, rows, show } from './helpers';

const IMG = '<img src=x onerror="window.__pwned=1">';
const SCRIPT = '</script><script>window.__pwned=1</script>';
const RTL = 'safe\u202Egnp.exe';
const HOSTILE = [IMG, SCRIPT, RTL];
const MEGA = 'A'.repeat(1024 * 1024);

// The tags the renderer itself builds; anything else would have come from the data.
const OWN_TAGS = new Set([
  'DIV', 'SPAN', 'PRE', 'CODE', 'BUTTON', 'INPUT', 'SELECT', 'OPTION', 'UL', 'LI', 'DETAILS',
  'SUMMARY', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'IMG', 'AUDIO'
]);
const OWN_ATTRIBUTES = new Set([
  'class', 'style', 'title', 'type', 'role', 'aria-label', 'aria-expanded', 'data-key', 'data-status',
  'tabindex', 'hidden', 'open', 'placeholder', 'disabled', 'value', 'alt', 'src', 'controls', 'aria-valuenow'
]);

/** Base64 of the UTF-8 bytes of `text`. */
function base64(text: string): string {
  return btoa(unescape(encodeURIComponent(text)));
}

/** A trace with `text` in every string field there is. */
function hostileTrace(text: string): { data: any; metadata: any } {
  const args = { [text]: text, nested: { [text]: [text, { deep: text }] }, long: text.repeat(3) };
  const call = (seq: number, status: string, result: unknown): any => ({
    seq,
    server: text,
    tool: text,
    arguments: args,
    status,
    result,
    error: text,
    warnings: [text],
    progress: { progress: 1, total: 2, message: text }
  });
  return {
    data: {
      status: 'error',
      code: `x = 1\n${text}\ny = 2`,
      value: { kind: 'json', data: { [text]: text, rows: [1, 2, 3, 4].map(n => ({ [text]: text, n })) } },
      error: {
        type: text,
        message: text,
        line: 2,
        column: 1,
        source_line: text,
        traceback: text
      },
      stdout: text,
      stderr: text,
      output_truncated: false,
      tool_calls: [
        call(1, 'ok', {
          content: [
            { type: 'text', text },
            { type: 'text', text: JSON.stringify({ [text]: [text] }) },
            { type: 'image', data: base64(`<svg onload="${text}"/>`), mimeType: 'image/svg+xml' },
            { type: 'image', data: 'AAAA', mimeType: `image/png" onerror="${text}` },
            { type: 'image', data: `x" onerror="${text}`, mimeType: 'image/png' },
            { type: 'audio', data: 'AAAA', mimeType: text },
            { type: 'resource_link', uri: `javascript:${text}`, name: text },
            { type: 'resource', resource: { uri: text, text } },
            { type: text, [text]: text }
          ],
          isError: false
        }),
        call(2, 'ok', {
          content: [{ type: 'text', text }],
          structuredContent: { [text]: text, list: [{ [text]: text, b: text }] },
          isError: false
        }),
        call(3, text, { preview: text, bytes: 10 }),
        call(4, 'running', undefined)
      ],
      artifacts: [
        { name: text, type: text, description: text, size: 10, sha256: text }
      ],
      pending_calls: [{ server: text, tool: text, arguments: args }],
      timeout_s: 30
    },
    metadata: {
      execution_id: text,
      duration_ms: 12,
      protections: [text],
      tool_calls: [1, 2, 3, 4].map(i => ({ id: `${text}${i}`, duration_ms: 3, artifact_id: text })),
      artifacts: [{ id: text, created: text }]
    }
  };
}

/** Open every call and every tree node, press every "show all" and "show more". */
function openEverything(view: TraceView): void {
  for (const row of rows(view)) {
    if (row.getAttribute('aria-expanded') !== 'true') {
      row.click();
    }
  }
  for (let round = 0; round < 6; round++) {
    for (const toggle of all(view.node, 'json-toggle')) {
      if (toggle.getAttribute('aria-expanded') !== 'true') {
        toggle.click();
      }
    }
  }
  for (const more of [...all(view.node, 'show-all'), ...all(view.node, 'show-more')]) {
    more.click();
  }
  for (const details of Array.from(view.node.querySelectorAll('details'))) {
    details.open = true;
  }
}

/** Fail on any element or attribute the renderer does not make itself. */
function expectOnlyOwnMarkup(root: HTMLElement): void {
  for (const element of Array.from(root.querySelectorAll('*'))) {
    expect(OWN_TAGS).toContain(element.tagName);
    for (const attribute of Array.from(element.attributes)) {
      expect(OWN_ATTRIBUTES).toContain(attribute.name);
    }
    for (const cls of Array.from(element.classList)) {
      expect(cls.startsWith('jp-codemode-')).toBe(true);
    }
  }
}

describe.each(HOSTILE)('the hostile string %j', text => {
  let view: TraceView;
  beforeEach(() => {
    const { data, metadata } = hostileTrace(text);
    view = show(data, metadata, { openArtifact: jest.fn() });
    openEverything(view);
  });

  it('creates no element or attribute of its own', () => {
    expectOnlyOwnMarkup(view.node);
    expect(view.node.querySelectorAll('img, audio')).toHaveLength(0); // none is allow-listed media
    expect(document.querySelectorAll('script, iframe, object, embed, svg, a, style, link')).toHaveLength(0);
    expect((window as any).__pwned).toBeUndefined();
  });

  it('is shown literally where it is data', () => {
    const expected = text === RTL ? 'safe⟨U+202E⟩gnp.exe' : text;
    const row = rows(view)[0];
    expect(one(row, 'call-name').textContent).toContain(expected);
    expect(one(row, 'call-server').textContent).toBe(expected);
    expect(one(view.node, 'error-head').textContent).toBe(`line 2: ${expected}: ${expected}`);
    expect(one(view.node, 'code-line-failing').textContent).toBe(`2${expected}`);
    expect(one(one(view.node, 'stdout'), 'pre').textContent).toBe(text);
    expect(one(one(view.node, 'stderr'), 'pre').textContent).toBe(text);
    expect(one(view.node, 'artifact-link').textContent).toBe(expected);
    expect(one(view.node, 'artifact').textContent).toContain(text);
    expect(all(view.node, 'json-key').some(k => k.textContent === expected)).toBe(true);
    expect(all(view.node, 'warning')[0].textContent).toBe(`warning: ${text}`);
    expect(all(view.node, 'call-error')[0].textContent).toBe(text);
    expect(one(view.node, 'pending').textContent).toContain(expected);
    expect(one(view.node, 'header').title).toContain(text);
    // Tables keep the text too.
    expect(
      Array.from(view.node.querySelectorAll('th')).some(th => th.textContent === expected)
    ).toBe(true);
    expect(
      Array.from(view.node.querySelectorAll('td')).some(td => td.textContent === expected)
    ).toBe(true);
  });
});

describe('a right-to-left override', () => {
  it('is marked in names and code and isolated elsewhere', () => {
    const { data, metadata } = hostileTrace(RTL);
    const view = show(data, metadata);
    expect(all(rows(view)[0], 'bidi').map(b => b.textContent)).toContain('⟨U+202E⟩');
    expect(one(view.node, 'code-line-failing').querySelector('.jp-codemode-bidi')).not.toBeNull();
    // In program output it stays in the text, inside its own element (isolated by the stylesheet).
    expect(one(view.node, 'stdout').textContent).toContain('\u202E');
  });

  it('is marked in a call\'s arguments and result tree and in its table, key and value', () => {
    const call = {
      seq: 1,
      server: 'files',
      tool: 'rename',
      arguments: {
        target: 'invoice\u202Efdp.exe',
        ['\u202Eeman']: 'x',
        nested: { deep: ['a', RTL, 'b'] }
      },
      status: 'ok',
      result: {
        content: [{ type: 'text', text: 'done' }],
        structuredContent: {
          // Long enough not to be written on one line: a table.
          files: [
            { name: 'invoice\u202Efdp.exe', size: 1 },
            ...[2, 3, 4, 5].map(size => ({ name: `plain ${size}.txt`, size }))
          ],
          ['\u202Eyek']: RTL
        },
        isError: false
      }
    };
    const view = show({ status: 'ok', tool_calls: [call] });
    rows(view)[0].click();
    const detail = one(view.node, 'call-detail');
    const keys = all(detail, 'json-key').map(k => k.textContent);
    expect(keys).toContain('⟨U+202E⟩eman');
    expect(keys).toContain('⟨U+202E⟩yek');
    const scalars = all(detail, 'json-scalar').map(k => k.textContent);
    expect(scalars).toContain('"invoice⟨U+202E⟩fdp.exe"');
    expect(scalars).toContain('"safe⟨U+202E⟩gnp.exe"');
    // A small container written on one line is marked too.
    expect(scalars).toContain('{"deep":["a","safe⟨U+202E⟩gnp.exe","b"]}');
    const cells = Array.from(detail.querySelectorAll('td')).map(td => td.textContent);
    expect(cells).toContain('invoice⟨U+202E⟩fdp.exe');
    // No override reaches the tree or the table as a character; each marker is its own element.
    for (const node of [...all(detail, 'json'), ...all(detail, 'table')]) {
      expect(node.textContent).not.toContain('\u202E');
    }
    expect(all(detail, 'bidi').length).toBeGreaterThanOrEqual(6);
  });

  it('is marked in a table header and in a long string after "show all"', () => {
    const long = `${'x'.repeat(5000)}\u202E${'y'.repeat(10)}`;
    const view = show({
      status: 'ok',
      value: {
        kind: 'json',
        data: { rows: [1, 2, 3, 4, 5, 6].map(n => ({ ['\u202Ecolumn']: n })), long }
      },
      tool_calls: []
    });
    const headers = Array.from(view.node.querySelectorAll('th')).map(th => th.textContent);
    expect(headers).toEqual(['⟨U+202E⟩column']);
    one(view.node, 'show-all').click();
    const scalar = all(view.node, 'json-string').find(s => s.textContent!.length > 5000)!;
    expect(scalar.textContent).toContain('⟨U+202E⟩yyy');
    expect(scalar.textContent).not.toContain('\u202E');
  });

  it('is marked in a status: the badge, and the filter\'s option (plain text)', () => {
    const status = 'denied\u202Ekcatta';
    const view = show({
      status: 'ok',
      tool_calls: [{ seq: 1, server: 's', tool: 't', arguments: {}, status }]
    });
    expect(one(rows(view)[0], 'badge').textContent).toBe('✗ denied⟨U+202E⟩kcatta');
    expect(one(rows(view)[0], 'badge').dataset.status).toBe(status);
    const select = one(view.node, 'calls-filter-status') as HTMLSelectElement;
    expect(select.options[1].textContent).toBe('denied⟨U+202E⟩kcatta (1)');
    expect(select.options[1].value).toBe(status);
  });
});

describe('a 1 MB line', () => {
  it('in every field renders fast, capped, and shows all on request', () => {
    const { data, metadata } = hostileTrace(MEGA);
    const start = performance.now();
    const view = show(data, metadata);
    rows(view)[0].click();
    rows(view)[1].click();
    const elapsed = performance.now() - start;
    // eslint-disable-next-line no-console
    console.log(`1 MB in every field: first render and two calls opened in ${elapsed.toFixed(0)} ms`);
    expect(elapsed).toBeLessThan(1500);
    const stdout = one(one(view.node, 'stdout'), 'pre');
    expect(stdout.textContent!.length).toBe(10000);
    expect(one(view.node, 'stdout').textContent).toContain('1,038,576 more characters');
    expect(one(rows(view)[0], 'call-name').textContent!.length).toBeLessThan(400);
    expect(one(view.node, 'error-head').textContent!.length).toBeLessThan(5000);
    one(one(view.node, 'stdout'), 'show-all').click();
    expect(stdout.textContent).toBe(MEGA);
    expectOnlyOwnMarkup(view.node);
  });

  it('with hostile markup inside stays text after "show all"', () => {
    const text = `${MEGA}${IMG}`;
    const { data, metadata } = hostileTrace(text);
    const view = show(data, metadata);
    openEverything(view);
    expect(one(one(view.node, 'stdout'), 'pre').textContent).toBe(text);
    expect(view.node.querySelectorAll('img')).toHaveLength(0);
    expectOnlyOwnMarkup(view.node);
  });
});
