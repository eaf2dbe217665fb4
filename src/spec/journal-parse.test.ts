import { describe, expect, it } from 'vitest';
import type { ControlAction, JournalControl } from './journal-control.ts';
import type { JournalEntryType } from './journal-entry.ts';
import { journalEntryProblem, parseJournalEntry } from './journal-parse.ts';
import { callIdOf } from './journal.ts';
import type { JournalEntryInput } from './journal.ts';

/** One valid entry of every type (as the writers write them), keyed so a new type must be added here. */
const ENTRIES: { readonly [T in Exclude<JournalEntryType, 'control'>]: JournalEntryInput & { type: T } } = {
  task_input: {
    type: 'task_input',
    data: { code_hash: 'h', tools_hash: 't', language: 'javascript', seed: 1, limits: null },
  },
  manifest: {
    type: 'manifest',
    data: { tools_hash: 't', engine: 'quickjs 1', accepted: 'the tools changed' },
  },
  model_request: { type: 'model_request', data: { step: 1, messages: [{ role: 'user', content: 'hi' }] } },
  model_reply: {
    type: 'model_reply',
    data: {
      step: 1,
      content: null,
      tool_calls: [{ id: 'c', name: 'run', arguments: '{}' }],
      finish_reason: 'tool_calls',
      usage: { promptTokens: 1, completionTokens: 2 },
      model: 'm',
    },
  },
  code_block: { type: 'code_block', data: { block: 1, code_hash: 'h', code: 'return 1' } },
  step_result: {
    type: 'step_result',
    data: {
      step: 1,
      ok: false,
      final: false,
      output: null,
      error: { code: 'E', name: 'Error', message: 'm' },
      logs: [],
    },
  },
  tool_intent: {
    type: 'tool_intent',
    data: { call_id: 'call-1', tool: 'a.b', args: '{}', idempotency_key: 't:0:call-1' },
  },
  tool_outcome: { type: 'tool_outcome', data: { call_id: 'call-1', ok: true, payload: '1', clock: 5 } },
  carry_offer: {
    type: 'carry_offer',
    data: { origin: { task_id: 't1', call_id: 'call-2' }, tool: 'a.b', args: '{}', payload: '1' },
  },
  clock: { type: 'clock', data: { clock: 5 } },
  approval_request: {
    type: 'approval_request',
    data: { approval_id: 'call-1', call_id: 'call-1', tool: 'a.b', args: '{}' },
  },
  approval_decision: {
    type: 'approval_decision',
    data: { approval_id: 'call-1', decision: 'reject', actor: 'key:a', reason: '' },
  },
  input_request: {
    type: 'input_request',
    data: { call_id: 'call-1', name: 'x', timeout_seconds: 2, deadline: 2000 },
  },
  input_provided: { type: 'input_provided', data: { call_id: 'call-1', name: 'x', value: '3', actor: 'a' } },
  input_timeout: { type: 'input_timeout', data: { call_id: 'call-1', name: 'x' } },
  attention_decision: {
    type: 'attention_decision',
    data: { call_id: 'call-1', action: 'skip', payload: '1', actor: 'a', reason: 'r' },
  },
};

const CONTROLS: { readonly [A in ControlAction]: JournalControl & { action: A } } = {
  attempt: { action: 'attempt', stalled: 0 },
  pause: { action: 'pause', actor: 'a' },
  resume: { action: 'resume', actor: 'a' },
  cancel: { action: 'cancel', actor: 'a', reason: '' },
  deadline: { action: 'deadline', deadline: '2026-01-01T00:00:00.000Z' },
  await_approval: { action: 'await_approval' },
  await_input: { action: 'await_input' },
  needs_attention: { action: 'needs_attention', call_id: null, tool: null, args: null },
  retry: { action: 'retry', code: 'TOOL_TIMEOUT', retry: 1, run_after: 5 },
  incompatible: { action: 'incompatible' },
  fail: { action: 'fail', actor: 'a', reason: '' },
  accept_changed_tools: { action: 'accept_changed_tools', actor: 'a', reason: 'forced resume' },
  approved_call_started: { action: 'approved_call_started', call_id: 'call-1' },
  retry_started: { action: 'retry_started', call_id: 'call-1' },
  not_started: { action: 'not_started', call_id: 'call-1' },
  revision_held: {
    action: 'revision_held',
    call_id: 'call-3',
    earlier: { origin: { call_id: 's1.call-1' }, tool: 'a.b', args: '{"x":1}' },
  },
};

const VALID: JournalEntryInput[] = [
  ...Object.values(ENTRIES),
  ...Object.values(CONTROLS).map((data): JournalEntryInput => ({ type: 'control', data })),
];

describe('parseJournalEntry', () => {
  it.each(VALID.map((e) => [e.type === 'control' ? `control ${e.data.action}` : e.type, e] as const))(
    'parses a valid %s, keeping its data as it is',
    (_, entry) => {
      const parsed = parseJournalEntry(entry.type, entry.data);
      expect(parsed).toEqual({ entry });
      expect('entry' in parsed && parsed.entry.data).toBe(entry.data);
    },
  );

  it('keeps fields beyond the known ones, and takes optional ones absent', () => {
    expect(journalEntryProblem('clock', { clock: 1, note: 'x' })).toBeNull();
    expect(journalEntryProblem('tool_outcome', { call_id: 'c', ok: false, payload: '{}' })).toBeNull();
    expect(journalEntryProblem('control', { action: 'pause' })).toBeNull();
    expect(journalEntryProblem('code_block', { block: 0, code_hash: 'h' })).toBeNull();
    // As journals written by earlier versions have them.
    expect(
      journalEntryProblem('task_input', { code_hash: 'h', tools_hash: 't', language: 'javascript', seed: 1 }),
    ).toBeNull();
    expect(journalEntryProblem('control', { action: 'needs_attention' })).toBeNull();
  });

  // prettier-ignore
  it.each([
    ['clock', [], 'clock data is not an object'],
    ['clock', null, 'clock data is not an object'],
    ['clock', {}, 'clock.clock is not a number'],
    ['clock', { clock: '5' }, 'clock.clock is not a number'],
    ['tool_intent', { call_id: 'c', tool: 't' }, 'tool_intent.args is not a string'],
    ['tool_intent', { call_id: 1, tool: 't', args: '{}' }, 'tool_intent.call_id is not a string'],
    ['tool_intent', { call_id: 'c', tool: 't', args: '{}', idempotency_key: 3 }, 'tool_intent.idempotency_key is not absent or a string'],
    ['tool_outcome', { call_id: 'c', ok: 1, payload: '1' }, 'tool_outcome.ok is not a boolean'],
    ['approval_decision', { approval_id: 'a', decision: 'maybe', actor: 'x' }, 'approval_decision.decision is not "approve" or "reject"'],
    ['input_request', { call_id: 'c', name: 'x', timeout_seconds: null }, 'input_request.deadline is not a number or null'],
    ['attention_decision', { call_id: 'c', action: 'fail', actor: 'a', reason: '' }, 'attention_decision.action is not "retry" or "skip"'],
    ['control', {}, 'control action undefined is not known'],
    ['control', { action: 'pasue' }, 'control action "pasue" is not known'],
    ['control', { action: 'toString' }, 'control action "toString" is not known'],
    ['control', { action: 'attempt' }, 'control attempt.stalled is not a number'],
    ['control', { action: 'retry_started', call_id: null }, 'control retry_started.call_id is not a string'],
    ['control', { action: 'needs_attention', call_id: 'c', tool: 't', args: 1 }, 'control needs_attention.args is not absent or a string or null'],
    ['tool_intent', { call_id: 'c', tool: 't', args: '{}', carried_from: 'call-1' }, 'tool_intent.carried_from is not absent or a call origin {call_id, task_id?}'],
    ['tool_intent', { call_id: 'c', tool: 't', args: '{}', carried_from: { call_id: 'c', task_id: 3 } }, 'tool_intent.carried_from is not absent or a call origin {call_id, task_id?}'],
    ['carry_offer', { origin: { call_id: 'c' }, tool: 't', args: '{}' }, 'carry_offer.payload is not a string'],
    ['control', { action: 'revision_held', call_id: 'c', earlier: { tool: 't', args: '{}' } }, 'control revision_held.earlier is not a call {origin, tool, args}'],
    ['lunch', {}, 'entry type "lunch" is not known'],
    ['constructor', {}, 'entry type "constructor" is not known'],
  ])('refuses %s %j: %s', (type, data, problem) => {
    expect(journalEntryProblem(type, data)).toBe(problem);
    expect(parseJournalEntry(type, data)).toEqual({ problem });
  });
});

describe('callIdOf', () => {
  it('names the call of the entries about one, and null for the others', () => {
    const ids = VALID.map((e) => [e.type === 'control' ? e.data.action : e.type, callIdOf(e)]);
    expect(Object.fromEntries(ids.filter(([, id]) => id !== null))).toEqual({
      tool_intent: 'call-1',
      tool_outcome: 'call-1',
      approval_request: 'call-1',
      input_request: 'call-1',
      input_provided: 'call-1',
      input_timeout: 'call-1',
      attention_decision: 'call-1',
      approved_call_started: 'call-1',
      retry_started: 'call-1',
      not_started: 'call-1',
      revision_held: 'call-3',
    });
  });
});
