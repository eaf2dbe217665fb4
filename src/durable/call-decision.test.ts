import { describe, expect, it } from 'vitest';
import type { HostCall, JournalEntryInput, ToolEffect } from '../spec/index.ts';
import { decideApproval, decideCall, decideInput } from './call-decision.ts';
import type { ApprovalStep, CallDecision, InputStep } from './call-decision.ts';
import { JournalMemory } from './journal-memory.ts';

const ARGS = '{"n":1}';
const pay: HostCall = {
  kind: 'tool',
  callId: 'call-1',
  namespace: 'tools',
  name: 'pay',
  args: { n: 1 },
  argsJson: ARGS,
};
const wait: HostCall & { kind: 'tool' } = {
  kind: 'tool',
  callId: 'call-1',
  namespace: 'input',
  name: 'wait',
  args: { name: 'x' },
  argsJson: '{"name":"x"}',
};

const intent = (tool = 'tools.pay', args = ARGS): JournalEntryInput => ({
  type: 'tool_intent',
  data: { call_id: 'call-1', tool, args },
});
const refusedIntent: JournalEntryInput = {
  type: 'tool_intent',
  data: { call_id: 'call-1', tool: 'tools.pay', args: ARGS, over_budget: 'tool_max_calls' },
};
const outcome: JournalEntryInput = {
  type: 'tool_outcome',
  data: { call_id: 'call-1', ok: true, payload: '1', clock: 5 },
};
const other = (callId: string): JournalEntryInput[] => [
  { type: 'tool_intent', data: { call_id: callId, tool: 'tools.pay', args: ARGS } },
  { type: 'tool_outcome', data: { call_id: callId, ok: true, payload: '2' } },
];
const control = (action: 'approved_call_started' | 'not_started' | 'retry_started'): JournalEntryInput => ({
  type: 'control',
  data: { action, call_id: 'call-1' },
});
const requested: JournalEntryInput = {
  type: 'approval_request',
  data: { approval_id: 'call-1', call_id: 'call-1', tool: 'tools.pay', args: ARGS },
};
const decided = (decision: 'approve' | 'reject'): JournalEntryInput => ({
  type: 'approval_decision',
  data: { approval_id: 'call-1', decision, actor: 'a', reason: 'no' },
});
const attention = (action: 'retry' | 'skip', payload?: string): JournalEntryInput => ({
  type: 'attention_decision',
  data: { call_id: 'call-1', action, ...(payload === undefined ? {} : { payload }), actor: 'a', reason: '' },
});

interface Row {
  readonly journal: readonly JournalEntryInput[];
  readonly call?: HostCall;
  readonly gated?: boolean;
  readonly effect?: ToolEffect;
  readonly kind: CallDecision['kind'];
}

// prettier-ignore
const CALLS: Record<string, Row> = {
  'a call the journal has not seen runs live':            { journal: [], kind: 'live' },
  'other calls recorded, this one not: live':             { journal: other('call-2'), kind: 'live' },
  'a recorded outcome replays':                           { journal: [intent(), outcome], kind: 'replay' },
  'a recorded outcome of an unsafe call replays':         { journal: [intent(), outcome], effect: 'unsafe', kind: 'replay' },
  'another tool than the intent diverges':                { journal: [intent('tools.refund'), outcome], kind: 'diverged' },
  'other arguments than the intent diverge':              { journal: [intent('tools.pay', '{"n":2}')], kind: 'diverged' },
  'divergence is found before a lost call is judged':     { journal: [intent('tools.pay', '{"n":2}')], effect: 'unsafe', kind: 'diverged' },
  'asked for approval, never started: awaits it':         { journal: [intent(), requested], effect: 'unsafe', kind: 'await_approval' },
  'gated now, intent only: awaits approval':              { journal: [intent()], gated: true, effect: 'unsafe', kind: 'await_approval' },
  'approved and decided, not started: awaits approval':   { journal: [intent(), requested, decided('approve')], effect: 'unsafe', kind: 'await_approval' },
  'approved and started, lost, unsafe: needs attention':  { journal: [intent(), requested, decided('approve'), control('approved_call_started')], effect: 'unsafe', kind: 'needs_attention' },
  'approved and started, lost, idempotent: reruns':       { journal: [intent(), requested, decided('approve'), control('approved_call_started')], effect: 'idempotent', kind: 'rerun' },
  'not started before the end: retried':                  { journal: [intent(), control('not_started')], effect: 'unsafe', kind: 'retry' },
  'not started, then retried and lost: needs attention':  { journal: [intent(), control('not_started'), control('retry_started')], effect: 'unsafe', kind: 'needs_attention' },
  'an input wait waits again':                            { journal: [intent('input.wait', '{"name":"x"}')], call: wait, effect: 'unsafe', kind: 'await_input' },
  'a human skipped the lost call: skip':                  { journal: [intent(), attention('skip', '7')], effect: 'unsafe', kind: 'skip' },
  'a human chose to retry it: retry':                     { journal: [intent(), attention('retry')], effect: 'unsafe', kind: 'retry' },
  'a human retry that started and was lost again':        { journal: [intent(), attention('retry'), control('retry_started')], effect: 'unsafe', kind: 'needs_attention' },
  'lost and unsafe: needs attention':                     { journal: [intent()], effect: 'unsafe', kind: 'needs_attention' },
  'lost and keyed: reruns (the key dedupes)':             { journal: [intent()], effect: 'keyed', kind: 'rerun' },
  'lost and read-only: reruns':                           { journal: [intent()], effect: 'read', kind: 'rerun' },
  'refused by a budget, outcome lost: refused again':     { journal: [refusedIntent], effect: 'read', kind: 'refused' },
  'refused by a budget, outcome recorded: replays':       { journal: [refusedIntent, outcome], effect: 'unsafe', kind: 'replay' },
};

describe('decideCall', () => {
  it.each(Object.entries(CALLS))('%s', (_, row) => {
    const decision = decideCall(row.call ?? pay, new JournalMemory(row.journal), {
      needsApproval: () => row.gated ?? false,
      effectOf: () => row.effect ?? 'read',
    });
    expect(decision.kind).toBe(row.kind);
  });

  it('carries what its execution needs', () => {
    const policy = { effectOf: (): ToolEffect => 'unsafe' };
    const state = (journal: JournalEntryInput[]) => new JournalMemory(journal);
    expect(decideCall(pay, state([]), policy)).toEqual({
      kind: 'live',
      intent: { tool: 'tools.pay', args: ARGS },
    });
    expect(decideCall(pay, state([...other('call-0'), intent(), outcome]), policy)).toEqual({
      kind: 'replay',
      position: 1,
    });
    expect(decideCall(pay, state([intent('tools.pay', '{"n":2}')]), policy)).toEqual({
      kind: 'diverged',
      recorded: { tool: 'tools.pay', args: '{"n":2}' },
      now: { tool: 'tools.pay', args: ARGS },
    });
    expect(decideCall(pay, state([intent(), attention('skip', '7')]), policy)).toEqual({
      kind: 'skip',
      payload: '7',
    });
    // A skip without a result gives the call null.
    expect(decideCall(pay, state([intent(), attention('skip')]), policy)).toEqual({
      kind: 'skip',
      payload: 'null',
    });
    expect(decideCall(pay, state([intent(), attention('retry')]), policy)).toEqual({
      kind: 'retry',
      why: 'human',
    });
    expect(decideCall(pay, state([intent(), control('not_started')]), policy)).toEqual({
      kind: 'retry',
      why: 'not_started',
    });
  });

  it('asks the policy only when the journal leaves the choice to it', () => {
    const asked: string[] = [];
    const policy = {
      needsApproval: () => (asked.push('approval'), false),
      effectOf: (): ToolEffect => (asked.push('effect'), 'unsafe'),
    };
    decideCall(pay, new JournalMemory([intent(), outcome]), policy);
    decideCall(pay, new JournalMemory([]), policy);
    expect(asked).toEqual([]);
    decideCall(pay, new JournalMemory([intent(), requested]), policy);
    expect(asked).toEqual([]);
    decideCall(pay, new JournalMemory([intent()]), policy);
    expect(asked).toEqual(['approval', 'effect']);
  });
});

// prettier-ignore
const APPROVALS: Record<string, { journal: JournalEntryInput[]; gated: boolean; kind: ApprovalStep['kind'] }> = {
  'not gated, never asked: runs':             { journal: [], gated: false, kind: 'none' },
  'gated, not asked: asks':                   { journal: [], gated: true, kind: 'request' },
  'gated, asked, undecided: waits':           { journal: [requested], gated: true, kind: 'wait' },
  'gated, rejected':                          { journal: [requested, decided('reject')], gated: true, kind: 'rejected' },
  'gated, approved: starts':                  { journal: [requested, decided('approve')], gated: true, kind: 'start' },
  'asked, no longer gated: starts':           { journal: [requested], gated: false, kind: 'start' },
};

describe('decideApproval', () => {
  it.each(Object.entries(APPROVALS))('%s', (_, row) => {
    const step = decideApproval(pay, new JournalMemory(row.journal), {
      needsApproval: () => row.gated,
      effectOf: () => 'unsafe',
    });
    expect(step.kind).toBe(row.kind);
  });

  it('gives the rejection its reason; a timer is never gated', () => {
    const state = new JournalMemory([requested, decided('reject')]);
    const policy = { needsApproval: () => true, effectOf: (): ToolEffect => 'unsafe' };
    expect(decideApproval(pay, state, policy)).toEqual({ kind: 'rejected', reason: 'no', expired: false });
    const timer: HostCall = { kind: 'timer', callId: 'call-2', delayMs: 5 };
    expect(decideApproval(timer, state, policy)).toEqual({ kind: 'none' });
  });
});

// prettier-ignore
const INPUTS: Record<string, { journal: JournalEntryInput[]; call?: HostCall & { kind: 'tool' }; kind: InputStep['kind'] }> = {
  'not asked: asks':                { journal: [], kind: 'request' },
  'asked, unanswered: waits':       { journal: [{ type: 'input_request', data: { call_id: 'call-1', name: 'x', timeout_seconds: null, deadline: null } }], kind: 'wait' },
  'answered':                       { journal: [{ type: 'input_provided', data: { call_id: 'call-1', name: 'x', value: '3', actor: 'a' } }], kind: 'answered' },
  'timed out: answered with null':  { journal: [{ type: 'input_timeout', data: { call_id: 'call-1', name: 'x' } }], kind: 'answered' },
  'no name: invalid':               { journal: [], call: { ...wait, args: {} }, kind: 'invalid' },
};

describe('decideInput', () => {
  it.each(Object.entries(INPUTS))('%s', (_, row) => {
    const call = row.call ?? wait;
    expect(decideInput(call, new JournalMemory(row.journal)).kind).toBe(row.kind);
  });

  it('carries the answer, or null for a timeout, and the request', () => {
    const call = {
      ...wait,
      args: { name: 'x', options: { timeoutSeconds: 2 } },
    };
    expect(decideInput(call, new JournalMemory([]))).toEqual({
      kind: 'request',
      name: 'x',
      timeoutSeconds: 2,
    });
    const timedOut = new JournalMemory([{ type: 'input_timeout', data: { call_id: 'call-1', name: 'x' } }]);
    expect(decideInput(call, timedOut)).toEqual({ kind: 'answered', value: null });
  });
});
