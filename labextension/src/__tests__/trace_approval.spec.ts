/**
 * Calls that needed approval, on a real record (npm server-memory's delete_entities, answered y, then n,
 * in the kernel): the row's bar and tooltip, the decision in the detail, and records edited by hand.
 */

import { approvalText } from '../trace/format';
import { parseApproval, parseTrace } from '../trace/model';
import { all, fixture, one, rowLabel, rows, show } from './helpers';

const DESTRUCTIVE = 'its server marks it destructive (destructiveHint)';

describe('a call that needed approval', () => {
  it('has a bar and a tooltip on its row: amber when allowed, red when denied', () => {
    const { data, metadata } = fixture('approval');
    const view = show(data, metadata);
    const [create, allowed, denied, read] = rows(view);
    expect(rowLabel(allowed)).toBe('#2 delete_entities(entityNames=["Oslo"])');
    expect(allowed.classList).toContain('jp-codemode-call-row-allowed');
    expect(allowed.title).toBe(`allowed by the user (once): ${DESTRUCTIVE}`);
    expect(rowLabel(denied)).toBe('#3 delete_entities(entityNames=["Lima"])');
    expect(denied.classList).toContain('jp-codemode-call-row-denied');
    expect(denied.title).toBe(`denied by the user: ${DESTRUCTIVE}`);
    expect(one(denied, 'call-status').textContent).toBe('✗ denied');
    for (const row of [create, read]) {
      expect(row.title).toBe('');
      expect(row.className).not.toMatch(/allowed|denied/);
    }
  });

  it('says who decided and why on a line of its own when opened', () => {
    const { data, metadata } = fixture('approval');
    const view = show(data, metadata);
    rows(view)[1].click();
    rows(view)[2].click();
    const [allowed, denied] = all(view.node, 'call-detail');
    const allowedLine = one(allowed, 'approval');
    expect(allowedLine.textContent).toBe(`allowed by the user (once): ${DESTRUCTIVE}`);
    expect(allowedLine.classList).toContain('jp-codemode-approval-allowed');
    const deniedLine = one(denied, 'approval');
    expect(deniedLine.textContent).toBe(`denied by the user: ${DESTRUCTIVE}`);
    expect(deniedLine.classList).toContain('jp-codemode-approval-denied');
    // The denial's error follows, as the program got it.
    expect(one(denied, 'call-error').textContent).toBe(
      'memory/delete_entities was denied by the user; nothing was sent'
    );
    // A call that needed none has no such line.
    rows(view)[0].click();
    expect(all(view.node, 'call-detail')[0].querySelector('.jp-codemode-approval')).toBeNull();
  });

  it('appears when the live view learns the decision', () => {
    const { data, metadata } = fixture('approval');
    const waiting = JSON.parse(JSON.stringify(data));
    waiting.status = 'running';
    waiting.tool_calls = waiting.tool_calls.slice(0, 3);
    waiting.tool_calls[2] = { ...waiting.tool_calls[2], status: 'running', approval: null, error: null };
    const view = show(waiting, metadata);
    expect(rows(view)[2].title).toBe('');
    view.update(data, metadata);
    expect(rows(view)[2].title).toBe(`denied by the user: ${DESTRUCTIVE}`);
  });
});

describe('the approval line', () => {
  const line = (decision: string, by: string, scope = 'once', reason = DESTRUCTIVE): string =>
    approvalText({ decision, by, scope, reason });

  it('reads like the kernel’s text for every decision', () => {
    expect(line('allowed', 'the user', 'kernel')).toBe(
      `allowed by the user (this tool, for this kernel): ${DESTRUCTIVE}`
    );
    expect(line('allowed', 'the user (allowed earlier)', 'kernel')).toBe(
      `allowed by the user (allowed earlier; this tool, for this kernel): ${DESTRUCTIVE}`
    );
    expect(line('allowed', 'the client', 'session')).toBe(
      `allowed by the client (this tool, for this session): ${DESTRUCTIVE}`
    );
    expect(line('denied', 'timeout')).toBe(`denied (no decision in time): ${DESTRUCTIVE}`);
    expect(line('denied', 'nobody')).toBe(`denied (nobody could be asked): ${DESTRUCTIVE}`);
  });

  it('is parsed defensively from an edited record', () => {
    expect(parseApproval(null)).toBeNull();
    expect(parseApproval('allowed')).toBeNull();
    expect(parseApproval({})).toBeNull();
    expect(parseApproval({ decision: 7, by: ['x'] })).toEqual({
      decision: '7',
      by: '["x"]',
      scope: '',
      reason: ''
    });
    const { data } = fixture('approval');
    data.tool_calls[1].approval = { decision: 'allowed', by: 'x'.repeat(5000), reason: DESTRUCTIVE };
    data.tool_calls[2].approval = [1, 2];
    const calls = parseTrace(data).calls;
    expect(approvalText(calls[1].approval!).length).toBeLessThanOrEqual(301);
    expect(calls[2].approval).toBeNull();
  });

  it('is text, never markup, and shows hidden controls', () => {
    const { data, metadata } = fixture('approval');
    data.tool_calls[2].approval.by = '<img src=x onerror="window.hacked=1">';
    data.tool_calls[2].approval.reason = 'looks \u202eevil';
    const view = show(data, metadata);
    rows(view)[2].click();
    const shown = one(view.node, 'approval');
    expect(shown.querySelector('img')).toBeNull();
    expect(shown.textContent).toBe(
      'denied by <img src=x onerror="window.hacked=1">: looks ⟨U+202E⟩evil'
    );
    expect(rows(view)[2].title).toContain('⟨U+202E⟩');
  });
});
