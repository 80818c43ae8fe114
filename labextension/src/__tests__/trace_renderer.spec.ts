/**
 * The renderer in JupyterLab's own rendermime registry: it is chosen over the kernel's HTML fallback
 * (also for untrusted outputs, as in a notebook opened from disk), renders a model with its metadata,
 * and updates in place when JupyterLab renders a new model into it.
 */

import {
  MimeModel,
  RenderMimeRegistry,
  standardRendererFactories
} from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';

import { TRACE_MIME, TraceRenderer, traceRendererFactory } from '../trace';
import { all, fixture, one, rows } from './helpers';

function registry(openArtifact?: jest.Mock): RenderMimeRegistry {
  const rendermime = new RenderMimeRegistry({ initialFactories: standardRendererFactories });
  rendermime.addFactory(traceRendererFactory(openArtifact ? { openArtifact } : undefined));
  return rendermime;
}

function outputModel(name: string, trusted: boolean): MimeModel {
  const { data, metadata } = fixture(name);
  return new MimeModel({
    trusted,
    data: { 'text/plain': 'codemode: ...', 'text/html': '<b>fallback</b>', [TRACE_MIME]: data },
    metadata: { [TRACE_MIME]: metadata }
  });
}

describe('traceRendererFactory', () => {
  it('is safe, for the trace type, ranked before every standard renderer', () => {
    const factory = traceRendererFactory();
    expect(factory.safe).toBe(true);
    expect(factory.mimeTypes).toEqual([TRACE_MIME]);
    expect(factory.defaultRank).toBeLessThan(
      Math.min(...standardRendererFactories.map(f => f.defaultRank ?? 100))
    );
  });

  it.each([true, false])('is preferred over the HTML fallback (trusted: %s)', trusted => {
    const model = outputModel('parallel', trusted);
    expect(registry().preferredMimeType(model.data, trusted ? 'any' : 'ensure')).toBe(TRACE_MIME);
  });
});

describe('TraceRenderer', () => {
  it('renders a model with its metadata and passes the artifact hook on', async () => {
    const openArtifact = jest.fn();
    const rendermime = registry(openArtifact);
    const renderer = rendermime.createRenderer(TRACE_MIME);
    expect(renderer).toBeInstanceOf(TraceRenderer);
    Widget.attach(renderer, document.body);
    await renderer.renderModel(outputModel('table_artifacts', false));
    expect(renderer.node.classList).toContain('jp-codemode-renderer');
    expect(one(renderer.node, 'summary').textContent).toBe('2.03 s · 2 tool calls');
    all(renderer.node, 'artifact-link')[0].click();
    expect(openArtifact).toHaveBeenCalledWith({ id: 'da24cdff83d0', name: 'city averages' });
    expect(renderer.node.textContent).not.toContain('fallback');
    renderer.dispose();
    expect(renderer.node.isConnected).toBe(false);
  });

  it('updates in place when rendered again, keeping an open call', async () => {
    const renderer = registry().createRenderer(TRACE_MIME) as TraceRenderer;
    Widget.attach(renderer, document.body);
    const running = fixture('parallel');
    running.data.status = 'running';
    running.data.tool_calls = running.data.tool_calls.slice(0, 1);
    await renderer.renderModel(
      new MimeModel({
        data: { [TRACE_MIME]: running.data },
        metadata: { [TRACE_MIME]: running.metadata }
      })
    );
    const view = renderer.view;
    rows(view)[0].click();
    await renderer.renderModel(outputModel('parallel', true));
    expect(renderer.view).toBe(view);
    expect(rows(view)).toHaveLength(3);
    expect(rows(view)[0].getAttribute('aria-expanded')).toBe('true');
    expect(one(view.node, 'badge').textContent).toBe('✓ ok');
    renderer.dispose();
  });

  it('renders a model without metadata', async () => {
    const renderer = new TraceRenderer({
      mimeType: TRACE_MIME,
      sanitizer: { sanitize: (s: string) => s },
      resolver: null,
      linkHandler: null,
      latexTypesetter: null
    });
    const { data } = fixture('error');
    await renderer.renderModel(new MimeModel({ data: { [TRACE_MIME]: data } }));
    expect(one(renderer.node, 'error-head').textContent).toContain('ZeroDivisionError');
    expect(one(renderer.node, 'summary').textContent).toBe('2 tool calls');
    // Like JupyterLab's own renderers, it says which MIME type it drew.
    expect(renderer.node.getAttribute('data-mime-type')).toBe(TRACE_MIME);
  });
});
