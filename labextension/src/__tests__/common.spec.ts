/**
 * The helpers the trace and the sidebar share: durations and sizes in both widths, cut text, prefixed
 * elements, and the JSON tree's limits (depth, laziness) that both views rely on.
 */
import { button, h } from '../common/dom';
import { clip, clipCounted, formatDuration, formatSize } from '../common/format';
import { jsonView, MAX_DEPTH } from '../common/json';

describe('formatting', () => {
  it('writes sizes in full for the trace and compact for the sidebar', () => {
    expect(formatSize(1)).toBe('1 byte');
    expect(formatSize(512)).toBe('512 bytes');
    expect(formatSize(512, 'compact')).toBe('512 B');
    expect(formatSize(2048, 'compact')).toBe('2.0 kB');
    expect(formatSize(111_565)).toBe('111.6 kB');
    expect(formatSize(111_565, 'compact')).toBe('112 kB');
    expect(formatSize(1_500_000)).toBe('1.5 MB');
    expect(formatSize(3_400_000_000, 'compact')).toBe('3.4 GB');
    expect(formatSize(null)).toBe('');
    expect(formatSize(-1)).toBe('');
  });

  it('writes durations in full for the trace and compact for the sidebar', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1234)).toBe('1.23 s');
    expect(formatDuration(1234, 'compact')).toBe('1.2 s');
    expect(formatDuration(185_000)).toBe('3 min 5 s');
    expect(formatDuration(119_600, 'compact')).toBe('2 min 0 s');
    expect(formatDuration(null)).toBe('');
  });

  it('cuts names with an ellipsis and long texts with a count of what was left out', () => {
    expect(clip('abcdef', 6)).toBe('abcdef');
    expect(clip('abcdefgh', 6)).toBe('abcdef…');
    expect(clipCounted('a'.repeat(1010), 10)).toBe(`${'a'.repeat(10)}… (1,000 more characters)`);
    expect(clipCounted('short')).toBe('short');
  });
});

describe('elements', () => {
  it("take the trace's prefix, or the sidebar's, and their text as text", () => {
    const node = h('span', 'call-name  muted', '<b>x</b>');
    expect(node.className).toBe('jp-codemode-call-name jp-codemode-muted');
    expect(node.textContent).toBe('<b>x</b>');
    expect(node.children.length).toBe(0);
    const clicks: string[] = [];
    const pressed = button('Go', 'insert', '', () => clicks.push('go'), 'jp-codemode-sidebar-');
    expect(pressed.className).toBe('jp-codemode-sidebar-button jp-codemode-sidebar-insert');
    expect(pressed.type).toBe('button');
    expect(pressed.hasAttribute('title')).toBe(false);
    pressed.click();
    expect(clicks).toEqual(['go']);
  });
});

describe('the JSON tree', () => {
  /** Opens every closed level, level by level, as a person clicking through would. */
  function openAll(root: HTMLElement): void {
    for (let round = 0; round < 100; round++) {
      const closed = root.querySelectorAll<HTMLElement>('.jp-codemode-json-toggle[aria-expanded="false"]');
      if (!closed.length) {
        return;
      }
      closed.forEach(toggle => toggle.click());
    }
  }

  it(`opens ${MAX_DEPTH} levels and summarises what is deeper`, () => {
    let value: Record<string, unknown> = { end: true };
    for (let level = 0; level < MAX_DEPTH + 20; level++) {
      value = { text: 'x'.repeat(100), next: value };
    }
    const tree = jsonView(value);
    openAll(tree);
    expect(tree.querySelectorAll('.jp-codemode-json-toggle').length).toBe(MAX_DEPTH);
    const deep = tree.querySelectorAll('.jp-codemode-json-deep');
    expect(deep.length).toBe(1);
    expect(deep[0].textContent).toBe('{…} 2 keys (too deep to show)');
  });

  it('does not write a large closed level out as JSON to learn it is too long for one line', () => {
    const big: Record<string, number> = {};
    for (let i = 0; i < 10_000; i++) {
      big[`key ${i}`] = i;
    }
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      const tree = jsonView({ big, small: { a: 1 } });
      expect(tree.textContent).toBe('{…} 2 keysbig: {…} 10,000 keyssmall: {"a":1}');
      expect(stringify.mock.calls.some(call => call[0] === big)).toBe(false);
    } finally {
      stringify.mockRestore();
    }
  });

  it('starts closed when asked, and builds a level only when it is opened', () => {
    const tree = jsonView({ a: 'x'.repeat(100) }, false);
    expect(tree.querySelector('.jp-codemode-json-children')).toBeNull();
    openAll(tree);
    expect(tree.querySelector('.jp-codemode-json-key')!.textContent).toBe('a');
  });
});
