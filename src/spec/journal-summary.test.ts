import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseJournalSummary, summarizeJournal, summaryRows } from './journal-summary.ts';
import type { JournalEntry, JournalEntryInput } from './journal.ts';

// The fold's revision fields (ADR 0034, 0035): a revision's view reads its counts and not-repeated offers from
// the summary, so the fold must agree with what the whole journal says.

function entries(inputs: readonly JournalEntryInput[]): JournalEntry[] {
  return inputs.map((e, i) => ({ ...e, taskId: 't', seq: i + 1, checksum: `c${i + 1}`, createdAt: '' }));
}

const offer = (callId: string, tool: string, effect?: 'read' | 'idempotent' | 'keyed' | 'unsafe') =>
  ({
    type: 'carry_offer',
    data: {
      origin: { task_id: 'old', call_id: callId },
      tool,
      args: '{}',
      payload: '1',
      ...(effect ? { effect } : {}),
    },
  }) as const;

describe('journal summary of a revision', () => {
  const journal = entries([
    { type: 'task_input', data: { code_hash: 'h', tools_hash: 'h', language: 'javascript' } },
    offer('c1', 'pay', 'unsafe'),
    offer('c2', 'lookup', 'read'),
    offer('c3', 'mail'),
    offer('c4', 'pay', 'keyed'),
    {
      type: 'tool_intent',
      data: { call_id: 'n1', tool: 'pay', args: '{}', carried_from: { task_id: 'old', call_id: 'c1' } },
    },
    { type: 'tool_intent', data: { call_id: 'n2', tool: 'lookup', args: '{}' } },
  ]);

  it('counts offers and carried calls and keeps the world-changing offers not taken, by their rows', () => {
    const s = summarizeJournal(journal);
    expect(s.offered).toBe(4);
    expect(s.carried).toBe(1);
    // c1 was taken over; c2 is a read (not worth reporting); c3 has no known effect (counts); c4 is keyed.
    expect(s.notRepeated).toEqual([
      { origin: 'old/c3', seq: 4 },
      { origin: 'old/c4', seq: 5 },
    ]);
    expect(summaryRows(s)).toEqual([1, 2, 4, 5, 7]);
  });

  it('survives its stored form, and a stored form with a bad offer is rebuilt', () => {
    const s = summarizeJournal(journal);
    expect(parseJournalSummary(JSON.stringify(s))).toEqual(s);
    expect(parseJournalSummary(JSON.stringify({ ...s, notRepeated: [{ origin: 'x', seq: 0 }] }))).toBeNull();
    expect(parseJournalSummary(JSON.stringify({ ...s, carried: -1 }))).toBeNull();
  });

  it('folds in pieces to the same summary as in one go', () => {
    const half = summarizeJournal(journal.slice(0, 3));
    expect(summarizeJournal(journal.slice(3), half)).toEqual(summarizeJournal(journal));
  });
});

describe('journal summary of big shown rows', () => {
  const big = 'a'.repeat(20_000);
  const journal = entries([
    { type: 'task_input', data: { code_hash: 'h', tools_hash: 'h', language: 'javascript' } },
    { type: 'approval_request', data: { approval_id: 'a1', call_id: 'c1', tool: 'pay', args: big } },
    { type: 'approval_request', data: { approval_id: 'a2', call_id: 'c2', tool: 'pay', args: '{"x":1}' } },
    offer('o1', 'pay', 'unsafe'),
  ]);

  it('keeps a big request light (its big fields by digest) and names only the small ones as rows to read', () => {
    const s = summarizeJournal(journal);
    const [a1, a2] = s.approvals;
    expect(a1?.light?.data).toMatchObject({ approval_id: 'a1', tool: 'pay' });
    expect(JSON.parse(String(a1?.light?.data.args))).toEqual({
      truncated: true,
      bytes: 20_000,
      sha256: createHash('sha256').update(big).digest('hex'),
    });
    expect(a2?.light).toBeUndefined();
    expect(summaryRows(s)).toEqual([1, 3, 4]);
    expect(parseJournalSummary(JSON.stringify(s))).toEqual(s);
    // Decided, it is gone with its light row.
    const decided = summarizeJournal(
      entries([
        ...journal,
        { type: 'approval_decision', data: { approval_id: 'a1', decision: 'approve', actor: 'x' } },
      ]),
    );
    expect(decided.approvals.map((a) => a.id)).toEqual(['a2']);
  });
});

describe('journal summary of big anchors', () => {
  const big = 'x'.repeat(64 * 1024);
  const journal = entries([
    { type: 'task_input', data: { code_hash: 'h', tools_hash: 'h', language: 'javascript' } },
    { type: 'tool_intent', data: { call_id: 'call-1', tool: 'echo', args: big } },
    { type: 'tool_outcome', data: { call_id: 'call-1', ok: true, payload: big, clock: 1 } },
    { type: 'tool_intent', data: { call_id: 'call-2', tool: 'echo', args: '{}' } },
    { type: 'tool_outcome', data: { call_id: 'call-2', ok: true, payload: big, clock: 2 } },
  ]);

  it('names the big rows among the first two and the head, and a view reads none of them', () => {
    // A running task whose head is a big outcome: each view would otherwise read and hash it.
    const s = summarizeJournal(journal);
    expect(s.bigAnchors).toEqual([2, 5]);
    expect(summaryRows(s)).toEqual([1]);
    // Once the head moves past a big outcome, it is no longer an anchor; the early ones stay.
    const moved = summarizeJournal(
      entries([...journal, { type: 'control', data: { action: 'pause' } }]).slice(5),
      s,
    );
    expect(moved.bigAnchors).toEqual([2]);
    expect(summaryRows(moved)).toEqual([1, 6]);
    expect(summarizeJournal(journal.slice(0, 1)).bigAnchors).toBeUndefined();
  });

  it('survives its stored form, and a stored form with a bad anchor is rebuilt', () => {
    const s = summarizeJournal(journal);
    expect(parseJournalSummary(JSON.stringify(s))).toEqual(s);
    expect(parseJournalSummary(JSON.stringify({ ...s, bigAnchors: [0] }))).toBeNull();
    expect(parseJournalSummary(JSON.stringify({ ...s, bigAnchors: 'no' }))).toBeNull();
  });
});
