// A guest that aborts its fetch (AbortController, AbortSignal.timeout) stops the host's request: the connection
// to a slow real server on loopback is closed at once, not when the server answers; a durable task journals the
// request's outcome (ABORTED) so a resumed task replays it exactly and never asks the server again. Python's
// asyncio cancel and a request given up while queued: egress-abort-queued.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { defineTool, runProgram, ToolRegistry } from '../../src/index.ts';
import { createQuickJsDriver } from '../../src/internal.ts';
import type { Runtime } from '../../src/api/index.ts';
import { useDurableFixture } from './fixture.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer } from './egress-test-server.ts';

/** How long the slow server holds a request before it answers. */
const SLOW_MS = 5_000;
let server: RecordingServer;
let port = 0;
/** For each request to /slow: when its connection closed (ms after it came), or null while open. */
const slow: { at: number; closedAfter: number | null; answered: boolean }[] = [];

beforeAll(async () => {
  server = await startRecordingServer((req, _body, res) => {
    if (!req.url?.startsWith('/slow')) return false;
    const one = { at: performance.now(), closedAfter: null as number | null, answered: false };
    slow.push(one);
    const timer = setTimeout(() => {
      one.answered = true;
      res.end('late');
    }, SLOW_MS);
    res.on('close', () => {
      clearTimeout(timer);
      one.closedAfter = performance.now() - one.at;
    });
    return true;
  });
  port = server.port;
});
afterAll(() => server.close());

const url = (path: string) => `http://127.0.0.1:${port}${path}`;
const access = () => ({ allow: [`127.0.0.1:${port}`], allowHttp: true });
const ABORTING = (path: string) => `
  const c = new AbortController();
  setTimeout(() => c.abort(), 150);
  const t = Date.now();
  let caught;
  try { await fetch('${url(path)}', { signal: c.signal }); } catch (e) { caught = e.name; }
  const timed = await fetch('${url(`${path}-2`)}', { signal: AbortSignal.timeout(100) }).then(() => 'answered', (e) => e.name);
  return { caught, timed };`;

async function closedWithin(from: number, ms: number): Promise<number[]> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline && slow.slice(from).some((s) => s.closedAfter === null))
    await new Promise((r) => setTimeout(r, 10));
  // null: still open (Infinity would not cross the sandbox boundary as a number).
  return slow.slice(from).map((s) => s.closedAfter ?? 1e9);
}

describe('a guest abort stops the host request', () => {
  it('runProgram: the connection is closed when the guest aborts, not when the server answers', async () => {
    const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    try {
      await driver.ready();
      const from = slow.length;
      // Asked by the program while it still runs: its end would close the connections anyway.
      const closedTool = defineTool({
        name: 'closed',
        description: 'when the slow requests closed',
        input: { type: 'object', properties: {} },
        effect: 'read',
        execute: () => closedWithin(from, 2_000),
      });
      const r = await runProgram({
        driver,
        tools: [closedTool],
        code: ABORTING('/slow-a').replace(
          /return \{ caught, timed \};\s*$/,
          'return { caught, timed, closed: await tools.closed({}) };',
        ),
        network: { egress: createEgress({ allowPrivate: true }), access: access() },
      });
      expect(r).toMatchObject({
        status: 'succeeded',
        value: { caught: 'AbortError', timed: 'TimeoutError' },
      });
      const closed = (r as { value: { closed: (number | null)[] } }).value.closed;
      expect(closed).toHaveLength(2);
      for (const ms of closed) expect(ms).toBeLessThan(SLOW_MS / 2);
      expect(slow.slice(from).every((s) => !s.answered)).toBe(true);
    } finally {
      await driver.close();
    }
  });

  describe('durable', () => {
    const fx = useDurableFixture('egress-abort');
    const runtimes: Runtime[] = [];
    afterEach(async () => {
      await Promise.all(runtimes.splice(0).map((r) => r.close()));
    });
    const make = (): Runtime => {
      const r = createRuntime({
        store: fx.store,
        drivers: [fx.driver],
        tools: new ToolRegistry([]),
        pollMs: 20,
        egress: createEgress({ allowPrivate: true }),
      });
      runtimes.push(r);
      r.start();
      return r;
    };

    it('the abort is journaled as the request outcome (ABORTED); a resumed task replays it, the server not asked again', async () => {
      const runtime = make();
      const from = slow.length;
      const task = await runtime.submit({
        code: `${ABORTING('/slow-d')
          .replace(/return \{ caught, timed \};\s*$/, '')
          .trim()}
          const answer = await input.wait('go');
          return { caught, timed, answer };`,
        constraints: { networkAccess: access() },
      });
      expect(await runtime.wait(task.task_id)).toMatchObject({
        status: 'paused',
        pause_reason: 'awaiting_input',
      });
      const closed = await closedWithin(from, 2_000);
      expect(closed).toHaveLength(2);
      for (const ms of closed) expect(ms).toBeLessThan(SLOW_MS / 2);
      const journal = await fx.store.readJournal(task.task_id);
      const egressIds = journal
        .filter((e) => e.type === 'tool_intent' && String(e.data.tool).startsWith('egress.'))
        .map((e) => (e.data as { call_id: string }).call_id);
      expect(egressIds).toHaveLength(2);
      const outcomes = journal.filter(
        (e) => e.type === 'tool_outcome' && egressIds.includes((e.data as { call_id: string }).call_id),
      );
      expect(outcomes).toHaveLength(2);
      for (const o of outcomes) {
        expect(o.data).toMatchObject({ ok: false });
        expect(String((o.data as { payload: string }).payload)).toContain('ABORTED');
      }
      const asked = slow.length;
      await runtime.provideInput(task.task_id, 'go', 'yes');
      expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: { caught: 'AbortError', timed: 'TimeoutError', answer: 'yes' } },
      });
      expect(slow.length).toBe(asked);
    });
  });
});
