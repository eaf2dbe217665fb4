import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { HostCall } from '../spec/index.ts';
import { JournalingHost } from './journaling-host.ts';

// A call that waits for a human never settles. Once its execution is over, nothing may keep the host (and the
// execution's state with it) alive: 10,000 paused tasks must cost nothing in memory.

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function waitingHost(collected: FinalizationRegistry<string>, name: string): void {
  const host = new JournalingHost({
    live: { call: () => Promise.reject(new Error('must not run')) },
    recorded: [],
    append: () => Promise.resolve(),
    effectOf: () => 'unsafe',
    clock: () => 0,
    needsApproval: () => true,
    onFatal: () => undefined,
  });
  collected.register(host, name);
  const call: HostCall = { kind: 'tool', callId: 'call-1', namespace: 'tools', name: 'pay', args: { n: 1 } };
  void host.call(call, new AbortController().signal);
}

describe('JournalingHost waits', () => {
  it('lets the host of a call waiting for approval be collected once nothing else holds it', async () => {
    const gone: string[] = [];
    const collected = new FinalizationRegistry<string>((name) => gone.push(name));
    for (let i = 0; i < 3; i++) waitingHost(collected, `host-${i}`);
    for (let i = 0; i < 10 && gone.length < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
      gc();
    }
    expect(gone.sort()).toEqual(['host-0', 'host-1', 'host-2']);
  });
});

describe('JournalingHost call ids', () => {
  it('ends the execution when one call id is asked for twice: two calls never share an idempotency key', async () => {
    const fatal: { code: string; details?: unknown }[] = [];
    const ran: unknown[] = [];
    const host = new JournalingHost({
      live: {
        call: (c) => {
          ran.push(c.kind === 'tool' ? c.idempotencyKey : null);
          return Promise.resolve({ ok: true, value: 1 });
        },
      },
      recorded: [],
      append: () => Promise.resolve(),
      effectOf: () => 'unsafe',
      clock: () => 0,
      keyPrefix: 'task:0',
      onFatal: (e) => fatal.push({ code: e.code, details: e.details }),
    });
    const signal = new AbortController().signal;
    const call = (n: number): HostCall => ({
      kind: 'tool',
      callId: 'call-1',
      namespace: 'tools',
      name: 'pay',
      args: { n },
    });
    await host.call(call(1), signal);
    void host.call(call(2), signal);
    await new Promise((r) => setTimeout(r, 10));
    expect(fatal).toEqual([{ code: 'PROTOCOL_VIOLATION', details: { call_id: 'call-1' } }]);
    expect(ran).toEqual(['task:0:call-1']);
  });
});
