/**
 * A call's progress, on a real record: the demo weather's get_forecast(city="Oslo", days=3) in a kernel
 * with the renderer announced, its live updates (day 1, 2, 3 of 3) and the finished trace. A running row
 * has a bar and the server's last message; the finished call keeps one line in its detail. Records edited
 * by hand are read defensively.
 */

import { progressText } from '../trace/format';
import { parseProgress } from '../trace/model';
import { TraceView } from '../trace';
import { all, fixture, one, rowLabel, rows, show } from './helpers';

interface IOutput {
  data: any;
  metadata: any;
}

/** The fixture's live updates, in the order the kernel sent them, then the finished record. */
function outputs(): { running: IOutput[]; done: IOutput } {
  const record = fixture('progress') as any;
  return { running: record.running, done: { data: record.data, metadata: record.metadata } };
}

describe('a running call that reports progress', () => {
  it('shows a bar filled to progress/total and the server message on its row', () => {
    const { running } = outputs();
    const view = show(running[0].data, running[0].metadata);
    const [row] = rows(view);
    const bar = one(row, 'progress');
    expect(one(bar, 'progress-fill').style.width).toBe('33.3%');
    expect(bar.getAttribute('role')).toBe('progressbar');
    expect(bar.getAttribute('aria-valuenow')).toBe('33');
    expect(bar.title).toBe('1 of 3: Oslo: day 1 of 3');
    // The message follows the arguments in the name cell; the arguments give it room first.
    expect(one(row, 'call-name').classList).toContain('jp-codemode-call-name-progress');
    expect(one(row, 'call-progress-message').textContent).toBe('Oslo: day 1 of 3');
    expect(one(row, 'call-args').textContent).toBe('(city="Oslo", days=3, delay_seconds=0.5)');
    expect(one(row, 'call-status').textContent).toBe('… running');
  });

  it('follows each update in place, the open detail too', () => {
    const { running } = outputs();
    const view = show(running[0].data, running[0].metadata);
    rows(view)[0].click();
    expect(one(view.node, 'call-progress').textContent).toBe(' 1 of 3: Oslo: day 1 of 3');
    const seen: string[] = [];
    for (const update of running.slice(1)) {
      view.update(update.data, update.metadata);
      seen.push(one(rows(view)[0], 'call-progress-message').textContent ?? '');
    }
    expect(seen).toEqual(['Oslo: day 2 of 3', 'Oslo: day 3 of 3']);
    expect(one(rows(view)[0], 'progress-fill').style.width).toBe('100.0%');
    expect(one(view.node, 'call-progress').textContent).toBe(' 3 of 3: Oslo: day 3 of 3');
    expect(rows(view)[0].getAttribute('aria-expanded')).toBe('true'); // still open
  });

  it('says in the header how long it has run, and how many calls are done', () => {
    const { running } = outputs();
    const view = show(running[0].data, running[0].metadata);
    expect(one(view.node, 'summary').textContent).toMatch(
      /^\d+ ms of 30 s · 1 call: 0 done, 1 running$/
    );
  });

  it('is animated when the server gives no total, and says the count when it gives nothing else', () => {
    const { running } = outputs();
    const { data, metadata } = running[1];
    data.tool_calls[0].progress = { count: 4, progress: 40, total: null, message: null };
    const view = show(data, metadata);
    const bar = one(rows(view)[0], 'progress');
    expect(bar.classList).toContain('jp-codemode-progress-indeterminate');
    expect(bar.hasAttribute('aria-valuenow')).toBe(false);
    expect(one(rows(view)[0], 'call-progress-message').textContent).toBe('40');
    data.tool_calls[0].progress = { count: 4 };
    view.update(data, metadata);
    expect(one(rows(view)[0], 'call-progress-message').textContent).toBe('4 updates');
  });
});

describe('a finished call that reported progress', () => {
  it('has no bar on its row and one line in its detail', () => {
    const { done } = outputs();
    const view = show(done.data, done.metadata);
    const [forecast, weather] = rows(view);
    expect(all(view.node, 'progress')).toHaveLength(0);
    expect(rowLabel(forecast)).toBe('#1 get_forecast(city="Oslo", days=3, delay_seconds=0.5)');
    expect(one(forecast, 'call-status').textContent).toBe('✓ ok');
    forecast.click();
    weather.click();
    const [first, second] = all(view.node, 'call-detail');
    expect(one(first, 'call-progress-summary').textContent).toBe(
      'progress: 3 updates, last: Oslo: day 3 of 3'
    );
    expect(second.querySelector('.jp-codemode-call-progress-summary')).toBeNull();
    expect(one(view.node, 'summary').textContent).toMatch(/^\d+(\.\d+)? (ms|s) · 2 tool calls$/);
  });

  it('replaces the live bar when the run ends, in the same view', () => {
    const { running, done } = outputs();
    const view = new TraceView();
    document.body.appendChild(view.node);
    view.update(running[2].data, running[2].metadata);
    rows(view)[0].click();
    view.update(done.data, done.metadata);
    expect(all(view.node, 'progress')).toHaveLength(0);
    expect(all(view.node, 'call-progress-message')).toHaveLength(0);
    expect(one(view.node, 'call-progress-summary').textContent).toContain('3 updates');
  });
});

describe('progress read from an edited record', () => {
  it('keeps what is usable and drops the rest', () => {
    expect(parseProgress({ count: 5, progress: 5, total: 5, message: 'Oslo: day 5 of 5' })).toEqual({
      count: 5,
      progress: 5,
      total: 5,
      message: 'Oslo: day 5 of 5'
    });
    expect(parseProgress({ progress: 7 })).toEqual({
      count: null,
      progress: 7,
      total: null,
      message: ''
    });
    for (const broken of [null, 'x', 3, [], {}, { count: '5', progress: 'x', total: true }]) {
      expect(parseProgress(broken)).toBeNull();
    }
    expect(parseProgress({ count: 2.5, progress: NaN, message: 'a\n  b' })).toEqual({
      count: null,
      progress: null,
      total: null,
      message: 'a b'
    });
  });

  it('reads as the kernel writes it', () => {
    // The same lines as codemode_kernel/views/render.py progress_text (tests/unit/test_render_progress.py).
    const line = (value: unknown): string => {
      const progress = parseProgress(value);
      return progress ? progressText(progress) : '';
    };
    expect(line({ count: 5, progress: 5, total: 5, message: 'Oslo: day 5 of 5' })).toBe(
      '5 updates, last: Oslo: day 5 of 5'
    );
    expect(line({ count: 1, progress: 3, total: 4, message: null })).toBe('1 update, last: 3 of 4');
    expect(line({ count: 2, progress: 2.5 })).toBe('2 updates, last: 2.5');
    expect(line({ progress: 7 })).toBe('last: 7');
    expect(line({ count: 3 })).toBe('3 updates');
    expect(line({ count: 1, message: 'x'.repeat(1000) })).toHaveLength(301);
  });

  it('shows a hostile message as text, its bidirectional controls marked', () => {
    const { running } = outputs();
    const { data, metadata } = running[0];
    data.tool_calls[0].progress = {
      count: 1,
      progress: 1,
      total: 2,
      message: '<img src=x onerror="window.__pwned=1"> safe\u202Egnp.exe'
    };
    const view = show(data, metadata);
    const message = one(rows(view)[0], 'call-progress-message');
    expect(message.querySelector('img')).toBeNull();
    expect(message.textContent).toBe('<img src=x onerror="window.__pwned=1"> safe⟨U+202E⟩gnp.exe');
    expect(one(rows(view)[0], 'progress').title).toContain('⟨U+202E⟩');
    expect((window as any).__pwned).toBeUndefined();
  });
});
