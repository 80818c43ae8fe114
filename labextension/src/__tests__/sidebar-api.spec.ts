/**
 * The sidebar's REST client against a stubbed `fetch` (the boundary ServerConnection settings accept):
 * which URLs it asks for, and what it makes of the answers, including broken and hostile ones.
 */
import { ServerConnection } from '@jupyterlab/services';

import {
  CodeModeApiError,
  CodeModeClient,
  filenameFromDisposition,
  normalizeState,
  safeFilename
} from '../sidebar/api';

const BASE = 'http://localhost:8888/lab-base/';

type Answer = Response | ((request: Request) => Response);

/** A client whose fetch answers from `routes` (path after the base URL, query ignored) and records URLs. */
function clientFor(routes: Record<string, Answer>): { client: CodeModeClient; urls: string[]; headers: Headers[] } {
  const urls: string[] = [];
  const headers: Headers[] = [];
  const fetch = async (input: RequestInfo, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input, init);
    urls.push(request.url);
    headers.push(request.headers);
    const path = request.url.slice(BASE.length).split('?')[0];
    const answer = routes[path];
    if (answer === undefined) {
      return json({ message: `no route ${path}` }, 404);
    }
    return typeof answer === 'function' ? answer(request) : answer.clone();
  };
  const settings = ServerConnection.makeSettings({ baseUrl: BASE, token: 'secret-token', fetch });
  return { client: new CodeModeClient(settings), urls, headers };
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

const STATE = {
  version: 1,
  kernel_id: 'k1',
  pid: 4242,
  workspace: '/home/user/project',
  updated: '2026-11-24T05:00:00Z',
  servers: [
    { name: 'weather', state: 'ready', transport: 'stdio', tool_count: 2, error: null, fix: null },
    {
      name: 'github',
      state: 'failed',
      transport: 'http',
      tool_count: 0,
      error: 'connection refused',
      fix: 'start the server'
    }
  ],
  tools: [
    {
      name: 'get_weather',
      server: 'weather',
      tool: 'get-weather',
      signature: 'def get_weather(city: str) -> GetWeatherOutput:',
      doc: 'The weather in a city.',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      output_schema: null,
      call: 'get_weather(city="Paris")'
    }
  ]
};

describe('CodeModeClient', () => {
  it('reads the state of a kernel from codemode/api/kernels/ID/state, with the token', async () => {
    const { client, urls, headers } = clientFor({ 'codemode/api/kernels/k1/state': json(STATE) });
    const state = await client.state('k1');
    expect(urls[0].startsWith(`${BASE}codemode/api/kernels/k1/state`)).toBe(true);
    expect(headers[0].get('Authorization')).toBe('token secret-token');
    expect(state).not.toBeNull();
    expect(state!.kernelId).toBe('k1');
    expect(state!.updated).toBe('2026-11-24T05:00:00Z');
    expect(state!.servers.map(s => [s.name, s.state, s.toolCount, s.error, s.fix])).toEqual([
      ['weather', 'ready', 2, '', ''],
      ['github', 'failed', 0, 'connection refused', 'start the server']
    ]);
    expect(state!.tools[0]).toMatchObject({
      name: 'get_weather',
      tool: 'get-weather',
      call: 'get_weather(city="Paris")',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
      outputSchema: null
    });
  });

  it('keeps a sign-in link only when it is an http(s) URL', async () => {
    const servers = [
      ['https://auth.example/authorize?state=1', 'https://auth.example/authorize?state=1'],
      ['http://127.0.0.1:9/authorize', 'http://127.0.0.1:9/authorize'],
      ['javascript:alert(1)', ''],
      ['data:text/html,<b>x</b>', ''],
      ['not a url', ''],
      [null, '']
    ].map(([url], i) => ({ name: `s${i}`, state: 'signin', signin_url: url }));
    const { client } = clientFor({ 'codemode/api/kernels/k1/state': json({ ...STATE, servers }) });
    const state = await client.state('k1');
    expect(state!.servers.map(s => s.signinUrl)).toEqual([
      'https://auth.example/authorize?state=1',
      'http://127.0.0.1:9/authorize',
      '',
      '',
      '',
      ''
    ]);
  });

  it('answers null for a kernel that wrote no state (404)', async () => {
    const { client } = clientFor({
      'codemode/api/kernels/k2/state': json({ message: 'kernel k2 wrote no Code Mode state' }, 404)
    });
    expect(await client.state('k2')).toBeNull();
  });

  it("raises the server's message for other failures, and status 0 when the server cannot be reached", async () => {
    const { client } = clientFor({
      'codemode/api/kernels/k1/state': json({ message: 'state file is damaged' }, 500),
      'codemode/api/kernels/k1/artifacts': new Response('<html>oops</html>', { status: 502 })
    });
    await expect(client.state('k1')).rejects.toMatchObject({ status: 500, message: 'state file is damaged' });
    await expect(client.artifacts('k1')).rejects.toBeInstanceOf(CodeModeApiError);
    await expect(client.artifacts('k1')).rejects.toMatchObject({ status: 502 });

    const settings = ServerConnection.makeSettings({
      baseUrl: BASE,
      fetch: async () => {
        throw new TypeError('Failed to fetch');
      }
    });
    await expect(new CodeModeClient(settings).state('k1')).rejects.toMatchObject({ status: 0 });
  });

  it('escapes ids in the URL path', async () => {
    const { client, urls } = clientFor({});
    await client.state('../../api/contents').catch(() => undefined);
    await client.run('k1', 'a/b?c#d').catch(() => undefined);
    expect(urls[0]).toContain('codemode/api/kernels/..%2F..%2Fapi%2Fcontents/state');
    expect(urls[1]).toContain('codemode/api/kernels/k1/history/a%2Fb%3Fc%23d');
  });

  it('lists artifacts and fetches their bytes with the served type', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const { client } = clientFor({
      'codemode/api/kernels/k1/artifacts': json({
        artifacts: [
          {
            id: 'a1b2c3d4e5f6',
            name: 'chart',
            type: 'image/png',
            description: '',
            size: 11,
            created: '2026-11-24T05:00:00+00:00',
            execution_id: 'e1'
          },
          { id: 'ffffffffffff', name: null, type: 'text/csv', size: 'big' }
        ]
      }),
      'codemode/api/kernels/k1/artifacts/a1b2c3d4e5f6': new Response(png, {
        headers: { 'Content-Type': 'image/png' }
      })
    });
    const artifacts = await client.artifacts('k1');
    expect(artifacts.map(a => [a.id, a.name, a.type, a.size, a.executionId])).toEqual([
      ['a1b2c3d4e5f6', 'chart', 'image/png', 11, 'e1'],
      ['ffffffffffff', '', 'text/csv', 0, '']
    ]);
    const data = await client.artifactData('k1', 'a1b2c3d4e5f6');
    expect(data.contentType).toBe('image/png');
    expect(Array.from(new Uint8Array(data.bytes))).toEqual(Array.from(png));
  });

  it('downloads from the ?download=1 URL under the name the server gives, without directories', async () => {
    const { client, urls } = clientFor({
      'codemode/api/kernels/k1/artifacts/a1': new Response('x,y\n1,2\n', {
        headers: {
          'Content-Type': 'application/octet-stream',
          'Content-Disposition': 'attachment; filename="../../etc/passwd"'
        }
      })
    });
    const artifact = {
      id: 'a1',
      name: 'table',
      type: 'text/csv',
      description: '',
      size: 8,
      created: '',
      executionId: ''
    };
    expect(client.downloadUrl('k1', 'a1')).toBe(`${BASE}codemode/api/kernels/k1/artifacts/a1?download=1`);
    const file = await client.download('k1', artifact);
    expect(urls[0]).toContain('artifacts/a1?download=1');
    expect(file.filename).toBe('_.._etc_passwd');
    expect(await file.blob.text()).toBe('x,y\n1,2\n');
  });

  it('lists runs newest first and fetches one with its bundle', async () => {
    const { client } = clientFor({
      'codemode/api/kernels/k1/history': json({
        runs: [
          {
            id: 'r2',
            kind: 'agent',
            number: 2,
            kernel_id: 'k1',
            request: 'find the weather',
            model: 'claude',
            status: 'ok',
            tool_calls: 3,
            finished: '2026-11-24T05:01:00Z',
            duration_ms: 2500
          },
          { id: 'r1', kind: 'codemode', number: 1, code: 'print(1)', status: 'error', tool_calls: [{}, {}] }
        ]
      }),
      'codemode/api/kernels/k1/history/r1': json({
        id: 'r1',
        kind: 'codemode',
        number: 1,
        status: 'error',
        replayed: true,
        bundle: { data: { 'text/plain': 'boom' }, metadata: { x: 1 } }
      })
    });
    const runs = await client.history('k1');
    expect(runs.map(r => [r.id, r.kind, r.number, r.toolCalls, r.durationMs])).toEqual([
      ['r2', 'agent', 2, 3, 2500],
      ['r1', 'codemode', 1, 2, null]
    ]);
    const run = await client.run('k1', 'r1');
    expect(run.replayed).toBe(true);
    expect(run.bundle).toEqual({ data: { 'text/plain': 'boom' }, metadata: { x: 1 } });
  });
});

describe('normalizeState jobs', () => {
  it('reads the background runs; an unreadable start is null, a missing status unknown', () => {
    const state = normalizeState({
      jobs: [
        {
          id: 'a1b2c3d4e5f6',
          status: 'running',
          first_line: 'x = 1',
          started: '2026-11-28T05:00:00.000+00:00',
          seconds: null
        },
        { id: 'b1', first_line: 7, started: 'yesterday', seconds: '3' }
      ]
    });
    expect(state.jobs).toEqual([
      {
        id: 'a1b2c3d4e5f6',
        status: 'running',
        firstLine: 'x = 1',
        started: Date.parse('2026-11-28T05:00:00Z'),
        seconds: null
      },
      { id: 'b1', status: 'unknown', firstLine: '7', started: null, seconds: null }
    ]);
    expect(normalizeState({}).jobs).toEqual([]);
  });
});

describe('normalizeState', () => {
  it('turns missing or mistyped fields into empty values, never into objects', () => {
    const state = normalizeState({
      updated: 17,
      servers: [{ name: { toString: 'x' }, tool_count: '3', error: ['a'] }, 'junk'],
      tools: 'not a list'
    });
    expect(state.updated).toBe('17');
    expect(state.servers).toEqual([
      { name: '', state: '', transport: '', toolCount: 0, error: '', fix: '', signinUrl: '' },
      { name: '', state: '', transport: '', toolCount: 0, error: '', fix: '', signinUrl: '' }
    ]);
    expect(state.tools).toEqual([]);
    expect(normalizeState(null).servers).toEqual([]);
    expect(state.executor).toBeNull(); // a kernel that has not said where programs run
  });

  it("reads the kernel's executor: a Ray cluster's nodes, or none yet; mistyped fields read as missing", () => {
    const ray = normalizeState({
      executor: {
        backend: 'ray',
        address: '10.0.0.5:6379',
        running: 1,
        queued: '2',
        problem: null,
        nodes: [
          { node: 'ab12', address: '10.0.0.5', alive: true, cpus: 4, prepared: 1, running: 0 },
          { node: ['x'], alive: 'yes', cpus: 'many', prepared: null },
          'junk'
        ]
      }
    }).executor;
    expect(ray).toEqual({
      backend: 'ray',
      address: '10.0.0.5:6379',
      running: 1,
      queued: null,
      problem: '',
      nodes: [
        { node: 'ab12', address: '10.0.0.5', alive: true, cpus: 4, prepared: 1, running: 0 },
        { node: '', address: '', alive: false, cpus: null, prepared: null, running: null },
        { node: '', address: '', alive: false, cpus: null, prepared: null, running: null }
      ]
    });
    expect(normalizeState({ executor: { backend: 'ray', address: 'auto' } }).executor?.nodes).toBeNull();
    expect(normalizeState({ executor: { backend: 'local' } }).executor?.backend).toBe('local');
    expect(normalizeState({ executor: { address: 'x' } }).executor).toBeNull();
  });
});

describe('file names', () => {
  it('reads filename* (RFC 5987) before filename', () => {
    expect(filenameFromDisposition(`attachment; filename="a.csv"; filename*=UTF-8''t%C3%A9st.csv`)).toBe(
      'tést.csv'
    );
    expect(filenameFromDisposition('attachment; filename="say \\"hi\\".txt"')).toBe('say "hi".txt');
    expect(filenameFromDisposition('inline')).toBe('');
  });

  it('drops directories, control and bidi characters', () => {
    expect(safeFilename('a/b\\c.txt')).toBe('a_b_c.txt');
    expect(safeFilename('evil\u202Etxt.exe')).toBe('eviltxt.exe');
    expect(safeFilename('\n\t')).toBe('artifact');
    expect(safeFilename('.hidden')).toBe('hidden');
  });
});
