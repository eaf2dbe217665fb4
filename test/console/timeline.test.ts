import { describe, expect, it } from 'vitest';
import { timeline } from '../../console/src/timeline.ts';
import type { TaskEvent } from '../../console/src/types.ts';

// The console's timeline from journal entries (a pure function; the browser tests show it on the page).

const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 12, 0, s)).toISOString();
let seq = 0;
const entry = (type: string, data: Record<string, unknown>, second: number): TaskEvent => ({
  source: 'journal',
  seq: ++seq,
  type,
  data,
  created_at: at(second),
});

describe('the console timeline', () => {
  it("times a call from its intent, and an approved one from its start, not the human's wait", () => {
    const items = timeline([
      entry('tool_intent', { call_id: 'call-1', tool: 'tools.read', args: '{"x":1}' }, 0),
      entry('tool_outcome', { call_id: 'call-1', ok: true, payload: '2' }, 1),
      entry('tool_intent', { call_id: 'call-2', tool: 'tools.pay', args: '{"amount":500}' }, 2),
      entry(
        'approval_request',
        { approval_id: 'call-2', call_id: 'call-2', tool: 'tools.pay', args: '{}' },
        2,
      ),
      entry('approval_decision', { approval_id: 'call-2', decision: 'approve', actor: 'ops' }, 50),
      entry('control', { action: 'approved_call_started', call_id: 'call-2' }, 51),
      entry('tool_outcome', { call_id: 'call-2', ok: true, payload: '"paid"' }, 54),
      entry('tool_intent', { call_id: 'call-3', tool: 'tools.pay', args: '{"amount":900}' }, 55),
      entry(
        'approval_request',
        { approval_id: 'call-3', call_id: 'call-3', tool: 'tools.pay', args: '{}' },
        55,
      ),
      entry('approval_decision', { approval_id: 'call-3', decision: 'reject', reason: 'no' }, 90),
      entry('tool_outcome', { call_id: 'call-3', ok: false, payload: '{"code":"TOOL_REJECTED"}' }, 90),
    ]);
    const calls = items.filter((i) => i.kind === 'tool').map((i) => i.call);
    expect(calls.map((c) => c?.duration)).toEqual(['1.00 s', '3.00 s', undefined]);
    expect(calls.map((c) => c?.ok)).toEqual([true, true, false]);
    expect(calls[1]?.outcome).toBe('paid');
    expect(items.find((i) => i.kind === 'decision')?.title).toBe('Approved call-2 by ops');
  });

  it('marks a call taken over from an earlier attempt (no run time), folds the offers and names a held call beside the earlier one', () => {
    const items = timeline([
      entry(
        'carry_offer',
        {
          origin: { task_id: 'task_a', call_id: 'call-1' },
          tool: 'tools.pay',
          args: '{"amount":5}',
          payload: '"paid"',
          effect: 'unsafe',
        },
        0,
      ),
      entry(
        'carry_offer',
        { origin: { task_id: 'task_a', call_id: 'call-2' }, tool: 'tools.read', args: '{}', payload: '1' },
        0,
      ),
      entry('code_block', { block: 1, code: 'x' }, 0),
      entry(
        'tool_intent',
        {
          call_id: 'call-1',
          tool: 'tools.pay',
          args: '{"amount":5}',
          carried_from: { task_id: 'task_a', call_id: 'call-1' },
        },
        1,
      ),
      entry('tool_outcome', { call_id: 'call-1', ok: true, payload: '"paid"' }, 3),
      entry('tool_intent', { call_id: 'call-2', tool: 'tools.read', args: '{}' }, 3),
      entry('tool_outcome', { call_id: 'call-2', ok: true, payload: '2' }, 4),
      // Hostile data: a carried_from that is no origin is not one.
      entry('tool_intent', { call_id: 'call-3', tool: 'tools.x', args: '{}', carried_from: 'call-1' }, 4),
      entry('tool_intent', { call_id: 'call-4', tool: 'tools.pay', args: '{"amount":6}' }, 5),
      entry(
        'control',
        {
          action: 'revision_held',
          call_id: 'call-4',
          earlier: {
            origin: { task_id: 'task_a', call_id: 'call-1' },
            tool: 'tools.pay',
            args: '{"amount":5}',
          },
        },
        5,
      ),
    ]);
    const offers = items.filter((i) => i.kind === 'carry');
    expect(offers).toHaveLength(1);
    expect(offers[0]?.title).toContain('Offered 2 calls');
    expect(offers[0]?.earlier?.map((o) => o.origin.call_id)).toEqual(['call-1', 'call-2']);
    const calls = items.filter((i) => i.kind === 'tool').map((i) => i.call);
    expect(calls.map((c) => c?.carried)).toEqual([
      { task_id: 'task_a', call_id: 'call-1' },
      undefined,
      undefined,
      undefined,
    ]);
    // A call taken over did not run: no run time is shown for it.
    expect(calls.map((c) => c?.duration)).toEqual([undefined, '1.00 s', undefined, undefined]);
    expect(calls[0]?.outcome).toBe('paid');
    const held = items.at(-1);
    expect(held?.title).toBe(
      'Held call-4 for a human: an earlier attempt already ran tools.pay with other arguments',
    );
    expect(held?.earlier).toEqual([
      { origin: { task_id: 'task_a', call_id: 'call-1' }, tool: 'tools.pay', arguments: { amount: 5 } },
    ]);
  });
});

describe('fetch in the console timeline', () => {
  it('titles a request by method and URL and shows its response as text, not base64', () => {
    const body = Buffer.from('{"temp":21}').toString('base64');
    const items = timeline([
      entry(
        'tool_intent',
        {
          call_id: 'call-1',
          tool: 'egress.fetch',
          args: JSON.stringify({
            url: 'https://api.example.com/x',
            method: 'POST',
            headers: [['authorization', 'Bearer {{secret:api}}']],
            body: Buffer.from('hello').toString('base64'),
          }),
        },
        0,
      ),
      entry(
        'tool_outcome',
        {
          call_id: 'call-1',
          ok: true,
          payload: JSON.stringify({
            status: 201,
            statusText: 'Created',
            headers: [['content-type', 'application/json']],
            url: 'https://api.example.com/x',
            redirected: false,
            body,
            allowedBy: 'api.example.com',
          }),
        },
        1,
      ),
      entry(
        'tool_intent',
        {
          call_id: 'call-2',
          tool: 'egress.read',
          args: '{"url":"https://a.org/b","method":"GET","headers":[],"body":null}',
        },
        2,
      ),
      entry(
        'tool_outcome',
        { call_id: 'call-2', ok: false, payload: '{"code":"EGRESS_REFUSED","message":"no"}' },
        3,
      ),
    ]);
    const calls = items.filter((i) => i.kind === 'tool');
    expect(calls.map((i) => i.title)).toEqual([
      'fetch POST https://api.example.com/x (call-1)',
      'fetch GET https://a.org/b (call-2)',
    ]);
    expect(calls[0]?.call?.arguments).toEqual({
      url: 'https://api.example.com/x',
      method: 'POST',
      headers: [['authorization', 'Bearer {{secret:api}}']],
      body_bytes: 5,
    });
    expect(calls[0]?.call?.outcome).toMatchObject({
      status: 201,
      allowedBy: 'api.example.com',
      body: '{"temp":21}',
      body_bytes: 11,
    });
    expect(calls[1]?.call).toMatchObject({ ok: false, outcome: { code: 'EGRESS_REFUSED' } });
  });

  it('says why a call was refused before it ran: a tenant limit or a task budget, with its code', () => {
    const refused = (n: number, over: string, code: string) => [
      entry('tool_intent', { call_id: `call-${n}`, tool: 'tools.search', args: '{}', over_budget: over }, n),
      entry('tool_outcome', { call_id: `call-${n}`, ok: false, payload: JSON.stringify({ code }) }, n),
    ];
    const calls = timeline([
      ...refused(1, 'tenant_rate', 'TOOL_RATE_LIMITED'),
      ...refused(2, 'tenant_quota', 'TOOL_QUOTA_EXCEEDED'),
      ...refused(3, 'tool_max_calls', 'TOOL_BUDGET_EXCEEDED'),
    ]).filter((i) => i.kind === 'tool');
    expect(calls.map((i) => i.title)).toEqual([
      "tools.search (call-1), not run: refused by the tenant's rate limit",
      "tools.search (call-2), not run: refused by the tenant's quota",
      "tools.search (call-3), not run: refused by the task's tool max calls budget",
    ]);
    expect(calls[0]?.call).toMatchObject({ ok: false, outcome: { code: 'TOOL_RATE_LIMITED' } });
  });
});
