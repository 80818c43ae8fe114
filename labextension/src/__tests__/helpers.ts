/**
 * Shared pieces of the renderer's tests: fixtures (runs of the example notebooks, written by
 * scripts/record_types.py from the kernel's own record types: regenerate them, never edit them),
 * a view attached to the document, and lookups by the renderer's class names.
 */

import { ITraceHooks, TraceView } from '../trace';
import approval from './fixtures/approval.json';
import asked from './fixtures/asked.json';
import artifactResult from './fixtures/artifact_result.json';
import error from './fixtures/error.json';
import invalidArguments from './fixtures/invalid_arguments.json';
import moved from './fixtures/moved.json';
import parallel from './fixtures/parallel.json';
import progress from './fixtures/progress.json';
import quickstart from './fixtures/quickstart.json';
import tableArtifacts from './fixtures/table_artifacts.json';
import textValue from './fixtures/text_value.json';
import timeout from './fixtures/timeout.json';

/** A trace output: the MIME value and the MIME type's metadata entry. */
export interface IFixture {
  source: string;
  data: any;
  metadata: any;
}

const FIXTURES: Record<string, IFixture> = {
  approval,
  asked,
  artifact_result: artifactResult,
  error,
  invalid_arguments: invalidArguments,
  moved,
  parallel,
  progress,
  quickstart,
  table_artifacts: tableArtifacts,
  text_value: textValue,
  timeout
};

/** All fixture names. */
export const FIXTURE_NAMES = Object.keys(FIXTURES);

/** A deep copy of a fixture (tests change them freely). */
export function fixture(name: string): IFixture {
  return JSON.parse(JSON.stringify(FIXTURES[name]));
}

/** A view in the document showing `data` and `metadata`. */
export function show(data: unknown, metadata?: unknown, hooks?: ITraceHooks): TraceView {
  const view = new TraceView(hooks);
  document.body.appendChild(view.node);
  view.update(data, metadata);
  return view;
}

/** The first element with the renderer's class `cls` (without its prefix). */
export function one(root: Element, cls: string): HTMLElement {
  const found = root.querySelector<HTMLElement>(`.jp-codemode-${cls}`);
  if (!found) {
    throw new Error(`no .jp-codemode-${cls}`);
  }
  return found;
}

/** Every element with the renderer's class `cls`. */
export function all(root: Element, cls: string): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(`.jp-codemode-${cls}`));
}

/** The rendered call rows, top to bottom. */
export function rows(view: TraceView): HTMLElement[] {
  return all(view.node, 'call-row').sort(
    (a, b) => parseFloat(a.style.top) - parseFloat(b.style.top)
  );
}

/** A row's "#seq tool(args)" text. */
export function rowLabel(row: HTMLElement): string {
  return `${one(row, 'call-seq').textContent} ${one(row, 'call-name').textContent}`;
}

/** Wait for pending promise callbacks (the clipboard). */
export function settle(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 0));
}

afterEach(() => {
  document.body.textContent = '';
});
