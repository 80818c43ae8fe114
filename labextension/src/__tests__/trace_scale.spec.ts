/**
 * A record of 10,000 calls: only the rows in view exist, building and updating the view is quick,
 * scrolling builds the rows at the new position, and a live update keeps the scroll position.
 */

import { TraceView } from '../trace';
import { MAX_VISIBLE_ROWS, OVERSCAN, ROW_HEIGHT } from '../trace/calls';
import { all, fixture, one, rowLabel, rows } from './helpers';

const CALLS = 10000;

/** A record of `n` calls made of the real calls in the parallel fixture, numbered 1..n. */
function bigTrace(n: number, status = 'ok'): { data: any; metadata: any } {
  const { data, metadata } = fixture('parallel');
  const calls = data.tool_calls;
  const meta = metadata.tool_calls;
  data.status = status;
  data.tool_calls = [];
  metadata.tool_calls = [];
  for (let i = 0; i < n; i++) {
    data.tool_calls.push({ ...calls[i % 3], seq: i + 1 });
    metadata.tool_calls.push({ ...meta[i % 3], id: `call${i}` });
  }
  return { data, metadata };
}

function timed(action: () => void): number {
  const start = performance.now();
  action();
  return performance.now() - start;
}

function log(text: string): void {
  // eslint-disable-next-line no-console
  console.log(text);
}

describe('10,000 calls', () => {
  it('build and update quickly with only the visible rows in the DOM', () => {
    const { data, metadata } = bigTrace(CALLS);
    let view: TraceView | null = null;
    const first = timed(() => {
      view = new TraceView();
      document.body.appendChild(view.node);
      view.update(data, metadata);
    });
    const v = view as unknown as TraceView;
    const grown = bigTrace(CALLS + 1, 'running');
    const update = timed(() => v.update(grown.data, grown.metadata));
    const same = timed(() => v.update(grown.data, grown.metadata));
    log(
      `10,000 calls: first render ${first.toFixed(1)} ms, update to 10,001 calls ` +
        `${update.toFixed(1)} ms, update with the same record ${same.toFixed(1)} ms`
    );
    expect(first).toBeLessThan(1000);
    expect(update).toBeLessThan(1000);
    expect(same).toBeLessThan(1000);
    expect(rows(v).length).toBeLessThanOrEqual(MAX_VISIBLE_ROWS + 2 * OVERSCAN);
    expect(rowLabel(rows(v)[0])).toBe('#1 get_weather(city="Oslo", unit="celsius")');
    expect(one(v.node, 'calls-count').textContent).toBe('10,001 tool calls');
    expect(one(v.node, 'calls-spacer').style.height).toBe(`${(CALLS + 1) * ROW_HEIGHT}px`);
  });

  it('scroll to any position, and keep it across live updates', () => {
    const { data, metadata } = bigTrace(CALLS, 'running');
    const view = new TraceView();
    document.body.appendChild(view.node);
    view.update(data, metadata);
    const viewport = one(view.node, 'calls-viewport');
    const scroll = timed(() => {
      viewport.scrollTop = 5000 * ROW_HEIGHT;
      viewport.dispatchEvent(new Event('scroll'));
    });
    log(`10,000 calls: scroll to the middle ${scroll.toFixed(1)} ms`);
    expect(scroll).toBeLessThan(100);
    const seqs = rows(view).map(r => Number(one(r, 'call-seq').textContent!.slice(1)));
    expect(seqs).toContain(5001);
    expect(seqs.length).toBeLessThanOrEqual(MAX_VISIBLE_ROWS + 2 * OVERSCAN);
    rows(view).find(r => one(r, 'call-seq').textContent === '#5005')!.click();

    const grown = bigTrace(CALLS + 50, 'running');
    view.update(grown.data, grown.metadata);
    expect(viewport.scrollTop).toBe(5000 * ROW_HEIGHT);
    expect(rows(view).map(r => one(r, 'call-seq').textContent)).toContain('#5005');
    expect(one(view.node, 'call-detail').textContent).toContain('#5005');
  });

  it('follow the end of a live list that was scrolled to its end', () => {
    const { data, metadata } = bigTrace(100, 'running');
    const view = new TraceView();
    document.body.appendChild(view.node);
    view.update(data, metadata);
    const viewport = one(view.node, 'calls-viewport');
    viewport.scrollTop = 100 * ROW_HEIGHT - MAX_VISIBLE_ROWS * ROW_HEIGHT;
    viewport.dispatchEvent(new Event('scroll'));
    const grown = bigTrace(120, 'running');
    view.update(grown.data, grown.metadata);
    expect(rows(view).map(r => one(r, 'call-seq').textContent)).toContain('#120');
  });

  it('filter quickly', () => {
    const { data, metadata } = bigTrace(CALLS);
    const view = new TraceView();
    document.body.appendChild(view.node);
    view.update(data, metadata);
    const input = one(view.node, 'calls-filter-tool') as HTMLInputElement;
    const elapsed = timed(() => {
      input.value = 'read_file';
      input.dispatchEvent(new Event('input'));
    });
    log(`10,000 calls: filter by tool ${elapsed.toFixed(1)} ms`);
    expect(elapsed).toBeLessThan(500);
    expect(one(view.node, 'calls-count').textContent).toBe('3,333 of 10,000 tool calls');
    expect(all(view.node, 'call-row').every(r => r.textContent!.includes('read_file'))).toBe(true);
  });
});
