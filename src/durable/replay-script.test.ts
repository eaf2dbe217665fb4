import { describe, expect, it } from 'vitest';
import type { JournalEntryInput } from '../spec/index.ts';
import { buildReplayScript } from './replay-script.ts';

const intent = (id: string, args: string): JournalEntryInput => ({
  type: 'tool_intent',
  data: { call_id: id, tool: 'tools.echo', args, idempotency_key: `t:0:${id}` },
});
const outcome = (id: string, payload: string, clock?: number): JournalEntryInput => ({
  type: 'tool_outcome',
  data: { call_id: id, ok: payload !== 'err', payload, ...(clock === undefined ? {} : { clock }) },
});

describe('buildReplayScript', () => {
  it('lists outcomes in journal order with their intents, skipping lost calls and other entries', () => {
    const script = buildReplayScript(
      [
        intent('call-1', '{"i":1}'),
        intent('call-2', '{"i":2}'),
        {
          type: 'approval_request',
          data: { approval_id: 'call-3', call_id: 'call-3', tool: 't.x', args: '{}' },
        },
        intent('call-3', '{"i":3}'),
        outcome('call-2', '{"v":2}', 20),
        outcome('call-1', 'err', 30),
      ],
      5,
    );
    expect(script).toEqual([
      { callId: 'call-2', tool: 'tools.echo', args: '{"i":2}', ok: true, payload: '{"v":2}', clock: 20 },
      { callId: 'call-1', tool: 'tools.echo', args: '{"i":1}', ok: false, payload: 'err', clock: 30 },
    ]);
  });

  it('gives an outcome journaled without a clock the fallback clock', () => {
    expect(buildReplayScript([intent('call-1', '{}'), outcome('call-1', '1')], 77)?.[0]?.clock).toBe(77);
  });

  it('is null for a journal a script cannot express: an outcome without intent, a call with two outcomes', () => {
    expect(buildReplayScript([outcome('call-1', '1', 1)], 0)).toBeNull();
    const twice = [intent('call-1', '{}'), outcome('call-1', '1', 1), outcome('call-1', '2', 2)];
    expect(buildReplayScript(twice, 0)).toBeNull();
  });
});
