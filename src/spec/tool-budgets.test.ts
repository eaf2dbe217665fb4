import { describe, expect, it } from 'vitest';
import { parseJournalSummary, summarizeJournal } from './journal-summary.ts';
import type { JournalEntry, JournalEntryInput } from './journal.ts';
import {
  checkTaskBudgets,
  emptyBudgetUsage,
  foldBudgetUsage,
  storedBudgetUsage,
  taskBudgetsFromWire,
  taskBudgetsToWire,
  tighterBudget,
} from './tool-budgets.ts';

// What a task used of its budgets is one fold of its journal (ADR 0044): the runner's ledger and the view's summary
// both read it, so they must agree on what counts and on each tool's time.

const at = (seconds: number) => new Date(Date.UTC(2026, 11, 6, 9, 0, seconds)).toISOString();

function entries(inputs: readonly [JournalEntryInput, number][]): JournalEntry[] {
  return inputs.map(([e, s], i) => ({
    ...e,
    taskId: 't',
    seq: i + 1,
    checksum: `c${i + 1}`,
    createdAt: at(s),
  }));
}

const intent = (callId: string, tool: string, more: Record<string, unknown> = {}): JournalEntryInput => ({
  type: 'tool_intent',
  data: { call_id: callId, tool, args: '{}', ...more },
});
const outcome = (callId: string): JournalEntryInput => ({
  type: 'tool_outcome',
  data: { call_id: callId, ok: true, payload: '1' },
});

describe('budget usage folded from a journal', () => {
  const journal = entries([
    [intent('call-1', 'tools.a', { cost: 2.5 }), 0],
    [outcome('call-1'), 3],
    // Waits 100 s for a human: only the time after its approval counts.
    [intent('call-2', 'tools.a'), 3],
    [
      {
        type: 'approval_request',
        data: { approval_id: 'call-2', call_id: 'call-2', tool: 'tools.a', args: '{}' },
      },
      3,
    ],
    [{ type: 'control', data: { action: 'approved_call_started', call_id: 'call-2' } }, 103],
    [outcome('call-2'), 105],
    // None of these counts.
    [intent('call-3', 'tools.a', { over_budget: 'tool_max_calls' }), 105],
    [outcome('call-3'), 105],
    [intent('call-4', 'tools.a', { carried_from: { task_id: 'old', call_id: 'call-9' } }), 105],
    [intent('call-5', 'timer'), 105],
    [intent('call-6', 'input.wait'), 105],
    [intent('call-7', 'egress.read'), 105],
    [intent('call-8', 'tools.b', { args: '{"codecall_too_large":{"bytes":9}}' }), 105],
    // Running: counted, no time yet.
    [intent('s2.call-1', 'tools.b', { cost: 0 }), 106],
  ]);

  it('counts calls, costs and each tool time, from each call (last) start to its outcome', () => {
    const usage = emptyBudgetUsage();
    for (const e of journal) foldBudgetUsage(usage, e, Date.parse(e.createdAt));
    expect(storedBudgetUsage(usage)).toEqual({
      calls: 3,
      cost: 3.5,
      tools: { 'tools.a': { calls: 2, wallMs: 5000 }, 'tools.b': { calls: 1, wallMs: 0 } },
      open: { 's2.call-1': { tool: 'tools.b', at: Date.parse(at(106)) } },
    });
  });

  it('is kept in the journal summary, the same folded in pieces, and survives its stored form', () => {
    const s = summarizeJournal(journal);
    expect(s.usage).toMatchObject({ calls: 3, cost: 3.5 });
    expect(summarizeJournal(journal.slice(5), summarizeJournal(journal.slice(0, 5)))).toEqual(s);
    expect(parseJournalSummary(JSON.stringify(s))).toEqual(s);
    expect(parseJournalSummary(JSON.stringify({ ...s, usage: { ...s.usage, calls: -1 } }))).toBeNull();
    expect(summarizeJournal(journal.slice(4, 5)).usage).toBeUndefined();
  });
});

describe('task budgets', () => {
  it('renames between the wire and the runtime, and checks either', () => {
    const wire = {
      max_calls: 3,
      max_cost: 1.5,
      tools: { 'gh.search': { max_calls: 0, max_wall_seconds: 2 } },
    };
    const runtime = taskBudgetsFromWire(wire);
    expect(runtime).toEqual({
      maxCalls: 3,
      maxCost: 1.5,
      tools: { 'gh.search': { maxCalls: 0, maxWallSeconds: 2 } },
    });
    expect(checkTaskBudgets(runtime)).toEqual(runtime);
    expect(taskBudgetsToWire(runtime)).toEqual(wire);
    expect(checkTaskBudgets({})).toBeNull();
    expect(() => checkTaskBudgets({ tools: { 'gh.search': { maxCalls: -1 } } })).toThrow(
      'tool_constraints.budgets.tools["gh.search"].max_calls must be an integer of 0 or more',
    );
  });

  it("names a tool as programs call it: an MCP server's member and a name with '-' too", () => {
    const tools = { 'tools.github.create_issue': { maxCalls: 1 }, 'tools.lookup-user': { maxCalls: 2 } };
    expect(checkTaskBudgets({ tools })).toEqual({ tools });
    expect(() => checkTaskBudgets({ tools: { 'tools.a.b.c': { maxCalls: 1 } } })).toThrow(
      'must be named "namespace.name"',
    );
  });

  it("tightens a tool's declared budget with the task's: the smaller of each", () => {
    expect(tighterBudget({ maxCalls: 5 }, { maxCalls: 10, maxWallSeconds: 3 })).toEqual({
      maxCalls: 5,
      maxWallSeconds: 3,
    });
    expect(tighterBudget(undefined, { maxCalls: 2 })).toEqual({ maxCalls: 2 });
    expect(tighterBudget(undefined, undefined)).toBeUndefined();
  });
});
