/**
 * The codemode trace renderer: the MIME type, the view, the JupyterLab renderer and its factory.
 */

export { TRACE_MIME, parseTrace } from './model';
export type { ICall, ITrace, ITraceHooks } from './model';
export { TraceView } from './view';
export { TraceRenderer, traceRendererFactory } from './renderer';
