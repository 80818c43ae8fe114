/**
 * What the row layout is given to work with: each row is its own grid, so the widths of the number,
 * server and status columns come from all the calls (custom properties the stylesheet reads); a status
 * of any length keeps the filter bar narrow. (The stylesheet's layout itself is checked in JupyterLab
 * by the browser tests: rows in a notebook and in the sidebar's history.)
 */

import { TraceView } from '../trace';
import { STATUS_OPTION_CHARS } from '../trace/calls';
import { fixture, one, rows, show } from './helpers';

/** The column widths the call list hands to the stylesheet. */
function widths(view: TraceView): { seq: string; server: string; status: string } {
  const style = one(view.node, 'calls').style;
  return {
    seq: style.getPropertyValue('--jp-codemode-seq-width'),
    server: style.getPropertyValue('--jp-codemode-server-width'),
    status: style.getPropertyValue('--jp-codemode-status-width')
  };
}

/** Width in `ch` of a CSS length like `12ch`. */
function ch(length: string): number {
  expect(length).toMatch(/^\d+(\.\d+)?ch$/);
  return parseFloat(length);
}

/** A trace with one call per status, on servers with the given names. */
function traceWith(statuses: string[], servers = ['weather']): any {
  return {
    status: 'ok',
    tool_calls: statuses.map((status, i) => ({
      seq: i + 1,
      server: servers[i % servers.length],
      tool: 'get_weather',
      arguments: { city: 'Oslo' },
      status
    }))
  };
}

describe('column widths', () => {
  it('fit the longest status, so invalid_arguments shows whole and ok takes little room', () => {
    const okOnly = widths(show(traceWith(['ok', 'ok'])));
    const mixed = widths(show(traceWith(['ok', 'invalid_arguments', 'server_error'])));
    expect(ch(okOnly.status)).toBeLessThan(8);
    // The badge is "✗ invalid_arguments": its mark, a space and 17 bold letters.
    expect(ch(mixed.status)).toBeGreaterThanOrEqual('✗ invalid_arguments'.length);
    expect(ch(mixed.status)).toBeLessThan(26);
  });

  it('of a hostile status or server name are capped (the cell ellipsizes)', () => {
    const view = show(traceWith(['x'.repeat(5000)], ['s'.repeat(5000)]));
    expect(ch(widths(view).status)).toBeLessThanOrEqual(30);
    expect(ch(widths(view).server)).toBeLessThanOrEqual(17);
    // The badge still holds the word (cut at 40 characters) for its tooltip and the detail.
    expect(one(rows(view)[0], 'badge').title).toBe(`${'x'.repeat(40)}…`);
  });

  it('fit the server names and the call numbers', () => {
    const short = widths(show(traceWith(['ok'], ['db'])));
    const long = widths(show(traceWith(['ok'], ['workspace'])));
    expect(ch(short.server)).toBeLessThan(ch(long.server));
    expect(ch(long.server)).toBeGreaterThanOrEqual('workspace'.length);
    const many = widths(show(traceWith(Array(1000).fill('ok'))));
    expect(ch(many.seq)).toBeGreaterThanOrEqual('#1000'.length);
    expect(ch(many.seq)).toBeGreaterThan(ch(short.seq));
  });

  it('make room for a progress bar while a call reports progress, and follow the live run', () => {
    const view = new TraceView();
    document.body.appendChild(view.node);
    const { data, metadata } = fixture('parallel');
    const running = {
      ...data,
      status: 'running',
      tool_calls: [
        { ...data.tool_calls[0], status: 'running', result: undefined, progress: { progress: 1, total: 4 } }
      ]
    };
    view.update(running, metadata);
    const live = ch(widths(view).status);
    view.update(data, metadata);
    const done = ch(widths(view).status);
    expect(live).toBeGreaterThan(done);
    // tool_error is the longest status of the finished run.
    expect(done).toBeGreaterThanOrEqual('✗ tool_error'.length);
  });
});

describe('the status filter', () => {
  it('cuts a long status in its options, keeping the whole value and a tooltip', () => {
    const long = `denied_${'z'.repeat(300)}`;
    const view = show(traceWith(['ok', long]));
    const select = one(view.node, 'calls-filter-status') as HTMLSelectElement;
    const option = Array.from(select.options).find(o => o.value === long)!;
    expect(option.textContent).toBe(`${long.slice(0, STATUS_OPTION_CHARS)}… (1)`);
    expect(option.title.startsWith(long.slice(0, 100))).toBe(true);
    // Choosing it still filters by the whole status.
    select.value = long;
    select.dispatchEvent(new Event('change'));
    expect(rows(view)).toHaveLength(1);
    expect(one(rows(view)[0], 'badge').dataset.status).toBe(`${long.slice(0, 40)}…`);
    // Short statuses are left alone and carry no tooltip.
    const ok = Array.from(select.options).find(o => o.value === 'ok')!;
    expect(ok.textContent).toBe('ok (1)');
    expect(ok.title).toBe('');
  });
});
