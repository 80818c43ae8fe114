/**
 * Hostile strings in every field the sidebar shows (server names and errors, tool docs and schemas,
 * artifact names, types and contents, history code and records) stay text: no element is made from data,
 * no handler attribute appears, and images come only from allow-listed types as blob: URLs.
 */
import { RenderMimeRegistry, standardRendererFactories } from '@jupyterlab/rendermime';

import type { IArtifactInfo, IRun, IRunSummary } from '../sidebar/api';
import { ArtifactsView } from '../sidebar/artifacts';
import { HistoryView } from '../sidebar/history';
import { ServersView } from '../sidebar/servers';
import { ToolsView } from '../sidebar/tools';
import { TRACE_MIME, traceRendererFactory } from '../trace';

import { fixture } from './helpers';
import { bytes, click, flush } from './sidebar-helpers';

const IMG = '<img src=x onerror="window.__pwned = (window.__pwned || 0) + 1">';
const SCRIPT = '</script><script>window.__pwned = 1</script>';
const RTL = 'evil\u202Egnp.exe';
const HUGE = 'A'.repeat(1_000_000);
const HOSTILE = [IMG, SCRIPT, RTL, `${HUGE}${IMG}`];

/** Tags the sidebar itself makes; anything else in its DOM was made from data. */
const OWN_TAGS = new Set([
  'DIV', 'SPAN', 'P', 'PRE', 'UL', 'LI', 'BUTTON', 'INPUT', 'DETAILS', 'SUMMARY', 'TABLE', 'THEAD', 'TBODY', 'TR',
  'TH', 'TD', 'IMG'
]);

/** Fails on any element not made by the sidebar, any on* attribute, and images that are not blob: URLs. */
function expectOnlyText(root: HTMLElement, allowedImages = 0): void {
  const elements = Array.from(root.querySelectorAll('*'));
  for (const element of elements) {
    expect(OWN_TAGS.has(element.tagName) ? 'own' : element.outerHTML.slice(0, 200)).toBe('own');
    for (const attribute of Array.from(element.attributes)) {
      expect(attribute.name.startsWith('on') ? attribute.name : 'ok').toBe('ok');
    }
  }
  const images = Array.from(root.querySelectorAll('img'));
  expect(images.length).toBe(allowedImages);
  for (const image of images) {
    expect(image.getAttribute('src')!.startsWith('blob:')).toBe(true);
    expect(image.classList.contains('jp-codemode-sidebar-preview-image')).toBe(true);
  }
  expect(root.querySelector('script, iframe, object, embed, svg, style, link')).toBeNull();
  expect((window as any).__pwned).toBeUndefined();
}

/** The text shown, with the clipped middle of huge strings: each hostile string's start is there verbatim. */
function expectShown(root: HTMLElement, values: string[]): void {
  const shown = root.textContent ?? '';
  for (const value of values) {
    expect(shown).toContain(value.slice(0, 1000));
  }
}

afterEach(() => {
  document.body.replaceChildren();
});

describe('hostile strings in the sidebar', () => {
  it('stay text in the Servers section', () => {
    const view = new ServersView({ onReconnect: () => undefined, onSignIn: () => undefined });
    document.body.appendChild(view.node);
    view.setServers(
      HOSTILE.map(value => ({
        name: value,
        state: value,
        transport: value,
        toolCount: 1,
        error: value,
        fix: value,
        signinUrl: ''
      }))
    );
    expectOnlyText(view.node);
    expectShown(view.node, HOSTILE);
    // the 1 MB line is cut, not rendered whole
    expect((view.node.textContent ?? '').length).toBeLessThan(400_000);
    expect(view.node.textContent).toContain('more characters');
  });

  it('stay text in the Tools section, opened, with hostile docs and schemas', () => {
    const view = new ToolsView({ onInsert: () => undefined });
    document.body.appendChild(view.node);
    view.setTools(
      HOSTILE.map(value => ({
        name: value,
        server: value,
        tool: value,
        signature: value,
        doc: value,
        inputSchema: { type: 'object', properties: { [value]: { description: value, enum: [value] } } },
        outputSchema: { [value]: value },
        call: value
      }))
    );
    for (const details of Array.from(view.node.querySelectorAll('details'))) {
      details.open = true;
      details.dispatchEvent(new Event('toggle'));
    }
    // open the schema trees too (they build on opening)
    const closed = '.jp-codemode-json-toggle[aria-expanded="false"]';
    for (let round = 0; round < 4; round++) {
      view.node.querySelectorAll(closed).forEach(toggle => click(toggle));
    }
    expect(view.node.querySelector(closed)).toBeNull();
    expectOnlyText(view.node);
    expectShown(view.node, HOSTILE);
  });

  it('stay text in the Artifacts section: names, types and contents, HTML and SVG included', async () => {
    const contents: Record<string, [string, ArrayBuffer]> = {
      html: ['text/html', bytes(`<html><body>${IMG}${SCRIPT}</body></html>`)],
      svg: ['image/svg+xml', bytes(`<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=1">${SCRIPT}</svg>`)],
      typed: [`text/html"><img src=x onerror=alert(1)>`, bytes(IMG)],
      json: ['application/json', bytes(JSON.stringify({ [IMG]: [SCRIPT, RTL, HUGE] }))],
      csv: ['text/csv', bytes(`"${IMG}",b\n"${SCRIPT}",${RTL}\n`)],
      text: ['text/plain', bytes(HUGE + IMG)],
      png: ['image/png', bytes('\x89PNG\r\n\x1a\n')]
    };
    const artifacts: IArtifactInfo[] = Object.entries(contents).map(([id, [type]], index) => ({
      id,
      name: HOSTILE[index % HOSTILE.length],
      type,
      description: HOSTILE[(index + 1) % HOSTILE.length],
      size: 100,
      created: IMG,
      executionId: SCRIPT
    }));
    const view = new ArtifactsView({
      fetchData: async artifact => ({ bytes: contents[artifact.id][1], contentType: 'application/octet-stream' }),
      onLoad: () => undefined,
      onDownload: () => undefined
    });
    document.body.appendChild(view.node);
    view.setArtifacts(artifacts);
    expectOnlyText(view.node);
    for (const artifact of artifacts) {
      expect(view.select({ id: artifact.id })).toBe(true);
      await flush();
      const detail = view.node.querySelector<HTMLElement>('.jp-codemode-sidebar-artifact-open')!;
      const isImage = artifact.id === 'png';
      expectOnlyText(view.node, isImage ? 1 : 0);
      if (artifact.id === 'html' || artifact.id === 'svg' || artifact.id === 'typed') {
        expect(detail.querySelector('pre')!.textContent).toBe(
          new TextDecoder().decode(contents[artifact.id][1])
        );
      }
    }
    expectShown(view.node, [IMG, SCRIPT]);
  });

  it('stay text in the History section and in the record it opens', async () => {
    const rendermime = new RenderMimeRegistry({ initialFactories: standardRendererFactories });
    rendermime.addFactory(traceRendererFactory(), 40);
    const trace = fixture('quickstart');
    trace.data.stdout = HOSTILE.join('\n');
    trace.data.tool_calls[0].arguments = { path: IMG, [SCRIPT]: RTL };
    trace.data.tool_calls[0].result.content[0].text = `${SCRIPT}${IMG}`;
    const runs: IRunSummary[] = HOSTILE.map((value, index) => ({
      id: `r${index}`,
      kind: index % 2 ? 'agent' : value,
      number: index,
      kernelId: 'k1',
      cellId: value,
      code: value,
      request: value,
      model: value,
      status: value,
      toolCalls: 1,
      finished: value,
      durationMs: 5,
      replayed: false
    }));
    const view = new HistoryView({
      rendermime,
      fetchRun: async summary => {
        const full: IRun = {
          ...summary,
          bundle: {
            data: { [TRACE_MIME]: trace.data, 'text/plain': HOSTILE.join('\n') },
            metadata: { [TRACE_MIME]: trace.metadata }
          }
        };
        return full;
      }
    });
    document.body.appendChild(view.node);
    view.setRuns(runs);
    expectOnlyText(view.node);
    expectShown(view.node, [IMG, SCRIPT, RTL]);
    click(view.node.querySelector('.jp-codemode-sidebar-run')!);
    await flush(20);
    const output = view.node.querySelector<HTMLElement>('.jp-codemode-sidebar-run-output')!;
    // the record is drawn by the trace renderer, and what the program printed is text
    expect(output.querySelector('[class^="jp-codemode-"]')).not.toBeNull();
    expect(output.textContent).toContain(IMG);
    expect(output.querySelector('script, img, iframe')).toBeNull();
    for (const element of Array.from(output.querySelectorAll('*'))) {
      for (const attribute of Array.from(element.attributes)) {
        expect(attribute.name.startsWith('on') ? attribute.name : 'ok').toBe('ok');
      }
    }
    expect((window as any).__pwned).toBeUndefined();
    view.dispose();
  });
});
