import { describe, expect, it } from 'vitest';
import { encodeValue, sha256Hex } from '../codec/index.ts';
import type { JournalEntry } from '../spec/index.ts';
import { stepsView } from './step-view.ts';
import { MAX_VIEW_VALUE_CHARS } from './view-value.ts';

// A task's view shows an agent step's tool arguments and results; one over MAX_VIEW_VALUE_CHARS is shown by its
// size and digest (ADR 0029), so the view costs what it shows. The events route gives the entry in full.

function entry(seq: number, type: string, data: Record<string, unknown>): JournalEntry {
  return { taskId: 't', seq, type, data, checksum: '', createdAt: '' } as unknown as JournalEntry;
}

describe('stepsView', () => {
  it('summarises a big tool argument or result and keeps small ones', () => {
    const big = encodeValue('x'.repeat(MAX_VIEW_VALUE_CHARS + 10));
    const small = encodeValue({ n: 1 });
    const steps = stepsView([
      entry(1, 'model_request', { step: 1 }),
      entry(2, 'code_block', { block: 1, code_hash: 'h' }),
      entry(3, 'tool_intent', { call_id: 's1.call-1', tool: 'tools.a', args: big }),
      entry(4, 'tool_outcome', { call_id: 's1.call-1', ok: true, payload: big }),
      entry(5, 'tool_intent', { call_id: 's1.call-2', tool: 'tools.a', args: small }),
      entry(6, 'tool_outcome', { call_id: 's1.call-2', ok: true, payload: small }),
    ]);
    const [first, second] = steps[0]?.tool_calls ?? [];
    const summary = { truncated: true, bytes: Buffer.byteLength(big), sha256: sha256Hex(big) };
    expect(first).toMatchObject({ arguments: summary, result: summary, ok: true });
    expect(second).toMatchObject({ arguments: { n: 1 }, result: { n: 1 }, ok: true });
  });

  it("names where a taken-over call's outcome came from (carried_from), and only then", () => {
    const v = encodeValue(1);
    const steps = stepsView([
      entry(1, 'model_request', { step: 2 }),
      entry(2, 'code_block', { block: 2, code_hash: 'h' }),
      entry(3, 'tool_intent', {
        call_id: 's2.call-1',
        tool: 'tools.a',
        args: v,
        carried_from: { call_id: 's1.call-1' },
      }),
      entry(4, 'tool_outcome', { call_id: 's2.call-1', ok: true, payload: v }),
      entry(5, 'tool_intent', { call_id: 's2.call-2', tool: 'tools.a', args: v }),
    ]);
    const [carried, ran] = steps[0]?.tool_calls ?? [];
    expect(carried).toMatchObject({ carried_from: { call_id: 's1.call-1' }, ok: true, result: 1 });
    expect(ran && 'carried_from' in ran).toBe(false);
  });
});
