/**
 * What a server asked during its calls, on a real record (tests/servers/asking_server.py in the kernel:
 * book_table's form answered Enter, 4, Enter, terrace; summarize's sampling allowed with y): a line in
 * each call's detail, as the kernel's text view says it, and records edited by hand.
 */

import { askedText } from '../trace/format';
import { parseTrace } from '../trace/model';
import { all, fixture, one, rows, show } from './helpers';

describe('a call whose server asked back', () => {
  it('says the question and the answer on a line of its detail', () => {
    const { data, metadata } = fixture('asked');
    const view = show(data, metadata);
    rows(view)[0].click();
    rows(view)[1].click();
    const [booked, summarized] = all(view.node, 'call-detail');
    expect(one(booked, 'call-asked').textContent).toBe(
      'asked: "Booking at Chez Nous: when, and for how many?" -> accept by the user: ' +
        '{"date": "2026-12-24", "guests": 4, "vegetarian": false, "seating": "terrace"}'
    );
    expect(one(summarized, 'call-asked').textContent).toBe(
      'asked: the model (sampling) allowed by the user -> 10 characters from scripted'
    );
  });

  it('reads what the record holds, whatever an edit left there', () => {
    expect(askedText({ kind: 'elicitation', refused: 'field b has type object' })).toBe(
      'a question that was refused: field b has type object'
    );
    const url = {
      kind: 'elicitation',
      question: { mode: 'url', url: 'https://a.example/x', message: 'sign\nin' },
      answer: { action: 'decline', by: 'nobody' }
    };
    expect(askedText(url)).toBe('to open https://a.example/x (sign in) -> decline (nobody could be asked)');
    expect(askedText({ kind: 'elicitation', question: 7, answer: [] })).toBe('"" -> ?');
    expect(askedText({ kind: 'sampling', refused: 'no model' })).toBe(
      'the model (sampling), refused: no model'
    );
    expect(askedText({ kind: 'other' })).toBe('');
    const { data } = fixture('asked');
    data.tool_calls[0].asked = [7, 'x', null];
    expect(parseTrace(data).calls[0].asked).toEqual([]);
  });
});
