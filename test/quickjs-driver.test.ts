import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuickJsDriver, defineTool, runProgram } from '../src/internal.ts';
import type { QuickJsDriver } from '../src/internal.ts';

// Behaviour specific to the quickjs driver's worker pool (the shared suites are in test/conformance).
describe('quickjs driver pool', () => {
  let driver: QuickJsDriver;
  beforeAll(async () => {
    driver = createQuickJsDriver({ workers: 2, warmVmsPerWorker: 2 });
    await driver.ready();
  });
  afterAll(() => driver.close());

  it('keeps the host event loop free while a guest spins', async () => {
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 10);
    const result = await runProgram({ driver, code: 'while (true) {}', limits: { timeoutMs: 400 } });
    clearInterval(timer);
    expect(result.status === 'failed' && result.error.code).toBe('TIMEOUT');
    // A blocked loop would tick once or twice; a free one ticks about 40 times.
    expect(ticks).toBeGreaterThan(10);
  });

  it('reports the time spent computing inside the guest apart from the time spent waiting', async () => {
    const nap = defineTool({
      name: 'nap',
      description: '',
      effect: 'read',
      execute: () => new Promise((r) => setTimeout(() => r('ok'), 300)),
    });
    const waiting = await runProgram({ driver, code: 'return await tools.nap()', tools: [nap] });
    const spinning = await runProgram({ driver, code: 'let n = 0; while (n < 3e6) n++; return n;' });
    expect(waiting.resources.wallMs).toBeGreaterThan(290);
    expect(waiting.resources.cpuMs).toBeLessThan(100);
    expect(spinning.resources.cpuMs).toBeGreaterThan(5);
    expect(spinning.resources.cpuMs).toBeLessThanOrEqual(spinning.resources.wallMs);
  });

  it('replaces a worker that dies and fails only the executions it held', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wait = defineTool({
      name: 'wait',
      description: '',
      effect: 'read',
      execute: () => gate.then(() => 'released'),
    });
    const held = [0, 1, 2, 3].map(() =>
      runProgram({ driver, code: 'return await tools.wait()', tools: [wait] }),
    );
    await new Promise((r) => setTimeout(r, 300));
    const workers = (driver as unknown as { workers: { terminate(): Promise<number> }[] }).workers;
    await workers[0]?.terminate();
    release();
    const results = await Promise.all(held);
    const crashed = results.filter((r) => r.status === 'failed' && r.error.code === 'SANDBOX_CRASHED');
    const succeeded = results.filter((r) => r.status === 'succeeded' && r.value === 'released');
    expect(crashed.length).toBeGreaterThan(0);
    expect(succeeded.length).toBeGreaterThan(0);
    expect(crashed.length + succeeded.length).toBe(4);
    const after = await Promise.all([0, 1, 2, 3].map(() => runProgram({ driver, code: 'return 6 * 7' })));
    expect(after.map((r) => r.status === 'succeeded' && r.value)).toEqual([42, 42, 42, 42]);
  });

  it('rejects limits that make no sense, naming the field', async () => {
    const r = await runProgram({ driver, code: 'return 1', limits: { timeoutMs: -1 } });
    expect(r.status === 'failed' && r.error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(r.status === 'failed' && r.error.message).toContain('timeoutMs');
  });

  it('refuses a replay script with a call id it never issues or a repeated one', async () => {
    const step = { callId: 'call-1', tool: 'tools.echo', args: '{}', ok: true, payload: '1', clock: 0 };
    const execute = (replay: (typeof step)[]) =>
      driver.execute({
        code: 'return 1',
        language: 'javascript',
        tools: [],
        host: { call: () => Promise.reject(new Error('no host calls expected')) },
        replay,
      });
    for (const replay of [[{ ...step, callId: 'tool-1' }], [step, { ...step }]]) {
      const r = await execute(replay);
      expect(r.status === 'failed' && r.error.code).toBe('INVALID_ARGUMENT');
    }
    expect((await execute([step])).status).toBe('succeeded');
  });

  it("decodes a call's arguments on the host only when read, once", async () => {
    const seen: { lazy: boolean; wire: string | undefined; same: boolean; value: unknown }[] = [];
    const r = await driver.execute({
      code: 'await tools.refuse({ text: "y".repeat(1000) }); return await tools.echo({ n: 1 });',
      language: 'javascript',
      tools: [
        { namespace: 'tools', name: 'refuse' },
        { namespace: 'tools', name: 'echo' },
      ],
      host: {
        call: (call) => {
          if (call.kind !== 'tool') return Promise.reject(new Error('no timers expected'));
          // A getter until read: a host answering from the wire text alone (a size bound) never decodes.
          const lazy = typeof Object.getOwnPropertyDescriptor(call, 'args')?.get === 'function';
          if (call.name === 'refuse') {
            seen.push({ lazy, wire: call.argsJson, same: true, value: null });
            return Promise.resolve({ ok: true, value: null });
          }
          const first = call.args;
          seen.push({ lazy, wire: call.argsJson, same: first === call.args, value: first });
          return Promise.resolve({ ok: true, value: first });
        },
      },
    });
    expect(r.status === 'succeeded' && r.value).toEqual({ n: 1 });
    expect(seen.map((s) => s.lazy)).toEqual([true, true]);
    expect(seen[0]?.wire).toContain('y'.repeat(1000));
    expect(seen[1]).toMatchObject({ same: true, value: { n: 1 } });
  });

  it('runs a request with a non-default memory limit in a fresh VM', async () => {
    const small = await runProgram({
      driver,
      code: 'return new Uint8Array(8e6).length',
      limits: { memoryBytes: 4 << 20 },
    });
    expect(small.status === 'failed' && small.error.code).toBe('MEMORY_LIMIT');
    const big = await runProgram({
      driver,
      code: 'return new Uint8Array(8e6).length',
      limits: { memoryBytes: 32 << 20 },
    });
    expect(big.status === 'succeeded' && big.value).toBe(8e6);
  });
});

describe('quickjs driver lifecycle', () => {
  it('fails running executions and refuses new ones once closed', async () => {
    const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    await driver.ready();
    const running = runProgram({ driver, code: 'while (true) {}' });
    await new Promise((r) => setTimeout(r, 100));
    await driver.close();
    const r = await running;
    expect(r.status === 'failed' && r.error.code).toBe('POOL_CLOSED');
    await expect(runProgram({ driver, code: 'return 1' })).rejects.toMatchObject({ code: 'POOL_CLOSED' });
  });
});
