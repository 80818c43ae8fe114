/**
 * The Code Mode sidebar: servers, tools, artifacts, history, executor and background runs of the active
 * notebook's kernel.
 *
 * Data comes from the jupyter_server extension (it reads what the kernel wrote into the workspace), so it
 * shows while a cell runs and after a restart. The state is polled every 2 s while the panel is visible
 * (re-rendered only when the kernel rewrote it); artifacts and history are fetched when the kernel goes idle
 * and on Refresh. Actions (reconnect, load) run in the kernel as silent executions and wait for a running
 * cell to end, which the status line says.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ISessionContext } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { Kernel } from '@jupyterlab/services';
import { SidePanel, ToolbarButton, refreshIcon } from '@jupyterlab/ui-components';
import { type AccordionPanel, Widget } from '@lumino/widgets';

import { clipCounted } from '../common/format';

import {
  cancelCode,
  loadCode,
  loginCode,
  reconnectCode,
  runSilently,
  UnsafeActionError,
  type IActionReport
} from './actions';
import { CodeModeClient, type IArtifactInfo, type IJobInfo, type IKernelState } from './api';
import { ArtifactsView } from './artifacts';
import { button, el } from './dom';
import { ExecutorView } from './executor';
import { HistoryView } from './history';
import { codeModeIcon } from './icon';
import { insertIntoNotebook } from './insert';
import { JobsView } from './jobs';
import { ServersView } from './servers';
import { ToolsView } from './tools';

/** The kernelspec name and display name of the Code Mode kernel. */
const CODEMODE_KERNEL = 'codemode';
const CODEMODE_DISPLAY_NAME = 'Code Mode (Python 3)';

/** The sections' order in the accordion. */
const SECTION = { servers: 0, tools: 1, artifacts: 2, history: 3, executor: 4, jobs: 5 } as const;

/** How the sidebar is made. */
export interface ICodeModeSidebarOptions {
  tracker: INotebookTracker;
  rendermime: IRenderMimeRegistry;
  /** For "Change kernel…" in the hint shown for other kernels. */
  commands?: JupyterFrontEnd['commands'];
  /** The REST client (defaults to one with the page's server settings). */
  client?: CodeModeClient;
  /** Milliseconds between state polls while visible (default 2000). */
  pollInterval?: number;
}

/** Kinds of status line message (a class each). */
export type StatusKind = 'info' | 'queued' | 'running' | 'done' | 'error';

/** What the sidebar shows above its sections. */
type Mode = 'no-notebook' | 'no-kernel' | 'not-codemode' | 'codemode' | 'error';

/** The "Code Mode" sidebar widget. */
export class CodeModeSidebar extends SidePanel {
  constructor(options: ICodeModeSidebarOptions) {
    super();
    this._tracker = options.tracker;
    this._commands = options.commands ?? null;
    this._client = options.client ?? new CodeModeClient();
    this._pollInterval = options.pollInterval ?? 2000;
    this.id = 'codemode-sidebar';
    this.title.label = 'Code Mode';
    this.title.caption = 'Code Mode';
    this.title.icon = codeModeIcon;
    this.addClass('jp-codemode-sidebar');

    this._kernelLine = el('div', { cls: 'kernel' });
    this._message = el('div', { cls: 'message', attrs: { role: 'note' } });
    this._status = el('div', { cls: 'status', attrs: { role: 'status', 'aria-live': 'polite' } });
    this.header.addWidget(
      new Widget({ node: el('div', { cls: 'header' }, [this._kernelLine, this._message, this._status]) })
    );
    this.toolbar.addItem(
      'refresh',
      new ToolbarButton({
        icon: refreshIcon,
        tooltip: 'Refresh servers, tools, artifacts, history, executor and background runs',
        onClick: () => void this.refresh()
      })
    );

    this._servers = new ServersView({
      onReconnect: name => void this.reconnect(name),
      onSignIn: name => void this.signIn(name)
    });
    this._tools = new ToolsView({ onInsert: call => this.insertCall(call) });
    this._artifacts = new ArtifactsView({
      fetchData: artifact => this._client.artifactData(this._kernelId, artifact.id),
      onLoad: (artifact, name) => void this.loadArtifact(artifact, name),
      onDownload: artifact => void this.download(artifact)
    });
    this._history = new HistoryView({
      rendermime: options.rendermime,
      fetchRun: run => this._client.run(this._kernelId, run.id)
    });
    this._executor = new ExecutorView();
    this._jobs = new JobsView({ onCancel: job => void this.cancelJob(job) });
    const sections = [this._servers, this._tools, this._artifacts, this._history, this._executor, this._jobs];
    for (const section of sections) {
      this.addWidget(section);
    }

    this._tracker.currentChanged.connect(this._onCurrentChanged, this);
    this._follow(this._tracker.currentWidget);
  }

  /** The id of the kernel shown, or '' when there is none. */
  get kernelId(): string {
    return this._kernelId;
  }

  /** The state last fetched (null when the kernel wrote none). */
  get state(): IKernelState | null {
    return this._state;
  }

  /** The status line's text. */
  get statusText(): string {
    return this._status.textContent ?? '';
  }

  /** The Servers, Tools, Artifacts, History and Executor sections (for tests and the plugin). */
  get sections(): {
    servers: ServersView;
    tools: ToolsView;
    artifacts: ArtifactsView;
    history: HistoryView;
    executor: ExecutorView;
    jobs: JobsView;
  } {
    return {
      servers: this._servers,
      tools: this._tools,
      artifacts: this._artifacts,
      history: this._history,
      executor: this._executor,
      jobs: this._jobs
    };
  }

  /** Fetches the state, the artifacts and the history now. */
  async refresh(): Promise<void> {
    await this._pollState();
    if (this._state !== null) {
      await this._refreshLists();
    }
  }

  /** Opens the Artifacts section on one artifact (by id, else the newest with that name). */
  showArtifact(ref: { id?: string; name?: string }): void {
    this._expand(SECTION.artifacts);
    if (this._artifacts.select(ref)) {
      return;
    }
    void this.refresh().then(() => {
      if (!this._artifacts.select(ref)) {
        this.setStatus(`No artifact ${clipCounted(ref.id || ref.name || '', 200)} in this workspace.`, 'error');
      }
    });
  }

  /** Inserts `callText` into the active notebook's active code cell (or a new code cell below). */
  insertCall(callText: string): void {
    const panel = this._tracker.currentWidget;
    if (panel === null) {
      this.setStatus('Open a notebook to insert a call.', 'error');
      return;
    }
    const place = insertIntoNotebook(panel, callText);
    this.setStatus(place === 'cell' ? 'Inserted into the active cell.' : 'Inserted in a new cell.', 'done');
  }

  /** Reconnects one server (`%codemode reconnect`), then re-reads the state. */
  async reconnect(server: string): Promise<IActionReport | null> {
    let code: string;
    try {
      code = reconnectCode(server);
    } catch (error) {
      return this._refuse(error);
    }
    const report = await this._run(`Reconnect ${clipCounted(server, 80)}`, code);
    await this._pollState();
    return report;
  }

  /** Asks the kernel for a new sign-in link (`%codemode login`); the row then shows it. */
  async signIn(server: string): Promise<IActionReport | null> {
    let code: string;
    try {
      code = loginCode(server);
    } catch (error) {
      return this._refuse(error);
    }
    const report = await this._run(`Sign in to ${clipCounted(server, 80)}`, code);
    await this._pollState();
    return report;
  }

  /** Loads an artifact into the kernel as `name` (`%codemode load`). */
  async loadArtifact(artifact: IArtifactInfo, name: string): Promise<IActionReport | null> {
    let code: string;
    try {
      code = loadCode(artifact.id, name);
    } catch (error) {
      return this._refuse(error);
    }
    return this._run(`Load ${clipCounted(artifact.name || artifact.id, 80)} as ${name}`, code);
  }

  /** Stops a background run (`%codemode cancel`), then re-reads the state. */
  async cancelJob(job: IJobInfo): Promise<IActionReport | null> {
    let code: string;
    try {
      code = cancelCode(job.id);
    } catch (error) {
      return this._refuse(error);
    }
    const report = await this._run(`Cancel ${clipCounted(job.id, 80)}`, code);
    await this._pollState();
    return report;
  }

  /** Saves an artifact through the browser (fetched from its `?download=1` URL). */
  async download(artifact: IArtifactInfo): Promise<void> {
    try {
      const { blob, filename } = await this._client.download(this._kernelId, artifact);
      const url = URL.createObjectURL(blob);
      const link = el('a', { attrs: { href: url, download: filename } });
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      this.setStatus(`Downloaded ${clipCounted(filename, 200)}.`, 'done');
    } catch (error) {
      this.setStatus(`Download failed: ${describe(error)}`, 'error');
    }
  }

  /** Shows `text` in the status line. */
  setStatus(text: string, kind: StatusKind = 'info'): void {
    this._status.textContent = clipCounted(text, 4000);
    this._status.className = `jp-codemode-sidebar-status jp-codemode-sidebar-status-${kind}`;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._stopPolling();
    this._tracker.currentChanged.disconnect(this._onCurrentChanged, this);
    this._follow(null);
    super.dispose();
  }

  protected onAfterShow(): void {
    this._startPolling();
    if (this._listsStale) {
      void this._refreshLists();
    }
  }

  protected onBeforeHide(): void {
    this._stopPolling();
  }

  protected onAfterAttach(): void {
    if (this.isVisible) {
      this._startPolling();
    }
  }

  protected onBeforeDetach(): void {
    this._stopPolling();
  }

  // -- following the notebook and its kernel ---------------------------------------------------

  private _onCurrentChanged(_: INotebookTracker, panel: NotebookPanel | null): void {
    this._follow(panel);
  }

  private _follow(panel: NotebookPanel | null): void {
    if (panel === this._panel && panel !== null) {
      return;
    }
    const old = this._panel?.sessionContext;
    if (old && !this._panel?.isDisposed) {
      old.kernelChanged.disconnect(this._onKernelChanged, this);
      old.statusChanged.disconnect(this._onStatusChanged, this);
    }
    this._panel = panel;
    const session = panel?.sessionContext;
    if (session) {
      session.kernelChanged.connect(this._onKernelChanged, this);
      session.statusChanged.connect(this._onStatusChanged, this);
    }
    this._onKernelChanged();
  }

  private _onKernelChanged(): void {
    const kernel = this._kernel();
    const id = kernel?.id ?? '';
    if (id !== this._kernelId) {
      this._kernelId = id;
      this._generation += 1;
      this._mode = null;
      this._state = null;
      this._shownServers = this._shownTools = this._shownExecutor = this._shownJobs = '';
      this._servers.setServers([]);
      this._tools.setTools([]);
      this._executor.setExecutor(null);
      this._jobs.setJobs([]);
      this._artifacts.setArtifacts([]);
      this._history.closeRun();
      this._history.setRuns([]);
    }
    this._showKernelLine();
    if (!this._panel) {
      this._setMode('no-notebook');
    } else if (!id) {
      this._setMode('no-kernel');
    }
    if (id) {
      void this.refresh();
    }
  }

  private _onStatusChanged(_: ISessionContext, status: Kernel.Status): void {
    this._showKernelLine();
    if (status === 'idle' && this._state !== null) {
      if (this.isVisible) {
        void this._refreshLists();
      } else {
        this._listsStale = true;
      }
    }
  }

  private _kernel(): Kernel.IKernelConnection | null {
    return this._panel?.sessionContext.session?.kernel ?? null;
  }

  private _showKernelLine(): void {
    const context = this._panel?.sessionContext;
    if (!context) {
      this._kernelLine.textContent = 'No notebook';
      return;
    }
    const kernel = this._kernel();
    this._kernelLine.textContent = kernel
      ? `${context.kernelDisplayName} · ${kernel.status}`
      : `${context.kernelDisplayName || 'No kernel'}`;
  }

  // -- fetching ----------------------------------------------------------------------------------

  private async _pollState(): Promise<void> {
    const kernelId = this._kernelId;
    const generation = this._generation;
    if (!kernelId) {
      return;
    }
    let state: IKernelState | null;
    try {
      state = await this._client.state(kernelId);
    } catch (error) {
      if (generation === this._generation) {
        this._setMode('error', `Cannot read the Code Mode state: ${describe(error)}`);
      }
      return;
    }
    if (generation !== this._generation) {
      return;
    }
    const wasMissing = this._state === null;
    this._state = state;
    if (state === null) {
      this._setMode('not-codemode');
      return;
    }
    this._setMode('codemode');
    if (state.updated !== this._shownUpdated || wasMissing) {
      this._shownUpdated = state.updated;
      this._showState(state);
    }
    if (wasMissing) {
      await this._refreshLists();
    }
  }

  private _showState(state: IKernelState): void {
    const servers = JSON.stringify(state.servers);
    if (servers !== this._shownServers) {
      this._shownServers = servers;
      this._servers.setServers(state.servers);
    }
    const tools = JSON.stringify(state.tools);
    if (tools !== this._shownTools) {
      this._shownTools = tools;
      this._tools.setTools(state.tools);
    }
    const executor = JSON.stringify(state.executor);
    if (executor !== this._shownExecutor) {
      this._shownExecutor = executor;
      this._executor.setExecutor(state.executor);
    }
    const jobs = JSON.stringify(state.jobs);
    if (jobs !== this._shownJobs) {
      this._shownJobs = jobs;
      this._jobs.setJobs(state.jobs);
    }
  }

  private async _refreshLists(): Promise<void> {
    const kernelId = this._kernelId;
    const generation = this._generation;
    this._listsStale = false;
    if (!kernelId || this._state === null) {
      return;
    }
    const problems: string[] = [];
    const note = (error: unknown): null => {
      problems.push(describe(error));
      return null;
    };
    const [artifacts, runs] = await Promise.all([
      this._client.artifacts(kernelId).catch(note),
      this._client.history(kernelId).catch(note)
    ]);
    if (generation !== this._generation) {
      return;
    }
    if (artifacts !== null) {
      this._artifacts.setArtifacts(artifacts);
    }
    if (runs !== null) {
      this._history.setRuns(runs);
    }
    if (problems.length) {
      this.setStatus(`Cannot read artifacts or history: ${problems[0]}`, 'error');
    }
  }

  private _startPolling(): void {
    if (this._timer !== null || this.isDisposed) {
      return;
    }
    const tick = async (): Promise<void> => {
      await this._pollState();
      if (this._timer !== null) {
        this._timer = window.setTimeout(() => void tick(), this._nextPoll());
      }
    };
    this._timer = window.setTimeout(() => void tick(), 0);
  }

  /**
   * The wait before the next state poll: the interval, or five times it for a kernel that wrote no state
   * and is not named as the Code Mode kernel (likely another kernel; a kernel change polls at once).
   */
  private _nextPoll(): number {
    const quiet = this._state === null && this._kernel()?.name !== CODEMODE_KERNEL;
    return quiet ? this._pollInterval * 5 : this._pollInterval;
  }

  private _stopPolling(): void {
    if (this._timer !== null) {
      window.clearTimeout(this._timer);
      this._timer = null;
    }
  }

  // -- what is shown -----------------------------------------------------------------------------

  private _setMode(mode: Mode, detail = ''): void {
    if (mode === this._mode && detail === this._modeDetail) {
      return;
    }
    this._mode = mode;
    this._modeDetail = detail;
    if (mode === 'codemode') {
      this._message.replaceChildren();
      this._message.hidden = true;
      this.content.show();
      return;
    }
    this._message.hidden = false;
    this.content.setHidden(mode !== 'error' || this._state === null);
    const kernel = this._kernel();
    const children: (Node | null)[] = [];
    if (mode === 'no-notebook') {
      children.push(el('p', { text: `Open a notebook that runs the ${CODEMODE_DISPLAY_NAME} kernel.` }));
    } else if (mode === 'no-kernel') {
      children.push(el('p', { text: 'This notebook has no kernel running.' }));
    } else if (mode === 'error') {
      children.push(el('p', { cls: 'error', text: clipCounted(detail, 2000) }));
    } else if (kernel?.name === CODEMODE_KERNEL) {
      children.push(
        el('p', { cls: 'no-codemode', text: 'The Code Mode kernel has not written its state yet.' }),
        el('p', {
          cls: 'hint',
          text:
            'It writes it once it has started. If this stays, check that the codemode_kernel server ' +
            'extension is enabled (jupyter server extension list).'
        })
      );
    } else {
      children.push(
        el('p', { cls: 'no-codemode', text: 'No Code Mode kernel.' }),
        el('p', {
          cls: 'hint',
          text: `This notebook runs ${this._panel?.sessionContext.kernelDisplayName || 'another kernel'}. Pick "${CODEMODE_DISPLAY_NAME}" to use Code Mode.`
        })
      );
    }
    if (mode !== 'no-notebook' && mode !== 'error' && this._commands?.hasCommand('notebook:change-kernel')) {
      const commands = this._commands;
      children.push(button('Change kernel…', () => void commands.execute('notebook:change-kernel'), 'change'));
    }
    this._message.replaceChildren(...children.filter((c): c is Node => c !== null));
  }

  private _expand(index: number): void {
    (this.content as AccordionPanel).expand?.(index);
  }

  // -- actions -----------------------------------------------------------------------------------

  private async _run(label: string, code: string): Promise<IActionReport | null> {
    const kernel = this._kernel();
    if (kernel === null) {
      this.setStatus(`${label}: no kernel.`, 'error');
      return null;
    }
    return runSilently(kernel, code, report => this.setStatus(`${label}: ${report.text}`, report.state));
  }

  private _refuse(error: unknown): null {
    if (error instanceof UnsafeActionError) {
      this.setStatus(error.message, 'error');
      return null;
    }
    throw error;
  }

  private _tracker: INotebookTracker;
  private _commands: JupyterFrontEnd['commands'] | null;
  private _client: CodeModeClient;
  private _pollInterval: number;
  private _panel: NotebookPanel | null = null;
  private _kernelId = '';
  private _generation = 0;
  private _state: IKernelState | null = null;
  private _shownUpdated = '';
  private _shownServers = '';
  private _shownTools = '';
  private _shownExecutor = '';
  private _shownJobs = '';
  private _listsStale = false;
  private _timer: number | null = null;
  private _mode: Mode | null = null;
  private _modeDetail = '';
  private _kernelLine: HTMLElement;
  private _message: HTMLElement;
  private _status: HTMLElement;
  private _servers: ServersView;
  private _tools: ToolsView;
  private _artifacts: ArtifactsView;
  private _history: HistoryView;
  private _executor: ExecutorView;
  private _jobs: JobsView;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
