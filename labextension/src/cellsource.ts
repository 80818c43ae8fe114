/**
 * How the commands turn a cell's source into a Code Mode program: pure functions, tested on their own.
 */

const CODEMODE = '%%codemode';

/** The cell's first line, when it is a cell magic (`%%name ...`). */
function cellMagic(source: string): string | null {
  const first = source.split('\n', 1)[0].trim();
  return first.startsWith('%%') ? first : null;
}

/** True when the first line is `%%codemode` (with or without options). */
export function isCodemodeCell(source: string): boolean {
  const magic = cellMagic(source);
  return magic !== null && (magic === CODEMODE || magic.startsWith(CODEMODE + ' '));
}

/**
 * The source with `%%codemode` as its first line (unchanged when it has it already), or an
 * explanation when the cell is another cell magic (`%%agent`, `%%bash`...) that cannot become a program.
 */
export function asCodemodeSource(source: string): { source: string } | { error: string } {
  if (isCodemodeCell(source)) {
    return { source };
  }
  const magic = cellMagic(source);
  if (magic !== null) {
    const name = magic.split(/\s/, 1)[0];
    return { error: `This cell is a ${name} cell; only Python code can run as %%codemode.` };
  }
  return { source: `${CODEMODE}\n${source}` };
}

/**
 * The code that replays the cell's last run: its `%%codemode` line with `--replay` added (the cell's
 * own options kept), or `%%codemode --replay` above plain Python. The cell itself is not changed.
 */
export function replaySource(source: string): { source: string } | { error: string } {
  return withOption(source, '--replay');
}

/**
 * The code that runs the cell in the background: its `%%codemode` line with `--background` added (the
 * cell's own options kept, `--out` among them), or `%%codemode --background` above plain Python. The cell
 * itself is not changed: running it again runs it in the foreground.
 */
export function backgroundSource(source: string): { source: string } | { error: string } {
  return withOption(source, '--background');
}

/** The source as a `%%codemode` cell whose first line has `option` (added at its end when missing). */
function withOption(source: string, option: string): { source: string } | { error: string } {
  const converted = asCodemodeSource(source);
  if ('error' in converted) {
    return converted;
  }
  const [first, ...rest] = converted.source.split('\n');
  if (new RegExp(`(^|\\s)${option}(\\s|$)`).test(first)) {
    return converted;
  }
  return { source: [`${first.replace(/\s+$/, '')} ${option}`, ...rest].join('\n') };
}
