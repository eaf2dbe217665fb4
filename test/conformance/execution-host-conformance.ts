// What every ExecutionHost must do for a driver: answer each call with an outcome (never a rejection), errors as
// data a guest can be shown, timers, concurrent calls and aborts, logs. ToolRegistry.host() and JournalingHost
// implement it today; a tool provider over another protocol (MCP) must too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeValue, EncodedValue } from '../../src/codec/index.ts';
import type {
  ExecutionHost,
  HostCall,
  HostOutcome,
  LogEntry,
  SandboxDriver,
  ToolDefinition,
} from '../../src/spec/index.ts';
import { createQuickJsDriver } from '../../src/sandbox/quickjs/index.ts';
import { defineTool } from '../../src/tools/index.ts';

export interface HostSetup {
  readonly tools: readonly ToolDefinition[];
  /** Where the host's onLog (if it has one) must send the guest's lines. */
  readonly onLog: (entry: LogEntry) => void;
}

/** What a tool saw of its call. */
interface Seen {
  readonly callId: string;
  readonly idempotencyKey: string | null;
  readonly aborted: () => boolean;
}

function conformanceTools(seen: Seen[]): ToolDefinition[] {
  return [
    defineTool({
      name: 'double',
      description: 'doubles',
      input: z.object({ n: z.number() }),
      output: z.object({ doubled: z.number() }),
      effect: 'read',
      execute: ({ n }: { n: number }, ctx) => {
        seen.push({
          callId: ctx.callId,
          idempotencyKey: ctx.idempotencyKey ?? null,
          aborted: () => ctx.signal.aborted,
        });
        return { doubled: n * 2 };
      },
    }),
    defineTool({
      name: 'wait',
      description: 'resolves after ms, or rejects with the abort reason',
      input: z.object({ ms: z.number(), tag: z.string() }),
      effect: 'read',
      execute: ({ ms, tag }: { ms: number; tag: string }, ctx) =>
        new Promise((resolve, reject) => {
          seen.push({ callId: ctx.callId, idempotencyKey: null, aborted: () => ctx.signal.aborted });
          const timer = setTimeout(() => resolve(tag), ms);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(ctx.signal.reason as Error);
          });
        }),
    }),
    defineTool({
      name: 'boom',
      description: 'throws',
      effect: 'read',
      execute: () => {
        throw Object.assign(new Error('it broke'), { code: 'E_BOOM' });
      },
    }),
    defineTool({
      name: 'liar',
      description: 'returns what its output schema refuses',
      output: { type: 'string' },
      effect: 'read',
      execute: () => 42,
    }),
    defineTool({
      name: 'values',
      description: 'returns values JSON cannot carry',
      effect: 'read',
      execute: () => ({ big: 2n ** 70n, when: new Date(0), missing: undefined, list: [1, 'two', null] }),
    }),
  ];
}

/** The value of a successful outcome as the guest gets it: a host may hand over a value already encoded. */
function valueOf(outcome: HostOutcome): unknown {
  if (!outcome.ok) throw new Error(`expected ok, got ${JSON.stringify(outcome.error)}`);
  return outcome.value instanceof EncodedValue ? decodeValue(outcome.value.encoded) : outcome.value;
}

function errorOf(outcome: HostOutcome): Extract<HostOutcome, { ok: false }>['error'] {
  if (outcome.ok) throw new Error(`expected an error, got ${JSON.stringify(outcome.value)}`);
  // Data only: it crosses the sandbox boundary as JSON, without a host stack.
  expect(JSON.parse(JSON.stringify(outcome.error))).toEqual(outcome.error);
  expect(outcome.error).not.toHaveProperty('stack');
  return outcome.error;
}

const live = (): AbortSignal => new AbortController().signal;
const tool = (callId: string, name: string, args: unknown, extra: Partial<HostCall> = {}): HostCall =>
  ({ kind: 'tool', callId, namespace: 'tools', name, args, ...extra }) as HostCall;

/** The behaviour every ExecutionHost must show; each case gets a fresh host over the same tools. */
export function describeExecutionHostConformance(
  name: string,
  createHost: (setup: HostSetup) => ExecutionHost | Promise<ExecutionHost>,
): void {
  describe(`${name} execution host conformance`, () => {
    const seen: Seen[] = [];
    const logs: LogEntry[] = [];
    const tools = conformanceTools(seen);
    const fresh = async (): Promise<ExecutionHost> => {
      seen.length = 0;
      logs.length = 0;
      return createHost({ tools, onLog: (entry) => logs.push(entry) });
    };

    it("runs a tool with the call's arguments and id; its value is the outcome", async () => {
      const host = await fresh();
      const outcome = await host.call(
        tool('call-1', 'double', { n: 21 }, { idempotencyKey: 't:0:call-1' }),
        live(),
      );
      expect(valueOf(outcome)).toEqual({ doubled: 42 });
      expect(seen.map((s) => [s.callId, s.idempotencyKey])).toEqual([['call-1', 't:0:call-1']]);
      if (outcome.clock !== undefined) expect(Number.isFinite(outcome.clock)).toBe(true);
    });

    it('hands values JSON cannot carry over intact', async () => {
      const host = await fresh();
      expect(valueOf(await host.call(tool('call-1', 'values', {}), live()))).toEqual({
        big: 2n ** 70n,
        when: new Date(0),
        missing: undefined,
        list: [1, 'two', null],
      });
    });

    it("answers a tool's error, an unknown tool and bad arguments with errors as data, never a rejection", async () => {
      const host = await fresh();
      expect(errorOf(await host.call(tool('call-1', 'boom', {}), live()))).toMatchObject({
        code: 'E_BOOM',
        message: 'it broke',
        name: 'ToolError',
      });
      expect(errorOf(await host.call(tool('call-2', 'nope', {}), live()))).toMatchObject({
        code: 'NO_SUCH_TOOL',
        name: 'NoSuchToolError',
        message: expect.stringContaining('tools.nope') as string,
      });
      expect(errorOf(await host.call(tool('call-3', 'double', { n: 'x' }), live()))).toMatchObject({
        code: 'TOOL_VALIDATION',
        name: 'ToolValidationError',
        details: { field: 'n' },
      });
      expect(errorOf(await host.call(tool('call-4', 'liar', {}), live()))).toMatchObject({
        code: 'TOOL_RESULT_INVALID',
      });
      // Bad arguments never reach the tool.
      expect(seen).toEqual([]);
    });

    it('waits out a timer', async () => {
      const host = await fresh();
      const started = performance.now();
      const outcome = await host.call({ kind: 'timer', callId: 'call-1', delayMs: 40 }, live());
      expect(performance.now() - started).toBeGreaterThanOrEqual(35);
      expect(valueOf(outcome)).toBeUndefined();
    });

    it('runs calls at once: a fast call is answered before a slow one issued earlier', async () => {
      const host = await fresh();
      const order: string[] = [];
      const slow = host.call(tool('call-1', 'wait', { ms: 300, tag: 'slow' }), live()).then((o) => {
        order.push('slow');
        return o;
      });
      const fast = host.call(tool('call-2', 'wait', { ms: 5, tag: 'fast' }), live()).then((o) => {
        order.push('fast');
        return o;
      });
      const [a, b] = await Promise.all([slow, fast]);
      expect([valueOf(a), valueOf(b)]).toEqual(['slow', 'fast']);
      expect(order).toEqual(['fast', 'slow']);
    });

    it("passes the call's signal to the tool: an abort ends the call with the reason's code, as data", async () => {
      const host = await fresh();
      const controller = new AbortController();
      const pending = host.call(tool('call-1', 'wait', { ms: 10_000, tag: 'never' }), controller.signal);
      await until(() => seen.length === 1);
      controller.abort(Object.assign(new Error('paused by request'), { code: 'PAUSED' }));
      const outcome = await pending;
      expect(errorOf(outcome)).toMatchObject({ code: 'PAUSED' });
      expect(seen[0]?.aborted()).toBe(true);
    });

    it('sends log lines to its log, and goes on live after onReplayDone', async () => {
      const host = await fresh();
      host.onReplayDone?.();
      host.onLog?.({ level: 'info', message: 'hello' });
      if (host.onLog) expect(logs).toEqual([{ level: 'info', message: 'hello' }]);
      else expect(logs).toEqual([]);
      expect(valueOf(await host.call(tool('call-1', 'double', { n: 1 }), live()))).toEqual({ doubled: 2 });
    });

    describe('under a driver', () => {
      let driver: SandboxDriver;
      beforeAll(() => {
        driver = createQuickJsDriver({ workers: 1 });
      });
      afterAll(async () => {
        await driver.close();
      });

      it('serves a program: values, concurrent calls, errors the guest can catch, timers and logs', async () => {
        const host = await fresh();
        const result = await driver.execute({
          language: 'javascript',
          tools: tools.map((t) => ({ namespace: t.namespace, name: t.name })),
          host,
          code: `
            const [a, b] = await Promise.all([tools.double({ n: 1 }), tools.wait({ ms: 5, tag: 't' })]);
            let caught;
            try { await tools.boom({}); } catch (e) { caught = [e.name, e.code, e.message]; }
            await new Promise((resolve) => setTimeout(resolve, 5));
            console.log('done');
            const { big } = await tools.values({});
            return { a, b, caught, big: String(big) };`,
        });
        expect(result).toMatchObject({
          status: 'succeeded',
          value: {
            a: { doubled: 2 },
            b: 't',
            caught: ['ToolError', 'E_BOOM', 'it broke'],
            big: String(2n ** 70n),
          },
          logs: [{ level: 'log', message: 'done' }],
        });
        expect(result.resources.toolCalls).toBe(5);
        if (host.onLog) expect(logs).toEqual([{ level: 'log', message: 'done' }]);
      });
    });
  });
}

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
