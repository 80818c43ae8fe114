/**
 * The trace view on real records from the example notebooks: what a user sees in each, the call
 * order, the value, the error in context, the filter, opening calls, copying, artifacts, and the
 * live view growing in place.
 */

import { TraceView } from '../trace';
import {
  FIXTURE_NAMES,
  all,
  fixture,
  one,
  rowLabel,
  rows,
  settle,
  show
} from './helpers';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('each fixture', () => {
  it.each(FIXTURE_NAMES)('%s shows its status, call count and duration', name => {
    const { data, metadata } = fixture(name);
    const view = show(data, metadata);
    const header = one(view.node, 'header');
    expect(one(header, 'title').textContent).toBe('codemode');
    expect(one(header, 'badge').textContent).toContain(data.status);
    const count = data.tool_calls.length;
    expect(one(header, 'summary').textContent).toContain(
      `${count} tool call${count === 1 ? '' : 's'}`
    );
    expect(one(header, 'summary').textContent).toMatch(/\d+(\.\d+)? (ms|s)/);
    expect(rows(view)).toHaveLength(count);
    expect(one(view.node, 'notice').hidden).toBe(true);
  });
});

describe('calls', () => {
  it('are listed with seq, tool, arguments, server, status and duration', () => {
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    const [first, second] = rows(view);
    expect(rowLabel(first)).toBe('#1 get_weather(city="Oslo", unit="celsius")');
    expect(one(first, 'call-server').textContent).toBe('weather');
    expect(one(first, 'call-status').textContent).toBe('✓ ok');
    expect(one(first, 'call-duration').textContent).toBe('7 ms');
    expect(rowLabel(second)).toBe('#2 read_file(path="missing.txt")');
    expect(one(second, 'call-status').textContent).toBe('✗ tool_error');
    expect(one(second, 'badge').classList).toContain('jp-codemode-badge-failed');
  });

  it('are shown in seq order when the record lists them out of order', () => {
    const { data, metadata } = fixture('parallel');
    data.tool_calls.reverse();
    metadata.tool_calls.reverse(); // the metadata follows the data's index order
    const view = show(data, metadata);
    expect(rows(view).map(r => one(r, 'call-seq').textContent)).toEqual(['#1', '#2', '#3']);
    // Each call keeps its own timing: read_file took 5.3 ms.
    expect(one(rows(view)[1], 'call-duration').textContent).toBe('5 ms');
  });

  it('without a seq come last, in record order', () => {
    const { data, metadata } = fixture('parallel');
    delete data.tool_calls[0].seq;
    const view = show(data, metadata);
    expect(rows(view).map(rowLabel)).toEqual([
      '#2 read_file(path="missing.txt")',
      '#3 get_weather(city="Lima", unit="celsius")',
      ' get_weather(city="Oslo", unit="celsius")'
    ]);
  });

  it('open to their arguments and result, and close again', () => {
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    const row = rows(view)[0];
    row.click();
    expect(rows(view)[0].getAttribute('aria-expanded')).toBe('true');
    const detail = one(view.node, 'call-detail');
    expect(one(detail, 'call-detail-name').textContent).toBe('get_weather');
    const trees = all(detail, 'json');
    expect(trees[0].textContent).toContain('city: "Oslo"');
    // The structured content as a tree, without the same data again as text.
    const result = one(detail, 'result');
    expect(result.textContent).toContain('temperature: 6.1');
    expect(result.textContent).not.toContain('\\n');
    rows(view)[0].click();
    expect(all(view.node, 'call-detail')).toHaveLength(0);
    expect(rows(view)[0].getAttribute('aria-expanded')).toBe('false');
  });

  it('open with the keyboard and close with the close button', () => {
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    rows(view)[1].dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    const detail = one(view.node, 'call-detail');
    expect(one(detail, 'result').classList).toContain('jp-codemode-result-error');
    expect(one(detail, 'result').textContent).toContain("No such file: 'missing.txt'");
    one(detail, 'close').click();
    expect(all(view.node, 'call-detail')).toHaveLength(0);
  });

  it('several can be open, shown in program order', () => {
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    rows(view)[2].click();
    rows(view)[0].click();
    expect(all(view.node, 'call-detail').map(d => one(d, 'call-seq').textContent)).toEqual([
      '#1',
      '#3'
    ]);
  });

  it('show the call error of invalid arguments', () => {
    const { data, metadata } = fixture('invalid_arguments');
    const view = show(data, metadata);
    rows(view)[0].click();
    expect(one(view.node, 'call-error').textContent).toBe(
      "get_weather(): argument unit must be one of 'celsius', 'fahrenheit'; got 'kelvin'"
    );
    expect(one(view.node, 'stdout').textContent).toContain('got \'kelvin\'');
  });

  it('show rows of a query result as a table', () => {
    const { data, metadata } = fixture('table_artifacts');
    const view = show(data, metadata);
    rows(view)[0].click();
    const table = one(one(view.node, 'result'), 'table');
    const firstRow = Array.from(table.querySelectorAll('tbody tr')[0].children).map(
      c => c.textContent
    );
    expect(firstRow).toEqual(['Sydney', '22.1', '111.5']);
  });

  it('show a list of records as a table with a header', () => {
    const { data, metadata } = fixture('quickstart');
    data.tool_calls[0].result = {
      content: [{ type: 'text', text: '[{"city": "Oslo", "t": 6.1}, {"city": "Lima", "t": 17.9}]' }],
      isError: false
    };
    const view = show(data, metadata);
    rows(view)[0].click();
    const table = one(one(view.node, 'result'), 'table');
    expect(Array.from(table.querySelectorAll('th')).map(th => th.textContent)).toEqual([
      'city',
      't'
    ]);
    expect(table.querySelectorAll('tbody tr')).toHaveLength(2);
  });

  it('show plain text results as text', () => {
    const { data, metadata } = fixture('quickstart');
    const view = show(data, metadata);
    rows(view)[0].click();
    expect(one(one(view.node, 'result'), 'pre').textContent).toBe(
      'New York\nLos Angeles\nChicago\nMiami\nSeattle\n'
    );
  });

  it('show raster images inline and other image types as a note', () => {
    const { data, metadata } = fixture('quickstart');
    data.tool_calls[0].result = {
      content: [
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'image', data: btoa('<svg xmlns="http://www.w3.org/2000/svg"/>'), mimeType: 'image/svg+xml' },
        { type: 'image', data: 'not base64!', mimeType: 'image/png' }
      ],
      isError: false
    };
    const view = show(data, metadata);
    rows(view)[0].click();
    const images = view.node.querySelectorAll('img');
    expect(images).toHaveLength(1);
    expect(images[0].getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    const notes = all(one(view.node, 'result'), 'muted').map(n => n.textContent);
    expect(notes).toEqual([
      'image (image/svg+xml), not shown inline',
      'image (image/png), not shown inline'
    ]);
  });

  it('show progress as a bar', () => {
    const { data, metadata } = fixture('parallel');
    data.status = 'running';
    data.tool_calls[0].status = 'running';
    data.tool_calls[0].progress = { progress: 3, total: 4, message: 'fetching' };
    const view = show(data, metadata);
    const bar = one(rows(view)[0], 'progress');
    expect(one(bar, 'progress-fill').style.width).toBe('75.0%');
    expect(bar.title).toBe('3 of 4: fetching');
    rows(view)[0].click();
    expect(one(view.node, 'call-progress').textContent).toContain('3 of 4: fetching');
    // Without a total the bar is indeterminate; a finished call has none.
    data.tool_calls[0].progress = { progress: 7 };
    view.update(data, metadata);
    expect(one(rows(view)[0], 'progress').classList).toContain(
      'jp-codemode-progress-indeterminate'
    );
    data.tool_calls[0].status = 'ok';
    view.update(data, metadata);
    expect(all(view.node, 'progress')).toHaveLength(0);
  });

  it('show an artifact-stored result as its preview with a link to the artifact', () => {
    const { data, metadata } = fixture('artifact_result');
    const openArtifact = jest.fn();
    const view = show(data, metadata, { openArtifact });
    rows(view)[0].click();
    const detail = one(view.node, 'call-detail');
    expect(one(detail, 'stored').textContent).toContain('stored as an artifact');
    expect(one(detail, 'result').textContent).toContain('preview of 111.6 kB');
    one(detail, 'artifact-link').click();
    expect(openArtifact).toHaveBeenCalledWith({ id: '6dd100dc13b5' });
  });
});

describe('filter', () => {
  it('by tool text and by status', () => {
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    const input = one(view.node, 'calls-filter-tool') as HTMLInputElement;
    const select = one(view.node, 'calls-filter-status') as HTMLSelectElement;
    expect(Array.from(select.options).map(o => o.textContent)).toEqual([
      'all statuses',
      'ok (2)',
      'tool_error (1)'
    ]);
    input.value = 'READ';
    input.dispatchEvent(new Event('input'));
    expect(rows(view).map(rowLabel)).toEqual(['#2 read_file(path="missing.txt")']);
    expect(one(view.node, 'calls-count').textContent).toBe('1 of 3 tool calls');
    input.value = 'weather.';
    input.dispatchEvent(new Event('input'));
    expect(rows(view)).toHaveLength(2);
    input.value = '';
    input.dispatchEvent(new Event('input'));
    select.value = 'tool_error';
    select.dispatchEvent(new Event('change'));
    expect(rows(view).map(r => one(r, 'call-seq').textContent)).toEqual(['#2']);
    input.value = 'get_weather';
    input.dispatchEvent(new Event('input'));
    expect(rows(view)).toHaveLength(0);
    expect(one(view.node, 'calls-empty').hidden).toBe(false);
  });

  it('hides the details of calls it filters out, and shows them again', () => {
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    rows(view)[0].click();
    const select = one(view.node, 'calls-filter-status') as HTMLSelectElement;
    select.value = 'tool_error';
    select.dispatchEvent(new Event('change'));
    expect(all(view.node, 'call-detail')).toHaveLength(0);
    select.value = '';
    select.dispatchEvent(new Event('change'));
    expect(all(view.node, 'call-detail')).toHaveLength(1);
  });
});

describe('copy arguments', () => {
  const original = Object.getOwnPropertyDescriptor(navigator, 'clipboard');
  afterEach(() => {
    if (original) {
      Object.defineProperty(navigator, 'clipboard', original);
    } else {
      delete (navigator as any).clipboard;
    }
  });

  function setClipboard(value: unknown): void {
    Object.defineProperty(navigator, 'clipboard', { value, configurable: true });
  }

  it('writes the arguments as JSON', async () => {
    const writeText = jest.fn().mockResolvedValue(undefined);
    setClipboard({ writeText });
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    rows(view)[0].click();
    one(view.node, 'copy').click();
    await settle();
    expect(writeText).toHaveBeenCalledTimes(1);
    expect(JSON.parse(writeText.mock.calls[0][0])).toEqual({ city: 'Oslo', unit: 'celsius' });
    expect(one(view.node, 'copy-note').textContent).toBe('copied');
  });

  it('says so when there is no clipboard or it refuses', async () => {
    setClipboard(undefined);
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    rows(view)[0].click();
    one(view.node, 'copy').click();
    await settle();
    expect(one(view.node, 'copy-note').textContent).toContain('no clipboard');
    setClipboard({ writeText: jest.fn().mockRejectedValue(new Error('denied')) });
    one(view.node, 'copy').click();
    await settle();
    expect(one(view.node, 'copy-note').textContent).toContain('could not copy');
  });
});

describe('value', () => {
  it('json as a tree', () => {
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    const value = one(view.node, 'value');
    expect(one(value, 'json-toggle').textContent).toBe('[…] 3 items');
    expect(all(value, 'json-item').map(i => i.textContent)).toEqual(['6.1', '"ToolError"', '17.9']);
  });

  it('a tree opens and closes, and builds deeper levels only when opened', () => {
    const { data, metadata } = fixture('parallel');
    data.value = { kind: 'json', data: { outer: { inner: 'x'.repeat(100), more: [1, 2, 3] } } };
    const view = show(data, metadata);
    const value = one(view.node, 'value');
    const toggles = all(value, 'json-toggle');
    expect(toggles.map(t => t.textContent)).toEqual(['{…} 1 key', '{…} 2 keys']);
    expect(value.textContent).not.toContain('xxxx');
    toggles[1].click();
    expect(value.textContent).toContain('x'.repeat(100));
    expect(toggles[1].getAttribute('aria-expanded')).toBe('true');
    toggles[1].click();
    expect(one(toggles[1].parentElement!, 'json-children').hidden).toBe(true);
  });

  it('a table with its columns', () => {
    const { data, metadata } = fixture('table_artifacts');
    const view = show(data, metadata);
    const value = one(view.node, 'value');
    expect(Array.from(value.querySelectorAll('th')).map(th => th.textContent)).toEqual([
      'city',
      'mean_c',
      'rain_mm'
    ]);
    expect(value.querySelectorAll('tbody tr')).toHaveLength(3);
    expect(value.querySelector('tbody td')!.textContent).toBe('Sydney');
    expect(value.textContent).toContain('dataframe: 3 rows, 3 columns');
  });

  it('a table with more rows than were sent says so', () => {
    const { data, metadata } = fixture('table_artifacts');
    data.value.row_count = 200;
    const view = show(data, metadata);
    expect(one(view.node, 'value').textContent).toContain('197 more rows not sent');
  });

  it('text as text', () => {
    const { data, metadata } = fixture('text_value');
    const view = show(data, metadata);
    expect(one(one(view.node, 'value'), 'pre').textContent).toBe('Warm, humid, sunny');
  });

  it('an image, a repr and bytes', () => {
    const { data, metadata } = fixture('text_value');
    data.value = { kind: 'image', mime_type: 'image/png', data: PNG };
    const view = show(data, metadata);
    expect(view.node.querySelector('img')!.getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    view.update({ ...data, value: { kind: 'repr', repr: '<Foo object>', type: 'Foo' } }, metadata);
    expect(one(view.node, 'value').textContent).toBe('Foo<Foo object>');
    view.update({ ...data, value: { kind: 'bytes', data: 'AAEC', size: 3 } }, metadata);
    expect(one(view.node, 'value').textContent).toBe('bytes: 3 bytes');
    expect(view.node.querySelector('img')).toBeNull();
  });

  it('a json null is not shown', () => {
    const { data, metadata } = fixture('invalid_arguments');
    const view = show(data, metadata);
    expect(one(view.node, 'value-section').hidden).toBe(true);
  });
});

describe('error', () => {
  it('shows its line in context from the program', () => {
    const { data, metadata } = fixture('error');
    const view = show(data, metadata);
    const error = one(view.node, 'error');
    expect(one(error, 'error-head').textContent).toBe(
      'line 3: ZeroDivisionError: float division by zero'
    );
    const lines = all(error, 'code-line');
    expect(lines.map(l => one(l, 'line-number').textContent)).toEqual(['1', '2', '3']);
    const failing = all(error, 'code-line-failing');
    expect(failing).toHaveLength(1);
    expect(one(failing[0], 'line-text').textContent).toBe('average / (len(readings) - 2)');
    expect(one(lines[0], 'line-text').textContent).toContain('readings = [get_weather(');
    const traceback = one(error, 'traceback') as HTMLDetailsElement;
    expect(traceback.open).toBe(false);
    expect(traceback.textContent).toContain('ZeroDivisionError: float division by zero');
  });

  it('shows two lines either side of the failing one', () => {
    const { data, metadata } = fixture('error');
    data.code = ['a = 1', 'b = 2', 'c = 3', 'd = 4', 'e = 5', 'f = 6', 'g = 7'].join('\n');
    data.error.line = 4;
    data.error.source_line = 'd = 4';
    const view = show(data, metadata);
    expect(all(view.node, 'line-number').map(n => n.textContent)).toEqual(['2', '3', '4', '5', '6']);
    expect(one(view.node, 'code-line-failing').textContent).toBe('4d = 4');
  });

  it('shows the recorded source line when the record has no code', () => {
    const { data, metadata } = fixture('error');
    delete data.code;
    const view = show(data, metadata);
    const lines = all(view.node, 'code-line');
    expect(lines).toHaveLength(1);
    expect(lines[0].textContent).toBe('3average / (len(readings) - 2)');
  });

  it('falls back to the source line when the code does not match it', () => {
    const { data, metadata } = fixture('error');
    data.code = 'something else\nentirely\nhere';
    const view = show(data, metadata);
    expect(all(view.node, 'code-line').map(l => l.textContent)).toEqual([
      '3average / (len(readings) - 2)'
    ]);
  });

  it('of a timeout has no line and no calls', () => {
    const { data, metadata } = fixture('timeout');
    const view = show(data, metadata);
    expect(one(view.node, 'badge').textContent).toBe('✗ timeout');
    expect(one(view.node, 'error-head').textContent).toBe(
      'TimeoutError: the program did not finish within 2 s and was stopped; output so far is kept'
    );
    expect(all(view.node, 'code-line')).toHaveLength(0);
    expect(one(view.node, 'calls-section').hidden).toBe(true);
    expect(one(view.node, 'summary').textContent).toBe('2.01 s · 0 tool calls');
  });
});

describe('output and artifacts', () => {
  it('stdout starts folded (the cell printed it already), its title saying how long it is', () => {
    const { data, metadata } = fixture('quickstart');
    const view = show(data, metadata);
    const stream = one(view.node, 'stream') as HTMLDetailsElement;
    expect(stream.open).toBe(false);
    expect(one(stream, 'summary').textContent).toBe('stdout (5 lines)');
    expect(one(stream, 'pre').textContent).toBe(data.stdout);
  });

  it('long stderr starts folded', () => {
    const { data, metadata } = fixture('quickstart');
    data.stderr = Array.from({ length: 50 }, (_, i) => `warning ${i}`).join('\n');
    const view = show(data, metadata);
    const stream = one(one(view.node, 'stderr'), 'stream') as HTMLDetailsElement;
    expect(stream.open).toBe(false);
    expect(one(stream, 'summary').textContent).toBe('stderr (50 lines)');
  });

  it('artifacts link to the sidebar with their id and name', () => {
    const { data, metadata } = fixture('table_artifacts');
    const openArtifact = jest.fn();
    const view = show(data, metadata, { openArtifact });
    const links = all(view.node, 'artifact-link');
    expect(links.map(l => l.textContent)).toEqual(['city averages', 'averages chart']);
    expect(all(view.node, 'artifact')[0].textContent).toBe(
      'city averages text/csv, 333 bytes mean temperature and total rain per city'
    );
    links[1].click();
    expect(openArtifact).toHaveBeenCalledWith({ id: 'f6cceb77203c', name: 'averages chart' });
  });

  it('artifact links are disabled without a hook, and work without metadata', () => {
    const { data } = fixture('table_artifacts');
    const view = show(data);
    const link = all(view.node, 'artifact-link')[0] as HTMLButtonElement;
    expect(link.disabled).toBe(true);
    const openArtifact = jest.fn();
    const hooked = show(data, undefined, { openArtifact });
    all(hooked.node, 'artifact-link')[0].click();
    expect(openArtifact).toHaveBeenCalledWith({ id: undefined, name: 'city averages' });
  });

  it('calls still running when the program ended are listed after the run only', () => {
    const { data, metadata } = fixture('timeout');
    data.pending_calls = [{ server: 'weather', tool: 'get_weather', arguments: { city: 'Oslo' } }];
    const view = show(data, metadata);
    expect(one(view.node, 'pending').textContent).toBe(
      'still running when the program endedget_weather(city="Oslo") · weather'
    );
    view.update({ ...data, status: 'running' }, metadata);
    expect(one(view.node, 'pending').hidden).toBe(true);
  });

  it('a replayed record says so', () => {
    const { data, metadata } = fixture('parallel');
    data.replayed = true;
    const view = show(data, metadata);
    expect(one(view.node, 'replayed').textContent).toBe(
      'replayed from the record: no server was called'
    );
  });
});

describe('nodes of a Ray cluster', () => {
  it('a run a lost node moved names both nodes, the full ids and the reason in the title', () => {
    const { data, metadata } = fixture('moved');
    const view = show(data, metadata);
    const nodes = one(one(view.node, 'header'), 'nodes');
    expect(nodes.textContent).toBe('moved: 3f9a0c2b (lost) → b62e17d0');
    expect(nodes.title).toContain(
      'node 3f9a0c2be81d44a6b07e5c19d2f8a6e3b4c5d6e7f8091a2b3c4d5e6f: lost: ActorDiedError'
    );
    expect(nodes.title).toContain('node b62e17d0c4a9f35e8d1b2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c: finished');
    expect(rows(view).map(rowLabel)).toEqual(['#1 count(label="lost-first")', '#2 count(label="lost-second")']);
  });

  it('a run on one node names it; a run on this machine names none', () => {
    const { data, metadata } = fixture('moved');
    metadata.nodes = metadata.nodes.slice(1);
    expect(one(show(data, metadata).node, 'nodes').textContent).toBe('on node b62e17d0');
    const local = fixture('parallel');
    expect(all(show(local.data, local.metadata).node, 'nodes')).toEqual([]);
  });

  it('edited nodes: entries without an id are skipped, odd outcomes shown by their first word', () => {
    const { data, metadata } = fixture('moved');
    metadata.nodes = [
      'junk',
      { outcome: 'finished' },
      { node: 'cafe0123ffff', outcome: 'lost:' },
      { node: 'beef4567', outcome: 42 },
      { node: '\u202edcba9876', outcome: 'finished' }
    ];
    const nodes = one(show(data, metadata).node, 'nodes');
    expect(nodes.textContent).toBe('moved: cafe0123 (lost) → beef4567 (42) → ⟨U+202E⟩dcba987');
  });
});

describe('live view', () => {
  function running(calls: number, done: number): { data: any; metadata: any } {
    const { data, metadata } = fixture('parallel');
    data.status = 'running';
    data.value = null;
    data.tool_calls = data.tool_calls.slice(0, calls);
    metadata.tool_calls = metadata.tool_calls.slice(0, calls);
    metadata.duration_ms = 1500;
    for (let i = done; i < calls; i++) {
      data.tool_calls[i].status = 'running';
      delete data.tool_calls[i].result;
      metadata.tool_calls[i].duration_ms = null;
    }
    return { data, metadata };
  }

  it('shows elapsed time (of the timeout) and the calls done so far', () => {
    const { data, metadata } = running(2, 1);
    const view = show(data, metadata);
    expect(one(view.node, 'badge').textContent).toBe('… running');
    expect(one(view.node, 'summary').textContent).toBe('1.50 s of 30 s · 2 calls: 1 done, 1 running');
    data.timeout_s = null;
    data.tool_calls = [];
    view.update(data, metadata);
    expect(one(view.node, 'summary').textContent).toBe('1.50 s so far · no call yet');
  });

  it('grows in place, keeping an open call, the filter and the result that arrives', () => {
    let state = running(1, 0);
    const view = show(state.data, state.metadata);
    rows(view)[0].click();
    expect(one(view.node, 'call-detail').textContent).toContain('no result yet');
    const input = one(view.node, 'calls-filter-tool') as HTMLInputElement;
    input.value = 'weather';
    input.dispatchEvent(new Event('input'));

    state = running(2, 0);
    view.update(state.data, state.metadata);
    const detail = one(view.node, 'call-detail');
    expect(rows(view)[0].getAttribute('aria-expanded')).toBe('true');
    expect(input.value).toBe('weather');
    expect(rows(view).map(r => one(r, 'call-seq').textContent)).toEqual(['#1']);

    state = running(3, 0);
    view.update(state.data, state.metadata);
    expect(one(view.node, 'call-detail')).toBe(detail); // unchanged call: the same element
    expect(rows(view).map(r => one(r, 'call-seq').textContent)).toEqual(['#1', '#3']);

    state = running(3, 3);
    view.update(state.data, state.metadata);
    expect(one(view.node, 'call-detail')).not.toBe(detail);
    expect(one(one(view.node, 'call-detail'), 'result').textContent).toContain('temperature: 6.1');

    const final = fixture('parallel');
    view.update(final.data, final.metadata);
    expect(one(view.node, 'badge').textContent).toBe('✓ ok');
    expect(all(view.node, 'call-detail')).toHaveLength(1);
    expect(one(view.node, 'value').textContent).toContain('ToolError');
  });

  it('keeps an open tree node inside a value that did not change', () => {
    const { data, metadata } = fixture('parallel');
    data.value = { kind: 'json', data: { a: { b: 'x'.repeat(100) } } };
    const view = show(data, metadata);
    all(view.node, 'json-toggle')[1].click();
    view.update(data, metadata);
    expect(one(view.node, 'value').textContent).toContain('x'.repeat(100));
  });
});

describe('malformed records', () => {
  const cases: [string, unknown, unknown][] = [
    ['undefined', undefined, undefined],
    ['null', null, null],
    ['a string', 'codemode', 'x'],
    ['a list', [1, 2], [3]],
    ['calls not a list', { status: 'ok', tool_calls: 'many' }, { tool_calls: 7 }],
    [
      'odd calls',
      {
        status: 5,
        tool_calls: [null, 1, 'x', { seq: 'a', arguments: [1, 2], result: 'text', warnings: 'w' }],
        error: 'boom',
        value: 5,
        artifacts: [null, { name: 7, size: 'big' }],
        pending_calls: 'none',
        stdout: { a: 1 }
      },
      { tool_calls: [null, { duration_ms: 'slow' }], artifacts: 'none', protections: 3 }
    ],
    [
      'odd values',
      { status: 'ok', value: { kind: 'table', columns: 'c', rows: [1, [2]], row_count: 'x' } },
      {}
    ],
    ['an image without data', { status: 'ok', value: { kind: 'image', data: 5 } }, {}],
    ['an unknown kind', { status: 'ok', value: { kind: 'hologram', x: 1 } }, {}],
    ['an error without fields', { status: 'error', error: {}, code: 7 }, {}],
    ['a line past the code', { status: 'error', error: { line: 99, source_line: 'x' }, code: 'a' }, {}],
    [
      'odd results',
      {
        status: 'ok',
        tool_calls: [
          { seq: 1, result: { content: 'x', structuredContent: 5 } },
          { seq: 1, result: { content: [null, 3, { type: 'resource' }, { type: 'audio', data: 1 }] } },
          { seq: 2, result: { preview: null } },
          { seq: 3, progress: { progress: 'half' } }
        ]
      },
      { tool_calls: 'x' }
    ]
  ];

  it.each(cases)('%s does not throw and shows what is there', (_, data, metadata) => {
    const view = new TraceView();
    document.body.appendChild(view.node);
    expect(() => view.update(data, metadata)).not.toThrow();
    expect(one(view.node, 'title').textContent).toBe('codemode');
    for (const row of rows(view)) {
      row.click(); // opening every call must not throw either
    }
  });

  it('a bundle with the trace inside is read too', () => {
    const { data, metadata } = fixture('parallel');
    const view = show({ 'application/vnd.codemode.trace.v1+json': data }, metadata);
    expect(rows(view)).toHaveLength(3);
  });

  it('a non-trace says it cannot be read', () => {
    const view = show(42);
    expect(one(view.node, 'notice').hidden).toBe(false);
    expect(one(view.node, 'notice').textContent).toContain('no codemode trace');
  });

  it('a disposed view ignores updates', () => {
    const { data, metadata } = fixture('parallel');
    const view = show(data, metadata);
    view.dispose();
    expect(view.isDisposed).toBe(true);
    expect(() => view.update(data, metadata)).not.toThrow();
    expect(view.node.isConnected).toBe(false);
  });
});

describe('a background run', () => {
  const trace = (status: string, notes: unknown[], extra: Record<string, unknown> = {}) => ({
    status,
    code: 'notify("x")',
    value: null,
    error: null,
    stdout: '',
    stderr: '',
    tool_calls: [],
    artifacts: [],
    timeout_s: 30,
    notes,
    ...extra
  });

  it('shows the notes the program sent, live, and its data as key=value', () => {
    const view = show(trace('running', [{ message: 'half way', data: { done: 3 } }]));
    expect(all(view.node, 'note-item').map(n => n.textContent)).toEqual(['half way · done=3']);
    const more = [{ message: 'half way', data: { done: 3 } }, { message: 'almost', data: {} }];
    view.update(trace('running', more));
    expect(all(view.node, 'note-item').map(n => n.textContent)).toEqual(['half way · done=3', 'almost']);
  });

  it('lists the last notes of many, counting the others (those dropped too)', () => {
    const notes = Array.from({ length: 25 }, (_, i) => ({ message: `step ${i}`, data: {} }));
    const view = show(trace('ok', notes, { notes_dropped: 5 }));
    const items = all(view.node, 'note-item');
    expect(items.length).toBe(20);
    expect(items[19].textContent).toBe('step 24');
    expect(one(view.node, 'notes').textContent).toContain('… 10 earlier notes');
  });

  it('shows cancelled in its own colour class, not as a failure', () => {
    const error = { type: 'Cancelled', message: 'the program was stopped by %codemode cancel after 2.0 s' };
    const view = show(trace('cancelled', [], { error }));
    const badge = one(one(view.node, 'header'), 'badge');
    expect(badge.className).toContain('jp-codemode-badge-cancelled');
    expect(badge.textContent).toBe('■ cancelled');
    expect(all(view.node, 'notes')[0].hidden).toBe(true);
  });
});
