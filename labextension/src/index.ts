/**
 * The Code Mode extension: the trace renderer, the live view's announcement to Code Mode kernels, the
 * Code Mode sidebar and the commands (palette and cell context menu).
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { announceFor } from './announce';
import { addCellCommands, CommandIDs } from './commands';
import { CodeModeSidebar } from './sidebar';
import { TRACE_MIME, traceRendererFactory } from './trace';

/** Below the HTML renderer's 50: a notebook with this extension shows the trace, others the HTML. */
export const TRACE_RANK = 40;
const CATEGORY = 'Code Mode';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'codemode-kernel:plugin',
  description: 'Code Mode: the trace renderer, the live view, the Code Mode sidebar and commands.',
  autoStart: true,
  requires: [IRenderMimeRegistry, INotebookTracker],
  optional: [ICommandPalette, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ) => {
    const sidebar = new CodeModeSidebar({ tracker, rendermime, commands: app.commands });
    const openArtifact = (ref: { id?: string; name?: string }) =>
      void app.commands.execute(CommandIDs.openArtifact, ref);
    rendermime.addFactory(traceRendererFactory({ openArtifact }), TRACE_RANK);

    // The live view: each Code Mode kernel learns that this frontend draws the trace itself.
    tracker.widgetAdded.connect((_, panel) => announceFor(panel.sessionContext, [TRACE_MIME]));

    app.shell.add(sidebar, 'right', { rank: 650 });
    restorer?.add(sidebar, sidebar.id);

    app.commands.addCommand(CommandIDs.openSidebar, {
      label: 'Open the Code Mode Sidebar',
      caption: 'Servers, tools, artifacts and history of the active notebook’s Code Mode kernel',
      execute: () => app.shell.activateById(sidebar.id)
    });
    app.commands.addCommand(CommandIDs.openArtifact, {
      label: 'Open Artifact in the Code Mode Sidebar',
      execute: args => {
        app.shell.activateById(sidebar.id);
        sidebar.showArtifact({
          id: typeof args.id === 'string' ? args.id : undefined,
          name: typeof args.name === 'string' ? args.name : undefined
        });
      }
    });
    addCellCommands(app, tracker);

    const cellCommands = [CommandIDs.runAsCodemode, CommandIDs.runInBackground, CommandIDs.replayCell];
    for (const command of [...cellCommands, CommandIDs.openSidebar]) {
      palette?.addItem({ command, category: CATEGORY });
    }
    app.contextMenu.addItem({
      type: 'separator',
      selector: '.jp-Notebook .jp-CodeCell',
      rank: 30
    });
    for (const [rank, command] of cellCommands.entries()) {
      app.contextMenu.addItem({ command, selector: '.jp-Notebook .jp-CodeCell', rank: 31 + rank });
    }
  }
};

export default plugin;
