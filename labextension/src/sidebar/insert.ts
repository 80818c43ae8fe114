/**
 * "Insert a call": puts a tool call's text into the active code cell at the cursor (replacing a selection,
 * on a line of its own when the cursor follows other code), or into a new code cell below when the active
 * cell is not a code cell.
 */
import { NotebookActions, type NotebookPanel } from '@jupyterlab/notebook';

/** Where the text went. */
export type InsertPlace = 'cell' | 'new-cell';

/** Inserts `text` into `panel`'s active code cell, or a new code cell below it. */
export function insertIntoNotebook(panel: NotebookPanel, text: string): InsertPlace {
  const notebook = panel.content;
  const cell = notebook.activeCell;
  if (cell !== null && cell.model.type === 'code' && !cell.readOnly) {
    const shared = cell.model.sharedModel;
    const source = shared.getSource();
    const editor = cell.editor;
    let start = source.length;
    let end = source.length;
    if (editor) {
      const selection = editor.getSelection();
      const a = editor.getOffsetAt(selection.start);
      const b = editor.getOffsetAt(selection.end);
      [start, end] = a <= b ? [a, b] : [b, a];
    }
    const lineStart = source.lastIndexOf('\n', start - 1) + 1;
    const insert = (source.slice(lineStart, start).trim() ? '\n' : '') + text;
    shared.updateSource(start, end, insert);
    if (editor) {
      const position = editor.getPositionAt(start + insert.length);
      if (position) {
        editor.setCursorPosition(position);
      }
    }
    notebook.mode = 'edit';
    editor?.focus();
    return 'cell';
  }
  NotebookActions.insertBelow(notebook);
  if (notebook.activeCell && notebook.activeCell.model.type !== 'code') {
    NotebookActions.changeCellType(notebook, 'code');
  }
  notebook.activeCell?.model.sharedModel.setSource(text);
  notebook.mode = 'edit';
  notebook.activeCell?.editor?.focus();
  return 'new-cell';
}
