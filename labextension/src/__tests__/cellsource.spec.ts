import { asCodemodeSource, backgroundSource, isCodemodeCell, replaySource } from '../cellsource';

describe('run a cell as %%codemode', () => {
  it('puts %%codemode above plain Python', () => {
    expect(asCodemodeSource('x = get_city(name="Oslo")\nx')).toEqual({
      source: '%%codemode\nx = get_city(name="Oslo")\nx'
    });
  });

  it('leaves a %%codemode cell as it is, options included', () => {
    const cell = '%%codemode --timeout 5 --out r\n1 + 1';
    expect(asCodemodeSource(cell)).toEqual({ source: cell });
    expect(isCodemodeCell(cell)).toBe(true);
  });

  it('refuses another cell magic, naming it', () => {
    const converted = asCodemodeSource('%%agent\nwhat is the weather in Oslo?');
    expect(converted).toEqual({
      error: 'This cell is a %%agent cell; only Python code can run as %%codemode.'
    });
  });

  it('does not take %%codemodes (another magic) for %%codemode', () => {
    expect(isCodemodeCell('%%codemodes\n1')).toBe(false);
  });
});

describe('replay a cell', () => {
  it('adds --replay to the cell’s own %%codemode line', () => {
    expect(replaySource('%%codemode --timeout 5\nget_city(name="Oslo")')).toEqual({
      source: '%%codemode --timeout 5 --replay\nget_city(name="Oslo")'
    });
  });

  it('replays plain Python as %%codemode --replay', () => {
    expect(replaySource('get_city(name="Oslo")')).toEqual({
      source: '%%codemode --replay\nget_city(name="Oslo")'
    });
  });

  it('keeps a cell that replays already as it is', () => {
    const cell = '%%codemode --replay --quiet\n1';
    expect(replaySource(cell)).toEqual({ source: cell });
  });
});

describe('run a cell in the background', () => {
  it('adds --background to the cell’s own %%codemode line, keeping --out', () => {
    expect(backgroundSource('%%codemode --out temps\nget_city(name="Oslo")')).toEqual({
      source: '%%codemode --out temps --background\nget_city(name="Oslo")'
    });
  });

  it('runs plain Python as %%codemode --background', () => {
    expect(backgroundSource('get_city(name="Oslo")')).toEqual({
      source: '%%codemode --background\nget_city(name="Oslo")'
    });
  });

  it('keeps a background cell as it is, and refuses another cell magic', () => {
    const cell = '%%codemode --background\n1';
    expect(backgroundSource(cell)).toEqual({ source: cell });
    expect(backgroundSource('%%agent\nhello')).toEqual({
      error: 'This cell is a %%agent cell; only Python code can run as %%codemode.'
    });
  });
});
