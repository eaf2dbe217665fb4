import { MessageChannel, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { BELLS, SPIN_PROBE_EVERY, SpinPolicy, TO_MAIN, awaitMessage } from './doorbell.ts';

// A thread that posts on the port after `delayMs`, then rings the bell the way ring() does (notifying only a
// receiver that said it sleeps): if the flag protocol were wrong, the wait would run to its 30 s window.
const POSTER = `
const { workerData } = require('node:worker_threads');
const bells = new Int32Array(workerData.bells);
setTimeout(() => {
  workerData.port.postMessage({ hello: 'from the other thread' });
  Atomics.add(bells, ${TO_MAIN}, 1);
  if (Atomics.load(bells, ${TO_MAIN} + 2) !== 0) Atomics.notify(bells, ${TO_MAIN});
}, workerData.delayMs);
`;

describe('awaitMessage', () => {
  it('sleeps on the bell and returns the message another thread posts meanwhile', async () => {
    const bells = new Int32Array(new SharedArrayBuffer(BELLS * 4));
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(POSTER, {
      eval: true,
      workerData: { bells: bells.buffer, port: port2, delayMs: 50 },
      transferList: [port2],
    });
    try {
      await new Promise((resolve) => worker.once('online', resolve));
      // No spin at all: only the bell can wake this thread before the generous window ends.
      const policy = new SpinPolicy(0);
      const started = performance.now();
      const received = awaitMessage(port1, bells, TO_MAIN, policy, 30_000);
      expect(received?.message).toEqual({ hello: 'from the other thread' });
      expect(performance.now() - started).toBeLessThan(25_000);
    } finally {
      port1.close();
      await worker.terminate();
    }
  });

  it('returns undefined once its window is over, and the waiter stops spinning', () => {
    const bells = new Int32Array(new SharedArrayBuffer(BELLS * 4));
    const { port1, port2 } = new MessageChannel();
    const policy = new SpinPolicy(0.05);
    expect(awaitMessage(port1, bells, TO_MAIN, policy, 2)).toBeUndefined();
    expect(policy.spinFor).toBe(0);
    port1.close();
    port2.close();
  });

  it('reads a message already on the port without waiting, and a ring without a message does not end the wait', () => {
    const bells = new Int32Array(new SharedArrayBuffer(BELLS * 4));
    const { port1, port2 } = new MessageChannel();
    port2.postMessage(1);
    expect(awaitMessage(port1, bells, TO_MAIN, new SpinPolicy(0), 1000)?.message).toBe(1);
    Atomics.add(bells, TO_MAIN, 1);
    expect(awaitMessage(port1, bells, TO_MAIN, new SpinPolicy(0), 5)).toBeUndefined();
    port1.close();
    port2.close();
  });
});

describe('SpinPolicy', () => {
  it('spins while answers come within the spin phase, and probes one wait in SPIN_PROBE_EVERY after', () => {
    const policy = new SpinPolicy(0.025);
    expect(policy.spinFor).toBe(0.025);
    policy.observe(0.01);
    expect(policy.spinFor).toBe(0.025);
    policy.observe(0.2);
    const spins = Array.from({ length: SPIN_PROBE_EVERY * 2 }, () => policy.spinFor);
    expect(spins.filter((s) => s > 0)).toHaveLength(2);
    policy.observe(0.01);
    expect(policy.spinFor).toBe(0.025);
  });
});
