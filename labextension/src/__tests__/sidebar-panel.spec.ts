/**
 * The whole sidebar: JupyterLab's notebook widgets and tracker (with its mock session services for the
 * kernel) and the REST API behind a stubbed fetch. What it follows, what it shows for other kernels, what
 * "Insert a call" does to the cell, and what Reconnect sends to the kernel.
 */
import { NotebookActions, NotebookPanel, NotebookTracker } from '@jupyterlab/notebook';
import { DEFAULT_CONTENT, NBTestUtils } from '@jupyterlab/notebook/lib/testutils';
import { RenderMimeRegistry, standardRendererFactories } from '@jupyterlab/rendermime';
import { ServerConnection } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';

import { runSilently } from '../sidebar/actions';
import { CodeModeClient } from '../sidebar/api';
import { CodeModeSidebar } from '../sidebar';

import { all, click, flush, text, until } from './sidebar-helpers';

const BASE = 'http://localhost:8888/';

// @jupyter/ydoc reads cell fields before yjs 13.6 considers them part of a document, and yjs warns each
// time (hundreds of lines per notebook, from JupyterLab's code, not ours): those two warnings are dropped.
const warn = console.warn;
beforeAll(() => {
  jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    const first = String(args[0]);
    if (!first.startsWith('Invalid access: Add Yjs type') && !first.startsWith('[yjs#509]')) {
      warn(...args);
    }
  });
});
afterAll(() => jest.restoreAllMocks());

/** What the stubbed server answers, per kernel id; `calls` counts requests by path. */
class FakeServer {
  states = new Map<string, Record<string, unknown>>();
  artifacts: unknown[] = [];
  runs: unknown[] = [];
  calls = new Map<string, number>();

  client(): CodeModeClient {
    const fetch = async (input: RequestInfo, init?: RequestInit): Promise<Response> => {
      const request = input instanceof Request ? input : new Request(input, init);
      const path = request.url.slice(BASE.length).split('?')[0];
      this.calls.set(path, (this.calls.get(path) ?? 0) + 1);
      const match = /^codemode\/api\/kernels\/([^/]+)\/(state|artifacts|history)$/.exec(path);
      const state = match ? this.states.get(decodeURIComponent(match[1])) : undefined;
      if (!match || state === undefined) {
        return json({ message: 'no Code Mode state' }, 404);
      }
      if (match[2] === 'state') {
        return json(state);
      }
      return json(match[2] === 'artifacts' ? { artifacts: this.artifacts } : { runs: this.runs });
    };
    return new CodeModeClient(ServerConnection.makeSettings({ baseUrl: BASE, fetch }));
  }

  count(suffix: string): number {
    let total = 0;
    for (const [path, n] of this.calls) {
      if (path.endsWith(suffix)) {
        total += n;
      }
    }
    return total;
  }
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

function codeModeState(kernelId: string, updated = 't1'): Record<string, unknown> {
  return {
    version: 1,
    kernel_id: kernelId,
    pid: 1,
    workspace: 'w',
    updated,
    servers: [
      { name: 'weather', state: 'ready', transport: 'stdio', tool_count: 1, error: null, fix: null },
      { name: 'github', state: 'failed', transport: 'http', tool_count: 0, error: 'refused', fix: 'start it' }
    ],
    tools: [
      {
        name: 'get_weather',
        server: 'weather',
        tool: 'get_weather',
        signature: 'def get_weather(city: str) -> GetWeatherOutput:',
        doc: 'The weather in a city.',
        input_schema: { type: 'object' },
        output_schema: null,
        call: 'get_weather(city="Paris")'
      }
    ]
  };
}

async function notebook(): Promise<NotebookPanel> {
  const context = await NBTestUtils.createMockContext(true);
  context.model.fromJSON(DEFAULT_CONTENT);
  const panel = NBTestUtils.createNotebookPanel(context);
  Widget.attach(panel, document.body);
  return panel;
}

function kernelIdOf(panel: NotebookPanel): string {
  return panel.sessionContext.session!.kernel!.id;
}

describe('CodeModeSidebar', () => {
  let server: FakeServer;
  let tracker: NotebookTracker;
  let sidebar: CodeModeSidebar;
  let panel: NotebookPanel;
  const rendermime = new RenderMimeRegistry({ initialFactories: standardRendererFactories });

  beforeEach(async () => {
    server = new FakeServer();
    tracker = new NotebookTracker({ namespace: `test-${Math.random()}` });
    panel = await notebook();
    server.states.set(kernelIdOf(panel), codeModeState(kernelIdOf(panel)));
    sidebar = new CodeModeSidebar({ tracker, rendermime, client: server.client(), pollInterval: 50 });
  });

  afterEach(() => {
    sidebar.dispose();
    panel.dispose();
    tracker.dispose();
    document.body.replaceChildren();
  });

  it('is the "Code Mode" sidebar with its own icon', () => {
    expect(sidebar.id).toBe('codemode-sidebar');
    expect(sidebar.title.label).toBe('Code Mode');
    expect(sidebar.title.caption).toBe('Code Mode');
    expect(sidebar.title.icon).toBeTruthy();
    expect(sidebar.sections.servers.title.label).toBe('Servers');
  });

  it('follows the active notebook and shows its kernel’s servers and tools', async () => {
    expect(sidebar.statusText).toBe('');
    expect(sidebar.node.textContent).toContain('Open a notebook');
    await tracker.add(panel);
    await flush();
    expect(sidebar.kernelId).toBe(kernelIdOf(panel));
    expect(all(sidebar.node, 'server-name').map(n => n.textContent)).toEqual(['weather', 'github']);
    expect(text(sidebar.node, 'server-fix')).toBe('Fix: start it');
    expect(all(sidebar.node, 'tool-name').map(n => n.textContent)).toEqual(['get_weather']);
    expect(sidebar.content.isHidden).toBe(false);
  });

  it('says "No Code Mode kernel" for another kernel, with the kernel to pick', async () => {
    server.states.clear();
    await tracker.add(panel);
    await flush();
    expect(text(sidebar.node, 'no-codemode')).toBe('No Code Mode kernel.');
    expect(text(sidebar.node, 'hint')).toContain('Pick "Code Mode (Python 3)"');
    expect(sidebar.content.isHidden).toBe(true);
    // a kernel without state is polled five times less often (every 250 ms here), and shows its state
    // once it wrote one
    Widget.attach(sidebar, document.body);
    await new Promise(resolve => setTimeout(resolve, 600));
    expect(server.count('/state')).toBeLessThan(6);
    server.states.set(kernelIdOf(panel), codeModeState(kernelIdOf(panel)));
    await new Promise(resolve => setTimeout(resolve, 300));
    expect(sidebar.content.isHidden).toBe(false);
    expect(all(sidebar.node, 'tool-name').length).toBe(1);
  });

  it('polls the state while visible, re-rendering only when it was rewritten, and stops when hidden', async () => {
    await tracker.add(panel);
    await flush();
    Widget.attach(sidebar, document.body);
    const before = sidebar.node.querySelector('.jp-codemode-sidebar-server');
    await new Promise(resolve => setTimeout(resolve, 200));
    expect(server.count('/state')).toBeGreaterThan(2);
    expect(sidebar.node.querySelector('.jp-codemode-sidebar-server')).toBe(before);
    server.states.set(kernelIdOf(panel), { ...codeModeState(kernelIdOf(panel), 't2'), servers: [] });
    await new Promise(resolve => setTimeout(resolve, 120));
    expect(sidebar.node.textContent).toContain('No MCP servers are configured.');
    sidebar.hide();
    const polls = server.count('/state');
    await new Promise(resolve => setTimeout(resolve, 200));
    expect(server.count('/state')).toBe(polls);
  });

  it("shows where the kernel runs programs, and a cluster's nodes as the kernel rewrites its state", async () => {
    const id = kernelIdOf(panel);
    server.states.set(id, { ...codeModeState(id), executor: { backend: 'local' } });
    await tracker.add(panel);
    await flush();
    expect(sidebar.sections.executor.title.label).toBe('Executor');
    expect(text(sidebar.node, 'executor-summary')).toBe('This machine');
    Widget.attach(sidebar, document.body);
    const nodes = [{ node: 'ab12cd34ef56', address: '10.0.0.5', alive: true, cpus: 2, prepared: 1, running: 1 }];
    const executor = { backend: 'ray', address: '10.0.0.5:6379', nodes, running: 1, queued: 0, problem: null };
    server.states.set(id, { ...codeModeState(id, 't2'), executor });
    await until(() => all(sidebar.node, 'node').length === 1);
    expect(text(sidebar.node, 'executor-summary')).toBe(
      'Ray cluster at 10.0.0.5:6379: 1 of 1 node alive, 1 running, 0 queued'
    );
    expect(text(sidebar.node, 'node-id')).toBe('ab12cd34');
    expect(text(sidebar.node, 'node-meta')).toBe('2 CPUs · 1 prepared · 1 running');
  });

  it('fetches artifacts and history when the kernel goes idle and on refresh', async () => {
    await tracker.add(panel);
    await flush();
    Widget.attach(sidebar, document.body);
    server.artifacts = [
      { id: 'a1', name: 'table', type: 'text/csv', description: '', size: 9, created: '', execution_id: null }
    ];
    server.runs = [{ id: 'r1', kind: 'codemode', number: 7, code: 'print(1)', status: 'ok' }];
    const kernel = panel.sessionContext.session!.kernel! as any;
    kernel.statusChanged.emit('busy');
    kernel.statusChanged.emit('idle');
    await flush();
    expect(all(sidebar.node, 'artifact-name').map(n => n.textContent)).toEqual(['table']);
    expect(all(sidebar.node, 'run-kind').map(n => n.textContent)).toEqual(['codemode #7']);
    server.runs = [];
    await sidebar.refresh();
    expect(sidebar.node.textContent).toContain('No executions or agent requests yet.');
  });

  it('opens an artifact asked for by name in the Artifacts section', async () => {
    server.artifacts = [
      { id: 'a2', name: 'chart', type: 'text/plain', description: '', size: 9, created: '', execution_id: null }
    ];
    await tracker.add(panel);
    await flush();
    sidebar.showArtifact({ name: 'chart' });
    await flush();
    expect(sidebar.sections.artifacts.openId).toBe('a2');
    sidebar.showArtifact({ id: 'nope' });
    await flush();
    expect(sidebar.statusText).toBe('No artifact nope in this workspace.');
  });

  it('opens an artifact asked for before the sidebar has read anything (a link clicked early)', async () => {
    server.artifacts = [
      { id: 'a3', name: 'early', type: 'text/plain', description: '', size: 1, created: '', execution_id: null }
    ];
    await tracker.add(panel);
    sidebar.showArtifact({ id: 'a3' });
    await flush(10);
    expect(sidebar.sections.artifacts.openId).toBe('a3');
  });

  it('inserts a call at the cursor of the active code cell, on its own line', async () => {
    await tracker.add(panel);
    const nb = panel.content;
    nb.activeCellIndex = 0;
    const cell = nb.activeCell!;
    expect(cell.model.type).toBe('code');
    cell.model.sharedModel.setSource('x = 1');
    cell.editor!.setCursorPosition({ line: 0, column: 5 });
    sidebar.insertCall('get_weather(city="Paris")');
    expect(cell.model.sharedModel.getSource()).toBe('x = 1\nget_weather(city="Paris")');
    cell.model.sharedModel.setSource('a\n\nb');
    cell.editor!.setCursorPosition({ line: 1, column: 0 });
    sidebar.insertCall('f()');
    expect(cell.model.sharedModel.getSource()).toBe('a\nf()\nb');
    expect(sidebar.statusText).toBe('Inserted into the active cell.');
  });

  it('inserts a call in a new code cell below a markdown cell', async () => {
    await tracker.add(panel);
    const nb = panel.content;
    const markdown = nb.widgets.findIndex(c => c.model.type === 'markdown');
    expect(markdown).toBeGreaterThanOrEqual(0);
    nb.activeCellIndex = markdown;
    const count = nb.widgets.length;
    sidebar.insertCall('get_weather(city="Paris")');
    expect(nb.widgets.length).toBe(count + 1);
    expect(nb.activeCellIndex).toBe(markdown + 1);
    expect(nb.activeCell!.model.type).toBe('code');
    expect(nb.activeCell!.model.sharedModel.getSource()).toBe('get_weather(city="Paris")');
    NotebookActions.undo(nb);
  });

  it('reconnects a server with a silent %codemode reconnect and says what happened', async () => {
    await tracker.add(panel);
    await flush();
    const kernel = panel.sessionContext.session!.kernel!;
    const rows = all(sidebar.node, 'server');
    click(rows[1].querySelector('.jp-codemode-sidebar-reconnect')!);
    await flush();
    expect(kernel.requestExecute).toHaveBeenCalledWith(
      { code: "%codemode reconnect 'github'", silent: true, store_history: false, allow_stdin: false, stop_on_error: false },
      true
    );
    expect(sidebar.statusText).toBe('Reconnect github: done');
  });

  it('refuses a hostile server name without sending anything', async () => {
    await tracker.add(panel);
    const kernel = panel.sessionContext.session!.kernel!;
    const report = await sidebar.reconnect('x\nimport os');
    expect(report).toBeNull();
    expect(kernel.requestExecute).not.toHaveBeenCalled();
    expect(sidebar.statusText).toContain('run %codemode reconnect in a cell instead');
  });
});

describe('runSilently', () => {
  /** A kernel that answers like ipykernel: busy, the output, idle, then the reply. */
  function kernelAnswering(
    status: string,
    messages: { type: string; content: Record<string, unknown> }[],
    reply: Record<string, unknown>
  ): { kernel: any; sent: any[] } {
    const sent: any[] = [];
    const kernel = {
      status,
      requestExecute(content: unknown) {
        sent.push(content);
        const future: any = { onIOPub: null };
        future.done = (async () => {
          await flush(1);
          for (const { type, content: body } of [
            { type: 'status', content: { execution_state: 'busy' } },
            ...messages,
            { type: 'status', content: { execution_state: 'idle' } }
          ]) {
            future.onIOPub?.({ header: { msg_type: type }, content: body });
          }
          return { content: reply };
        })();
        return future;
      }
    };
    return { kernel, sent };
  }

  it('says it is queued while a cell runs, then shows what the magic printed', async () => {
    const { kernel } = kernelAnswering(
      'busy',
      [{ type: 'stream', content: { name: 'stdout', text: 'weather [stdio]: connected again, ready, 2 tools\n' } }],
      { status: 'ok' }
    );
    const reports: string[] = [];
    const report = await runSilently(kernel, '%codemode reconnect weather', r => reports.push(`${r.state}: ${r.text}`));
    expect(reports).toEqual([
      'queued: queued: the kernel is busy; this runs when the current cell ends',
      'running: running…',
      'done: weather [stdio]: connected again, ready, 2 tools'
    ]);
    expect(report.state).toBe('done');
  });

  it('shows the error of a failed action, and says when the kernel aborted it', async () => {
    const failed = kernelAnswering(
      'idle',
      [{ type: 'error', content: { ename: 'UsageError', evalue: "%codemode load: no artifact 'x'" } }],
      { status: 'error', ename: 'UsageError', evalue: "%codemode load: no artifact 'x'" }
    );
    expect(await runSilently(failed.kernel, '%codemode load x y')).toEqual({
      state: 'error',
      text: "UsageError: %codemode load: no artifact 'x'"
    });
    const aborted = kernelAnswering('busy', [], { status: 'aborted' });
    expect((await runSilently(aborted.kernel, '%codemode load x y')).text).toContain('aborted');
  });
});
