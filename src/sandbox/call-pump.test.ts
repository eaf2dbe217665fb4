import { afterEach, describe, expect, it, vi } from 'vitest';
import type {
  ExecutionHost,
  ExecutionLimits,
  ExecutionRequest,
  ExecutionResult,
  HostCall,
  HostOutcome,
} from '../spec/index.ts';
import { CallPump } from './call-pump.ts';
import type { CallPumpOptions, GuestFailure, GuestTransport } from './call-pump.ts';
import { DEFAULT_LIMITS } from '../spec/index.ts';

// The call pump against an in-memory transport: what a driver's guest would receive, in order.

interface Delivery {
  id: string;
  ok: boolean;
  payload: string;
  clockMs: number;
}

/** The guest's side of the wire: every delivery, interrupt and kill, in the order they happened. */
class MemoryTransport implements GuestTransport<HostCall> {
  readonly delivered: Delivery[] = [];
  readonly interrupts: GuestFailure[] = [];
  kills = 0;
  hostCall(call: HostCall): HostCall {
    if (call.callId === 'bad') throw new Error('no such tool');
    return call;
  }
  deliver(call: HostCall, ok: boolean, payload: string, clockMs: number): void {
    this.delivered.push({ id: call.callId, ok, payload, clockMs });
  }
  interrupt(error: GuestFailure): void {
    this.interrupts.push(error);
  }
  kill(): void {
    this.kills += 1;
  }
}

/** A host whose calls settle when the test says so. */
class ManualHost implements ExecutionHost {
  readonly started: string[] = [];
  readonly signals = new Map<string, AbortSignal>();
  readonly logs: string[] = [];
  replayDone = 0;
  private readonly pending = new Map<string, (outcome: HostOutcome) => void>();
  call(call: HostCall, signal: AbortSignal): Promise<HostOutcome> {
    this.started.push(call.callId);
    this.signals.set(call.callId, signal);
    return new Promise((resolve) => this.pending.set(call.callId, resolve));
  }
  onLog(entry: { level: string; message: string }): void {
    this.logs.push(`${entry.level}:${entry.message}`);
  }
  onReplayDone(): void {
    this.replayDone += 1;
  }
  /** Settles a call and lets its delivery happen. */
  async settle(id: string, value: unknown = id): Promise<void> {
    const resolve = this.pending.get(id);
    if (!resolve) throw new Error(`${id} is not running`);
    this.pending.delete(id);
    resolve({ ok: true, value, clock: 7 });
    await flush();
  }
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

const tool = (id: string): HostCall => ({
  kind: 'tool',
  callId: id,
  namespace: 'tools',
  name: 'echo',
  args: {},
});
const timer = (id: string): HostCall => ({ kind: 'timer', callId: id, delayMs: 5 });

function setup(
  overrides: { limits?: Partial<ExecutionLimits>; request?: Partial<ExecutionRequest> } & Partial<
    Pick<CallPumpOptions<HostCall>, 'graceMs' | 'hostLimits'>
  > = {},
) {
  const host = new ManualHost();
  const transport = new MemoryTransport();
  const results: ExecutionResult[] = [];
  const pump = new CallPump<HostCall>({
    request: { code: '', language: 'python', tools: [], host, clock: () => 42, ...overrides.request },
    limits: { ...DEFAULT_LIMITS, ...overrides.limits },
    transport,
    graceMs: overrides.graceMs ?? 0,
    hostLimits: overrides.hostLimits ?? true,
    onEnd: (r) => results.push(r),
  });
  return { host, transport, pump, results };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('CallPump', () => {
  it('delivers outcomes in the order they settle, with the outcome clock or the request clock', async () => {
    const { host, transport, pump } = setup();
    pump.call(tool('a'));
    pump.call(tool('b'));
    pump.call(tool('c'));
    expect(host.started).toEqual(['a', 'b', 'c']);
    await host.settle('c');
    await host.settle('a');
    await host.settle('b');
    expect(transport.delivered.map((d) => d.id)).toEqual(['c', 'a', 'b']);
    expect(transport.delivered[0]).toEqual({ id: 'c', ok: true, payload: '"c"', clockMs: 7 });
  });

  it('serves at most maxConcurrentToolCalls calls at once, the waiting ones oldest first; timers take no slot', async () => {
    const { host, transport, pump } = setup({ limits: { maxConcurrentToolCalls: 2 } });
    for (const id of ['a', 'b', 'c', 'd']) pump.call(tool(id));
    pump.timer(timer('t'));
    expect(host.started).toEqual(['a', 'b', 't']);
    await host.settle('b');
    expect(host.started).toEqual(['a', 'b', 't', 'c']);
    await host.settle('t');
    expect(host.started).toHaveLength(4);
    await host.settle('a');
    expect(host.started).toEqual(['a', 'b', 't', 'c', 'd']);
    await host.settle('d');
    await host.settle('c');
    expect(transport.delivered.map((d) => d.id)).toEqual(['b', 't', 'a', 'd', 'c']);
  });

  it('sends a call given up while queued to the host at once, without a slot; the queue goes on', async () => {
    const { host, transport, pump } = setup({ limits: { maxConcurrentToolCalls: 1 } });
    for (const id of ['a', 'b', 'c']) pump.call(tool(id));
    expect(host.started).toEqual(['a']);
    expect(pump.cancelQueued((c) => c.callId === 'b')).toBe(true);
    // The host decides it (a durable one journals it); it took no slot: 'a' still holds the only one.
    expect(host.started).toEqual(['a', 'b']);
    expect(pump.cancelQueued((c) => c.callId === 'b')).toBe(false);
    expect(pump.cancelQueued((c) => c.callId === 'a')).toBe(false);
    await host.settle('b');
    expect(host.started).toEqual(['a', 'b']);
    await host.settle('a');
    expect(host.started).toEqual(['a', 'b', 'c']);
    await host.settle('c');
    expect(transport.delivered.map((d) => d.id)).toEqual(['b', 'a', 'c']);
  });

  it('delivers a host that throws, and a call the transport cannot build, as the call failing', async () => {
    const { transport, pump } = setup({ limits: { maxConcurrentToolCalls: 1 } });
    const failing: ExecutionHost = {
      call: () => {
        throw new Error('host broke');
      },
    };
    const other = new CallPump<HostCall>({
      request: { code: '', language: 'python', tools: [], host: failing, clock: () => 1 },
      limits: { ...DEFAULT_LIMITS, maxConcurrentToolCalls: 1 },
      transport,
      graceMs: 0,
      hostLimits: true,
      onEnd: () => undefined,
    });
    // Each synchronous failure frees its slot at once; the queue goes on.
    other.call(tool('x'));
    other.call(tool('y'));
    pump.call(tool('bad'));
    await flush();
    expect(transport.delivered.map((d) => [d.id, d.ok, JSON.parse(d.payload) as unknown])).toEqual([
      ['x', false, { code: 'TOOL_ERROR', name: 'ToolError', message: 'host broke' }],
      ['y', false, { code: 'TOOL_ERROR', name: 'ToolError', message: 'host broke' }],
      ['bad', false, { code: 'TOOL_ERROR', name: 'ToolError', message: 'no such tool' }],
    ]);
    other.finish({ status: 'succeeded', value: null });
  });

  it('counts every call against maxToolCalls, replayed ones included, and fails the execution past it', () => {
    const { transport, pump, results } = setup({ limits: { maxToolCalls: 3 } });
    expect(pump.count()).toBe(true); // a replayed call: counted, nothing served
    expect(pump.count()).toBe(true);
    expect(pump.count()).toBe(true);
    expect(pump.stopping).toBe(false);
    expect(pump.count()).toBe(false);
    expect(transport.kills).toBe(1);
    expect(pump.stopping).toBe(true);
    // Whatever the guest reports next, the limit is the error; the calls counted are the host's.
    pump.finish({ status: 'succeeded', value: 1 }, { memoryBytes: 10, toolCalls: 0, cpuMs: 2 });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      status: 'failed',
      error: { code: 'TOOL_CALL_LIMIT', message: 'the program made more than 3 tool calls' },
      resources: { toolCalls: 4, memoryBytes: 10, cpuMs: 2 },
    });
  });

  it('leaves counting to the guest side without hostLimits', () => {
    const { transport, pump, results } = setup({
      limits: { maxToolCalls: 1, outputBytes: 4 },
      hostLimits: false,
    });
    expect(pump.count()).toBe(true);
    expect(pump.count()).toBe(true);
    pump.log('log', 'longer than four bytes');
    expect(transport.kills).toBe(0);
    pump.finish({ status: 'succeeded', value: 'v' }, { memoryBytes: 1, toolCalls: 9 });
    expect(results[0]).toMatchObject({
      status: 'succeeded',
      value: 'v',
      logs: [{ level: 'log', message: 'longer than four bytes' }],
      resources: { toolCalls: 9, memoryBytes: 1 },
    });
    expect(results[0]?.resources).not.toHaveProperty('cpuMs');
  });

  it('streams logs to the host and, with hostLimits, ends the execution past outputBytes', () => {
    const { host, transport, pump, results } = setup({ limits: { outputBytes: 40 } });
    pump.log('info', 'abc'); // 20 bytes: 3, its newline and the entry's 16
    pump.log('warn', 'def');
    pump.log('log', 'ghi');
    expect(host.logs).toEqual(['info:abc', 'warn:def']);
    expect(transport.kills).toBe(1);
    pump.finish({ status: 'failed', error: { code: 'SANDBOX_CRASHED', name: 'Error', message: 'killed' } });
    expect(results[0]).toMatchObject({
      status: 'failed',
      error: { code: 'OUTPUT_LIMIT', message: 'the program printed more than 40 bytes' },
      logs: [
        { level: 'info', message: 'abc' },
        { level: 'warn', message: 'def' },
      ],
      resources: { memoryBytes: 0 },
    });
  });

  it('tells the host once that the replay script is through, and only when there is one', () => {
    const scripted = setup({ request: { replay: [] } });
    scripted.pump.replayDone();
    scripted.pump.replayDone();
    expect(scripted.host.replayDone).toBe(1);
    const unscripted = setup();
    unscripted.pump.replayDone();
    expect(unscripted.host.replayDone).toBe(0);
  });

  it('interrupts: the guest is asked to stop, running calls are aborted with the error, which is the result', async () => {
    const { host, transport, pump, results } = setup({ hostLimits: false });
    pump.call(tool('a'));
    const cancelled = { code: 'CANCELLED', name: 'Error', message: 'stop' };
    pump.interrupt(cancelled);
    pump.interrupt({ code: 'LATER', name: 'Error', message: 'ignored' });
    expect(transport.interrupts).toEqual([cancelled, { code: 'LATER', name: 'Error', message: 'ignored' }]);
    expect(host.signals.get('a')?.aborted).toBe(true);
    expect(host.signals.get('a')?.reason).toBe(cancelled);
    // The guest still reports how it ended; the interrupt's error wins.
    pump.finish(
      { status: 'failed', error: { code: 'INTERRUPTED', name: 'Error', message: 'interrupted' } },
      { memoryBytes: 5, toolCalls: 1 },
    );
    expect(results[0]).toMatchObject({ status: 'failed', error: cancelled, resources: { toolCalls: 1 } });
    // Settled after the end: never delivered.
    await host.settle('a');
    expect(transport.delivered).toEqual([]);
    pump.interrupt(cancelled);
    expect(transport.interrupts).toHaveLength(2);
  });

  it('kills: the calls keep their signal until the guest has ended, then see the execution end', async () => {
    const { host, transport, pump, results } = setup({ limits: { maxConcurrentToolCalls: 1 } });
    pump.call(tool('a'));
    pump.call(tool('b'));
    pump.kill({ code: 'MEMORY_LIMIT', name: 'Error', message: 'too much' });
    expect(transport.kills).toBe(1);
    expect(pump.stopping).toBe(true);
    expect(pump.ended).toBe(false);
    const signal = host.signals.get('a');
    expect(signal?.aborted).toBe(false);
    pump.finish({ status: 'failed', error: { code: 'SANDBOX_CRASHED', name: 'Error', message: 'exit' } });
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as Error).message).toBe('the execution ended');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ status: 'failed', error: { code: 'MEMORY_LIMIT' } });
    // The waiting call never starts, nothing is delivered, and a second end is ignored.
    await host.settle('a');
    expect(host.started).toEqual(['a']);
    expect(transport.delivered).toEqual([]);
    pump.finish({ status: 'succeeded', value: 1 });
    pump.kill({ code: 'TIMEOUT', name: 'Error', message: 'late' });
    pump.call(tool('c'));
    pump.timer(timer('t'));
    expect(host.started).toEqual(['a']);
    expect(results).toHaveLength(1);
    expect(transport.kills).toBe(1);
  });

  it('kills the guest with TIMEOUT once the time limit and the grace have passed', () => {
    vi.useFakeTimers();
    const { transport, pump, results } = setup({ limits: { timeoutMs: 100 }, graceMs: 50 });
    vi.advanceTimersByTime(149);
    expect(transport.kills).toBe(0);
    vi.advanceTimersByTime(1);
    expect(transport.kills).toBe(1);
    pump.finish({ status: 'failed', error: { code: 'SANDBOX_CRASHED', name: 'Error', message: 'gone' } });
    expect(results[0]).toMatchObject({
      status: 'failed',
      error: { code: 'TIMEOUT', message: 'the execution exceeded 100 ms' },
    });
  });

  it('has no time limit left once the result is out', () => {
    vi.useFakeTimers();
    const { transport, pump, results } = setup({ limits: { timeoutMs: 100 } });
    pump.finish({ status: 'succeeded', value: [1] }, { memoryBytes: 3 }, [
      { name: 'out.txt', data: new Uint8Array([1]) },
    ]);
    vi.advanceTimersByTime(1_000);
    expect(transport.kills).toBe(0);
    expect(results).toEqual([
      {
        status: 'succeeded',
        value: [1],
        logs: [],
        resources: { wallMs: expect.any(Number) as number, toolCalls: 0, memoryBytes: 3 },
        artifacts: [{ name: 'out.txt', data: new Uint8Array([1]) }],
      },
    ]);
  });
});
