/**
 * The sidebar's sections fed plain data: what a person sees and what the buttons do.
 */
import { RenderMimeRegistry, standardRendererFactories } from '@jupyterlab/rendermime';

import {
  cancelCode,
  identifierProblem,
  loadCode,
  loginCode,
  reconnectCode,
  UnsafeActionError
} from '../sidebar/actions';
import type {
  IArtifactInfo,
  IExecutorInfo,
  IExecutorNode,
  IJobInfo,
  IRun,
  IRunSummary,
  IServerInfo,
  IToolInfo
} from '../sidebar/api';
import { ArtifactsView, suggestName } from '../sidebar/artifacts';
import { jsonTree } from '../sidebar/dom';
import { ExecutorView } from '../sidebar/executor';
import { HistoryView, runLabel } from '../sidebar/history';
import { JobsView } from '../sidebar/jobs';
import { parseCsv, previewArtifact } from '../sidebar/preview';
import { ServersView } from '../sidebar/servers';
import { toolMatches, ToolsView } from '../sidebar/tools';

import { all, bytes, click, flush, text } from './sidebar-helpers';

function server(overrides: Partial<IServerInfo>): IServerInfo {
  return {
    name: 's',
    state: 'ready',
    transport: 'stdio',
    toolCount: 1,
    error: '',
    fix: '',
    signinUrl: '',
    ...overrides
  };
}

function tool(overrides: Partial<IToolInfo>): IToolInfo {
  return {
    name: 'get_weather',
    server: 'weather',
    tool: 'get-weather',
    signature: 'def get_weather(city: str) -> GetWeatherOutput:',
    doc: 'The weather in a city.\n\nArgs:\n    city: its name',
    inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'its name' } } },
    outputSchema: null,
    call: 'get_weather(city="Paris")',
    ...overrides
  };
}

function artifact(overrides: Partial<IArtifactInfo>): IArtifactInfo {
  return {
    id: 'a00000000001',
    name: 'table',
    type: 'text/csv',
    description: '',
    size: 10,
    created: '2026-11-24T05:00:00+00:00',
    executionId: '',
    ...overrides
  };
}

function run(overrides: Partial<IRunSummary>): IRunSummary {
  return {
    id: 'r1',
    kind: 'codemode',
    number: 1,
    kernelId: 'k1',
    cellId: '',
    code: 'weather = get_weather(city="Paris")\nprint(weather)',
    request: '',
    model: '',
    status: 'ok',
    toolCalls: 1,
    finished: '2026-11-24T05:00:00Z',
    durationMs: 1234,
    replayed: false,
    ...overrides
  };
}

describe('ServersView', () => {
  it('shows each server with a coloured state dot, its tool count, error and fix', () => {
    const reconnected: string[] = [];
    const view = new ServersView({ onReconnect: name => reconnected.push(name), onSignIn: () => undefined });
    view.setServers([
      server({ name: 'weather', toolCount: 2 }),
      server({ name: 'github', state: 'failed', transport: 'http', toolCount: 0, error: 'refused', fix: 'start it' }),
      server({ name: 'odd', state: 'something new' })
    ]);
    const rows = all(view.node, 'server');
    expect(rows.map(r => text(r, 'server-name'))).toEqual(['weather', 'github', 'odd']);
    expect(text(rows[0], 'server-meta')).toBe('stdio · 2 tools');
    expect(rows[0].querySelector('.jp-codemode-sidebar-dot-ready')).not.toBeNull();
    expect(rows[1].querySelector('.jp-codemode-sidebar-dot-failed')).not.toBeNull();
    expect(rows[2].querySelector('.jp-codemode-sidebar-dot-other')).not.toBeNull();
    expect(text(rows[1], 'server-error')).toBe('refused');
    expect(text(rows[1], 'server-fix')).toBe('Fix: start it');
    expect(rows[0].querySelector('.jp-codemode-sidebar-server-error')).toBeNull();
    click(rows[1].querySelector('button')!);
    expect(reconnected).toEqual(['github']);
  });

  it('says when no server is configured', () => {
    const view = new ServersView({ onReconnect: () => undefined, onSignIn: () => undefined });
    expect(view.node.textContent).toContain('No MCP servers are configured.');
  });

  it("offers a server waiting for sign-in the kernel's link, or a button asking for one", () => {
    const asked: string[] = [];
    const view = new ServersView({ onReconnect: () => undefined, onSignIn: name => asked.push(name) });
    const link = 'https://auth.example/authorize?client_id=c&state=s1';
    view.setServers([
      server({
        name: 'linear',
        state: 'signin',
        transport: 'http',
        toolCount: 0,
        signinUrl: link,
        error: 'needs sign-in',
        fix: 'run it'
      }),
      server({ name: 'notion', state: 'signin', transport: 'http', toolCount: 0, fix: 'run `codemode login notion`' }),
      server({ name: 'weather' })
    ]);
    const rows = all(view.node, 'server');
    expect(rows[0].querySelector('.jp-codemode-sidebar-dot-signin')).not.toBeNull();
    const anchor = rows[0].querySelector<HTMLAnchorElement>('a.jp-codemode-sidebar-signin-link')!;
    expect(anchor.textContent).toBe('Sign in to linear');
    expect(anchor.href).toBe(link);
    expect(anchor.target).toBe('_blank');
    expect(anchor.rel).toBe('noopener noreferrer');
    expect(rows[0].querySelector('.jp-codemode-sidebar-server-fix')).toBeNull(); // the link is the fix
    expect(rows[0].querySelector('.jp-codemode-sidebar-server-error')).toBeNull();
    expect(rows[1].querySelector('a')).toBeNull();
    expect(text(rows[1], 'server-fix')).toBe('Fix: run `codemode login notion`');
    click(rows[1].querySelector('.jp-codemode-sidebar-signin')!);
    expect(asked).toEqual(['notion']);
    expect(rows[2].querySelector('.jp-codemode-sidebar-server-signin')).toBeNull();
  });
});

function node(overrides: Partial<IExecutorNode>): IExecutorNode {
  return {
    node: 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c',
    address: '10.0.0.5',
    alive: true,
    cpus: 4,
    prepared: null,
    running: null,
    ...overrides
  };
}

function cluster(overrides: Partial<IExecutorInfo>): IExecutorInfo {
  return { backend: 'ray', address: '10.0.0.5:6379', nodes: [], running: 0, queued: 0, problem: '', ...overrides };
}

describe('ExecutorView', () => {
  it('says programs run on this machine for the local backend', () => {
    const view = new ExecutorView();
    expect(view.title.label).toBe('Executor');
    expect(view.node.textContent).toContain('says where programs run once its tools have started');
    view.setExecutor({ backend: 'local', address: '', nodes: null, running: null, queued: null, problem: '' });
    expect(text(view.node, 'executor-summary')).toBe('This machine');
    expect(all(view.node, 'node')).toEqual([]);
  });

  it('shows a Ray cluster in one line and a row per node: short id, address, CPUs, workers', () => {
    const view = new ExecutorView();
    view.setExecutor(
      cluster({
        running: 1,
        queued: 2,
        nodes: [
          node({}),
          node({ node: 'e5f6a7b8' + '1'.repeat(48), address: '10.0.0.6', cpus: 1, prepared: 1, running: 1 }),
          node({ node: '0badc0de' + '2'.repeat(48), address: '10.0.0.7', alive: false })
        ]
      })
    );
    expect(text(view.node, 'executor-summary')).toBe(
      'Ray cluster at 10.0.0.5:6379: 2 of 3 nodes alive, 1 running, 2 queued'
    );
    const rows = all(view.node, 'node');
    expect(rows.map(r => text(r, 'node-id'))).toEqual(['a1b2c3d4', 'e5f6a7b8', '0badc0de']);
    expect(rows[0].querySelector('.jp-codemode-sidebar-node-id')!.getAttribute('title')).toBe(
      'Ray node a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c'
    );
    expect(rows.map(r => text(r, 'node-address'))).toEqual(['10.0.0.5', '10.0.0.6', '10.0.0.7']);
    expect(rows.map(r => text(r, 'node-meta'))).toEqual([
      '4 CPUs · no runs yet',
      '1 CPU · 1 prepared · 1 running',
      'dead'
    ]);
    expect(rows[1].querySelector('.jp-codemode-sidebar-dot-ready')).not.toBeNull();
    expect(rows[2].querySelector('.jp-codemode-sidebar-dot-failed')).not.toBeNull();
    expect(view.node.querySelector('.jp-codemode-sidebar-executor-problem')).toBeNull();
  });

  it("says why the nodes may be out of date, and waits for a cluster's first answer", () => {
    const view = new ExecutorView();
    view.setExecutor(cluster({ nodes: null }));
    expect(text(view.node, 'executor-summary')).toBe('Ray cluster at 10.0.0.5:6379');
    expect(text(view.node, 'executor-meta')).toBe('Waiting for the cluster to answer…');
    const problem =
      'the Ray cluster at 10.0.0.5:6379 has not answered for over 5 s; the nodes shown are from before';
    view.setExecutor(cluster({ nodes: [node({ prepared: 0, running: 0 })], running: 0, problem }));
    expect(text(view.node, 'executor-problem')).toBe(problem);
    expect(text(view.node, 'executor-summary')).toBe(
      'Ray cluster at 10.0.0.5:6379: 1 of 1 node alive, 0 running, 0 queued'
    );
    expect(all(view.node, 'node').map(r => text(r, 'node-meta'))).toEqual(['4 CPUs · 0 prepared · 0 running']);
  });

  it('shows hostile addresses and problems as the characters they are', () => {
    const view = new ExecutorView();
    const markup = '<img src=x onerror="window.hacked=1">';
    view.setExecutor(cluster({ address: markup, problem: markup, nodes: [node({ address: markup })] }));
    expect(view.node.querySelector('img')).toBeNull();
    expect(text(view.node, 'executor-problem')).toBe(markup);
    expect(text(view.node, 'node-address')).toBe(markup);
  });
});

describe('ToolsView', () => {
  const tools = [
    tool({}),
    tool({ name: 'search_issues', server: 'github', tool: 'search_issues', doc: 'Search GitHub issues.' }),
    tool({ name: 'read_file', server: 'files', tool: 'read_file', doc: 'Read a file.', call: 'read_file(path="a")' })
  ];

  it('filters by name, server and docstring, every word', () => {
    expect(toolMatches(tools[0], 'weather')).toBe(true);
    expect(toolMatches(tools[1], 'GITHUB issues')).toBe(true);
    expect(toolMatches(tools[1], 'github file')).toBe(false);
    const view = new ToolsView({ onInsert: () => undefined });
    view.setTools(tools);
    expect(all(view.node, 'tool-name').map(n => n.textContent)).toEqual(['get_weather', 'search_issues', 'read_file']);
    const search = view.node.querySelector('input')!;
    search.value = 'file';
    search.dispatchEvent(new Event('input'));
    expect(all(view.node, 'tool-name').map(n => n.textContent)).toEqual(['read_file']);
    expect(text(view.node, 'count')).toBe('1 of 3 tools');
  });

  it('opens a tool to its signature, docstring and input schema, and inserts its call', async () => {
    const inserted: string[] = [];
    const view = new ToolsView({ onInsert: call => inserted.push(call) });
    document.body.appendChild(view.node);
    view.setTools(tools);
    const details = view.node.querySelector('details')!;
    details.open = true;
    details.dispatchEvent(new Event('toggle'));
    expect(text(details, 'signature')).toBe('def get_weather(city: str) -> GetWeatherOutput:');
    expect(text(details, 'doc')).toContain('Args:\n    city: its name');
    expect(text(details, 'tool-mcp-name')).toBe('MCP tool: get-weather');
    expect(details.querySelector('.jp-codemode-sidebar-json')!.textContent).toContain('{…} 2 keys');
    click(details.querySelector('.jp-codemode-sidebar-insert')!);
    expect(inserted).toEqual(['get_weather(city="Paris")']);
    // a new state keeps the open tool open and the search as typed
    view.query = 'weather';
    view.setTools([...tools]);
    expect(view.node.querySelector('details')!.open).toBe(true);
    expect(view.query).toBe('weather');
    view.node.remove();
  });
});

describe('jsonTree', () => {
  it("is the trace's tree in the sidebar's frame: closed branches are built when opened", () => {
    const long = 'x'.repeat(100);
    const tree = jsonTree({ a: { b: [long, 'two', null, true] } });
    expect(tree.classList.contains('jp-codemode-sidebar-json')).toBe(true);
    expect(tree.textContent).toContain('a: {…} 1 key');
    expect(tree.textContent).not.toContain('"two"');
    click(tree.querySelectorAll('.jp-codemode-json-toggle')[1]);
    expect(tree.textContent).toContain('b: […] 4 items');
    expect(tree.textContent).not.toContain('"two"');
    click(tree.querySelectorAll('.jp-codemode-json-toggle')[2]);
    const items = Array.from(tree.querySelectorAll('.jp-codemode-json-item')).slice(-4);
    expect(items.map(item => item.textContent)).toEqual([JSON.stringify(long), '"two"', 'null', 'true']);
  });

  it('starts closed when asked (a tool\'s schemas), and marks bidirectional controls', () => {
    const tree = jsonTree({ ['name\u202Eexe.txt']: 'x\u202Ey' }, false);
    expect(tree.textContent).toBe('{…} 1 key');
    click(tree.querySelector('.jp-codemode-json-toggle')!);
    expect(tree.querySelector('.jp-codemode-json-key')!.textContent).toBe('name⟨U+202E⟩exe.txt');
    expect(tree.querySelector('.jp-codemode-json-string')!.textContent).toBe('"x⟨U+202E⟩y"');
    expect(tree.textContent).not.toContain('\u202E');
  });
});

describe('previewArtifact', () => {
  it('shows allow-listed images from a blob: URL and SVG or HTML as text', () => {
    const png = previewArtifact(bytes('\x89PNG\r\n\x1a\n'), 'image/png');
    expect(png.node.tagName).toBe('IMG');
    expect((png.node as HTMLImageElement).src.startsWith('blob:')).toBe(true);
    png.dispose();
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    const shown = previewArtifact(bytes(svg), 'image/svg+xml');
    expect(shown.node.tagName).toBe('PRE');
    expect(shown.node.textContent).toBe(svg);
    const html = previewArtifact(bytes('<b onmouseover="x()">bold</b>'), 'text/html');
    expect(html.node.tagName).toBe('PRE');
    expect(html.node.textContent).toBe('<b onmouseover="x()">bold</b>');
  });

  it('shows JSON as a tree, and broken JSON as text', () => {
    const tree = previewArtifact(bytes('{"rows": [1, 2]}'), 'application/json');
    expect(tree.node.textContent).toContain('rows: [1,2]');
    const broken = previewArtifact(bytes('{"rows": '), 'application/json');
    expect(broken.node.textContent).toContain('Not valid JSON');
    expect(broken.node.querySelector('pre')!.textContent).toBe('{"rows": ');
  });

  it('shows CSV as a table of the first 50 rows', () => {
    const lines = ['city,temp'];
    for (let i = 0; i < 80; i++) {
      lines.push(`"Town, ${i}",${i}`);
    }
    const preview = previewArtifact(bytes(lines.join('\n')), 'text/csv; charset=utf-8');
    const table = preview.node.querySelector('table')!;
    expect(Array.from(table.querySelectorAll('th')).map(th => th.textContent)).toEqual(['city', 'temp']);
    expect(table.querySelectorAll('tbody tr').length).toBe(50);
    expect(table.querySelector('tbody td')!.textContent).toBe('Town, 0');
    expect(preview.node.textContent).toContain('The first 50 rows');
  });

  it('does not show binary data as text', () => {
    const preview = previewArtifact(new Uint8Array([0, 1, 2, 3, 255, 254, 0, 0]).buffer, 'application/octet-stream');
    expect(preview.node.textContent).toContain('Binary data');
  });
});

describe('parseCsv', () => {
  it('reads quoted fields with commas, quotes and newlines', () => {
    expect(parseCsv('a,b\r\n"x, y","say ""hi"""\n"two\nlines",3', 10)).toEqual({
      rows: [
        ['a', 'b'],
        ['x, y', 'say "hi"'],
        ['two\nlines', '3']
      ],
      complete: true
    });
    expect(parseCsv('a\nb\nc\n', 2)).toEqual({ rows: [['a'], ['b']], complete: false });
  });
});

describe('ArtifactsView', () => {
  function makeView(): { view: ArtifactsView; loads: [string, string][]; downloads: string[] } {
    const loads: [string, string][] = [];
    const downloads: string[] = [];
    const view = new ArtifactsView({
      fetchData: async a => ({ bytes: bytes(a.type === 'text/csv' ? 'x,y\n1,2\n' : '{"k": 1}'), contentType: a.type }),
      onLoad: (a, name) => loads.push([a.id, name]),
      onDownload: a => downloads.push(a.id)
    });
    view.setArtifacts([
      artifact({ id: 'a2', name: 'summary', type: 'application/json', size: 2048 }),
      artifact({ id: 'a1', name: 'weather table', size: 10 }),
      artifact({ id: 'a0', name: 'summary', type: 'application/json' })
    ]);
    return { view, loads, downloads };
  }

  it('lists name, type, size and time; opens one to its preview', async () => {
    const { view } = makeView();
    const rows = all(view.node, 'artifact');
    expect(rows.map(r => text(r, 'artifact-name'))).toEqual(['summary', 'weather table', 'summary']);
    expect(text(rows[0], 'artifact-size')).toBe('2.0 kB');
    expect(text(rows[1], 'artifact-type')).toBe('text/csv');
    click(rows[1].querySelector('.jp-codemode-sidebar-artifact-head')!);
    await flush();
    const open = view.node.querySelector('.jp-codemode-sidebar-artifact-open')!;
    expect(text(open, 'artifact-name')).toBe('weather table');
    expect(open.querySelector('table')).not.toBeNull();
    expect(view.openId).toBe('a1');
  });

  it('selects by id, or the newest with a name', async () => {
    const { view } = makeView();
    expect(view.select({ name: 'summary' })).toBe(true);
    expect(view.openId).toBe('a2');
    expect(view.select({ id: 'a0' })).toBe(true);
    expect(view.openId).toBe('a0');
    expect(view.select({ id: 'missing' })).toBe(false);
  });

  it('loads into the kernel under a checked Python name, and downloads', async () => {
    const { view, loads, downloads } = makeView();
    view.select({ id: 'a1' });
    await flush();
    const input = view.node.querySelector<HTMLInputElement>('.jp-codemode-sidebar-load-name')!;
    expect(input.value).toBe('weather_table');
    input.value = 'class';
    input.dispatchEvent(new Event('input'));
    expect(text(view.node, 'load-problem')).toBe('"class" is a Python keyword');
    click(view.node.querySelector('.jp-codemode-sidebar-load')!);
    expect(loads).toEqual([]);
    input.value = 'weather';
    input.dispatchEvent(new Event('input'));
    click(view.node.querySelector('.jp-codemode-sidebar-load')!);
    click(view.node.querySelector('.jp-codemode-sidebar-download')!);
    expect(loads).toEqual([['a1', 'weather']]);
    expect(downloads).toEqual(['a1']);
  });

  it('suggests a Python name made from the artifact name', () => {
    expect(suggestName('weather table')).toBe('weather_table');
    expect(suggestName('2024 sales.csv')).toBe('artifact_2024_sales_csv');
    expect(suggestName('')).toBe('artifact');
    expect(suggestName('données')).toBe('données');
  });
});

describe('HistoryView', () => {
  it('lists executions and agent requests; opening one renders its bundle untrusted', async () => {
    const rendermime = new RenderMimeRegistry({ initialFactories: standardRendererFactories });
    const fetched: string[] = [];
    const view = new HistoryView({
      rendermime,
      fetchRun: async summary => {
        fetched.push(summary.id);
        const full: IRun = {
          ...summary,
          bundle: {
            data: {
              'text/html': '<b id="bold">ok</b><img src=x onerror="window.__pwned = 1">',
              'text/plain': 'codemode #1: ok'
            },
            metadata: {}
          }
        };
        return full;
      }
    });
    document.body.appendChild(view.node);
    view.setRuns([
      run({ id: 'r2', kind: 'agent', number: 2, request: 'what is the weather?', code: '', model: 'claude' }),
      run({})
    ]);
    const rows = all(view.node, 'run');
    expect(rows.map(r => text(r, 'run-kind'))).toEqual(['agent #2', 'codemode #1']);
    expect(text(rows[0], 'run-summary')).toBe('what is the weather?');
    expect(text(rows[1], 'run-summary')).toBe('weather = get_weather(city="Paris")');
    expect(text(rows[1], 'run-meta')).toContain('1.2 s · 1 tool call');
    click(rows[1]);
    await flush();
    expect(fetched).toEqual(['r1']);
    const output = view.node.querySelector('.jp-codemode-sidebar-run-output')!;
    expect(output).not.toBeNull();
    // untrusted HTML goes through the sanitizer: the <b> stays, the handler does not
    expect(output.querySelector('b')!.textContent).toBe('ok');
    expect(output.innerHTML).not.toContain('onerror');
    expect((window as any).__pwned).toBeUndefined();
    view.closeRun();
    expect(view.node.querySelector('.jp-codemode-sidebar-run-output')).toBeNull();
    view.dispose();
  });

  it('labels runs by kind and number', () => {
    expect(runLabel(run({ kind: 'agent', number: 3 }))).toBe('agent #3');
    expect(runLabel(run({ number: null }))).toBe('codemode');
  });
});

describe('kernel actions', () => {
  it('quotes server names for the magic and refuses names that could run code', () => {
    expect(reconnectCode('github')).toBe("%codemode reconnect 'github'");
    expect(loginCode('linear')).toBe("%codemode login 'linear'");
    expect(() => loginCode("x'; import os")).toThrow(/run %codemode login in a cell instead/);
    expect(reconnectCode('brave search')).toBe("%codemode reconnect 'brave search'");
    for (const bad of ["x'; import os", 'a\nimport os', '{__import__("os")}', '$HOME', 'a\\b', 'x\u202Ey', '']) {
      expect(() => reconnectCode(bad)).toThrow(UnsafeActionError);
    }
  });

  it('sends only the kernel’s job ids to %codemode cancel', () => {
    expect(cancelCode('15868f5d342d')).toBe('%codemode cancel 15868f5d342d');
    for (const bad of ['15868f5d342d; import os', 'ABC', '', '1586']) {
      expect(() => cancelCode(bad)).toThrow(UnsafeActionError);
    }
  });

  it('sends only store ids and Python names to %codemode load', () => {
    expect(loadCode('a1b2c3d4e5f6', 'table')).toBe('%codemode load a1b2c3d4e5f6 table');
    expect(() => loadCode('a1 b2', 'table')).toThrow(UnsafeActionError);
    expect(() => loadCode('a1', 'x; import os')).toThrow(UnsafeActionError);
    expect(identifierProblem('')).toBe('enter a name');
    expect(identifierProblem('1x')).toContain('is not a Python name');
    expect(identifierProblem('None')).toContain('keyword');
    expect(identifierProblem('_ok2')).toBeNull();
  });
});

describe('JobsView', () => {
  const started = Date.parse('2026-11-28T05:00:00Z');
  const job = (overrides: Partial<IJobInfo>): IJobInfo => ({
    id: '15868f5d342d',
    status: 'running',
    firstLine: "for city in ['Oslo', 'Lima']:",
    started,
    seconds: null,
    ...overrides
  });

  it('lists the runs newest first: status, id, seconds, first line; Cancel on a running one', () => {
    const cancelled: IJobInfo[] = [];
    const view = new JobsView({ onCancel: j => cancelled.push(j), now: () => started + 12_500 });
    expect(view.title.label).toBe('Background runs');
    expect(view.node.textContent).toContain('No background runs');
    const ended = job({ id: 'c27e5f042cf6', status: 'cancelled', seconds: 0.2, firstLine: 'notify("x")' });
    view.setJobs([job({}), ended]);
    const rows = all(view.node, 'job');
    expect(rows.map(r => text(r, 'job-id'))).toEqual(['15868f5d342d', 'c27e5f042cf6']);
    expect(rows.map(r => r.querySelector('.jp-codemode-badge')!.getAttribute('data-status'))).toEqual([
      'running',
      'cancelled'
    ]);
    expect(text(rows[0], 'job-seconds')).toBe('12.5 s');
    expect(text(rows[1], 'job-seconds')).toBe('200 ms');
    expect(text(rows[0], 'job-line')).toBe("for city in ['Oslo', 'Lima']:");
    expect(rows[1].querySelector('.jp-codemode-sidebar-job-cancel')).toBeNull();
    click(rows[0].querySelector('.jp-codemode-sidebar-job-cancel')!);
    expect(cancelled.map(j => j.id)).toEqual(['15868f5d342d']);
    view.dispose();
  });
});
