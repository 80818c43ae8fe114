/**
 * The Code Mode commands: run a cell as `%%codemode`, replay a cell, open the sidebar or an artifact.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { OutputArea } from '@jupyterlab/outputarea';

import { asCodemodeSource, backgroundSource, replaySource } from './cellsource';

export namespace CommandIDs {
  export const runAsCodemode = 'codemode:run-cell-as-codemode';
  export const replayCell = 'codemode:replay-cell';
  export const runInBackground = 'codemode:run-cell-in-background';
  export const openSidebar = 'codemode:open-sidebar';
  export const openArtifact = 'codemode:open-artifact';
}

/** The active notebook's active cell when it is a code cell, with its panel. */
function activeCodeCell(tracker: INotebookTracker) {
  const panel = tracker.currentWidget;
  const cell = panel?.content.activeCell;
  if (!panel || !(cell instanceof CodeCell)) {
    return null;
  }
  return { panel, cell };
}

/**
 * The active code cell with its source made into a program by `program`, or null: with no code cell, or
 * when the source cannot be one (the user is told why).
 */
function activeProgram(
  tracker: INotebookTracker,
  program: (source: string) => { source: string } | { error: string }
) {
  const active = activeCodeCell(tracker);
  if (!active) {
    return null;
  }
  const made = program(active.cell.model.sharedModel.getSource());
  if ('error' in made) {
    Notification.warning(made.error, { autoClose: 5000 });
    return null;
  }
  return { ...active, source: made.source };
}

/** The cell commands, enabled on a code cell of a notebook. */
export function addCellCommands(app: JupyterFrontEnd, tracker: INotebookTracker): void {
  const enabled = () => activeCodeCell(tracker) !== null;

  app.commands.addCommand(CommandIDs.runAsCodemode, {
    label: 'Run Cell as %%codemode',
    caption: 'Make the cell a %%codemode program (its first line) and run it in the isolated executor',
    isEnabled: enabled,
    execute: async () => {
      const active = activeProgram(tracker, asCodemodeSource);
      if (!active) {
        return;
      }
      const { panel, cell, source } = active;
      cell.model.sharedModel.setSource(source);
      await NotebookActions.run(panel.content, panel.sessionContext);
    }
  });

  app.commands.addCommand(CommandIDs.replayCell, {
    label: 'Replay Cell from Its Record',
    caption:
      'Run the cell again as %%codemode --replay: tool results come from its last record, no server is called',
    isEnabled: enabled,
    execute: () => runAs(tracker, replaySource)
  });

  app.commands.addCommand(CommandIDs.runInBackground, {
    label: 'Run Cell in Background',
    caption:
      'Run the cell as %%codemode --background: the cell ends at once, its live trace keeps updating while ' +
      'other cells run (%codemode jobs, wait ID, cancel ID)',
    isEnabled: enabled,
    execute: () => runAs(tracker, backgroundSource)
  });
}

/**
 * Run the active cell's source made into a program by `program` (the cell keeps its own source): its
 * output area shows what the kernel sends, later updates of a background run included, as a run does.
 */
async function runAs(
  tracker: INotebookTracker,
  program: (source: string) => { source: string } | { error: string }
): Promise<void> {
  const active = activeProgram(tracker, program);
  if (!active) {
    return;
  }
  const { panel, cell, source } = active;
  // The kernel finds a cell's record (--replay) by the cell's id.
  const metadata = { cellId: cell.model.sharedModel.getId(), deletedCells: [], recordTiming: false };
  const reply = await OutputArea.execute(source, cell.outputArea, panel.sessionContext, metadata);
  if (reply?.content.status === 'ok' || reply?.content.status === 'error') {
    cell.model.executionCount = reply.content.execution_count;
  }
}
