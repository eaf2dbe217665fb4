import { describe, expect, it } from 'vitest';
import { resumableFrom } from '../../src/durable/paused-check.ts';
import { PausedVms } from '../../src/durable/paused-vms.ts';
import type { KeptVm } from '../../src/durable/paused-vms.ts';
import type { JournalEntryInput, PausedVm } from '../../src/internal.ts';

// When a kept VM may stand in for a replay (ADR 0056), and the byte budget it is kept in. The integration side is
// paused-vm.test.ts; here every case the check must refuse, one by one, and the eviction order.

const driver = { name: 'd' };
const vmOf = (outCalls: string[], bytes = 100): PausedVm => ({
  engine: 'e',
  bytes,
  outCalls,
  toolCalls: 3,
  state: null,
});

let seq = 0;
const stored = (e: JournalEntryInput): JournalEntryInput =>
  ({ ...e, seq: ++seq, checksum: `c${seq}` }) as never;
const intent = (id: string, args = '{}') =>
  stored({ type: 'tool_intent', data: { call_id: id, tool: 'tools.echo', args } });
const outcome = (id: string) =>
  stored({ type: 'tool_outcome', data: { call_id: id, ok: true, payload: '1' } });

function journal() {
  seq = 0;
  const before = [intent('call-1'), outcome('call-1'), intent('call-2'), outcome('call-2'), intent('call-3')];
  const last = before.at(-1) as unknown as { seq: number; checksum: string };
  const kept: KeptVm = {
    vm: vmOf(['call-3']),
    driver: driver as never,
    fingerprint: 'f',
    mark: { seq: last.seq, checksum: last.checksum },
    logs: [],
  };
  return { before, kept };
}

const now = (
  recorded: readonly JournalEntryInput[],
  over: Partial<{ driver: unknown; fingerprint: string }> = {},
) => ({
  driver,
  fingerprint: 'f',
  recorded,
  journalId: (id: string) => id,
  ...over,
});

describe('resumableFrom', () => {
  it('takes a journal that only went on with the out call (its outcome, approvals, run bookkeeping)', () => {
    const { before, kept } = journal();
    expect(resumableFrom(kept, now(before))).toEqual({ delivered: 2 });
    const after = [
      ...before,
      stored({ type: 'control', data: { action: 'pause' } }),
      stored({ type: 'control', data: { action: 'attempt' } } as never),
      outcome('call-3'),
    ];
    expect(resumableFrom(kept, now(after))).toEqual({ delivered: 2 });
  });

  it('refuses another driver or request (engine, program, tools, seed, limits, clock)', () => {
    const { before, kept } = journal();
    expect(resumableFrom(kept, now(before, { driver: {} }))).toBeNull();
    expect(resumableFrom(kept, now(before, { fingerprint: 'g' }))).toBeNull();
  });

  it('refuses a journal whose entry at the mark is another (checksum) or gone', () => {
    const { before, kept } = journal();
    const forged = [
      ...before.slice(0, -1),
      { ...before.at(-1), checksum: 'x' } as unknown as JournalEntryInput,
    ];
    expect(resumableFrom(kept, now(forged))).toBeNull();
    expect(resumableFrom(kept, now(before.slice(0, -1)))).toBeNull();
    expect(
      resumableFrom(kept, now(before.map((e) => ({ type: e.type, data: e.data }) as JournalEntryInput))),
    ).toBeNull();
  });

  it.each([
    [
      'a human decision on a lost call',
      () => stored({ type: 'attention_decision', data: { call_id: 'call-3', action: 'skip' } } as never),
    ],
    ['a retry', () => stored({ type: 'control', data: { action: 'retry', actor: 'ops' } } as never)],
    [
      'a held revision call',
      () =>
        stored({
          type: 'control',
          data: { action: 'revision_held', call_id: 'call-3', earlier: {} },
        } as never),
    ],
    [
      'changed tools accepted',
      () => stored({ type: 'control', data: { action: 'accept_changed_tools', actor: 'a', reason: 'r' } }),
    ],
    [
      'a needs_attention pause',
      () => stored({ type: 'control', data: { action: 'needs_attention', call_id: 'call-3' } } as never),
    ],
    ['a call that was not out', () => intent('call-4')],
    [
      'an approval of another call',
      () =>
        stored({ type: 'approval_decision', data: { approval_id: 'call-9', decision: 'approve' } } as never),
    ],
  ])('refuses a journal that went on with %s', (_what, entry) => {
    const { before, kept } = journal();
    expect(resumableFrom(kept, now([...before, entry()]))).toBeNull();
  });

  it('refuses outcomes the guest was not handed before ones it was', () => {
    seq = 0;
    const recorded = [intent('call-1'), intent('call-2'), outcome('call-1'), outcome('call-2')];
    const last = recorded.at(-1) as unknown as { seq: number; checksum: string };
    const kept: KeptVm = {
      vm: vmOf(['call-1']),
      driver: driver as never,
      fingerprint: 'f',
      mark: last,
      logs: [],
    };
    expect(resumableFrom(kept, now(recorded))).toBeNull();
  });
});

describe('PausedVms', () => {
  const kept = (bytes: number): KeptVm => ({
    vm: vmOf([], bytes),
    driver: driver as never,
    fingerprint: '',
    mark: null,
    logs: [],
  });

  it('keeps within its budget, least recently paused out first, each taken once', () => {
    const vms = new PausedVms(250);
    expect(vms.keep('a', kept(100))).toBe(true);
    expect(vms.keep('b', kept(100))).toBe(true);
    expect(vms.keep('c', kept(100))).toBe(true);
    expect(vms.counts.evicted).toBe(1);
    expect(vms.take('a')).toBeUndefined();
    expect(vms.take('b')?.vm.bytes).toBe(100);
    expect(vms.take('b')).toBeUndefined();
    expect(vms.heldBytes).toBe(100);
    expect(vms.keep('big', kept(251))).toBe(false);
    expect(vms.counts).toMatchObject({ hits: 1, misses: 2, kept: 3 });
  });

  it('keeps a journal only with its VM, ending at its mark, within the budget; dropped with the VM', () => {
    const entries = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        taskId: 't',
        seq: i + 1,
        type: 'clock' as const,
        data: { clock: i },
        checksum: `c${i + 1}`,
        createdAt: '',
      }));
    const marked = (seq: number): KeptVm => ({ ...kept(100), mark: { seq, checksum: `c${seq}` } });
    const vms = new PausedVms(10_000);
    // No VM kept there, or one without a mark: nothing kept.
    expect(vms.keepJournal('a', () => entries(3))).toBe(false);
    vms.keep('a', kept(100));
    expect(vms.keepJournal('a', () => entries(3))).toBe(false);
    vms.keep('a', marked(3));
    // Not ending at the mark (the run cannot tell the journal up to it): nothing kept.
    expect(vms.keepJournal('a', () => entries(2))).toBe(false);
    expect(vms.keepJournal('a', () => undefined)).toBe(false);
    expect(vms.keepJournal('a', () => entries(3))).toBe(true);
    expect(vms.journalOf('a')?.mark).toEqual({ seq: 3, checksum: 'c3' });
    const withJournal = vms.heldBytes;
    expect(withJournal).toBeGreaterThan(100);
    // Over the budget's room: the VM stays, its journal is not kept.
    vms.keep('b', marked(200));
    expect(vms.keepJournal('b', () => entries(200))).toBe(false);
    expect(vms.journalOf('b')).toBeUndefined();
    vms.drop('a');
    expect(vms.journalOf('a')).toBeUndefined();
    expect(vms.heldBytes).toBe(100);
  });
});
