// A request the program gives up on while it still waits for a concurrency slot (maxConcurrentToolCalls) leaves the
// queue: it never reaches the server, and a durable task journals it ABORTED like a request aborted under way
// (ADR 0043, amended 2026-12-07). And the Python guest gives up on a request under way by cancelling the asyncio
// task awaiting it (asyncio.wait_for's timeout, task.cancel()): the host's connection is closed at once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { createEgress } from '../../src/egress/index.ts';
import { runProgram, ToolRegistry } from '../../src/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import type { JournalEntry, SandboxDriver, TaskStore } from '../../src/internal.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { useDurableFixture } from './fixture.ts';
import { startRecordingServer } from './egress-test-server.ts';
import type { RecordingServer } from './egress-test-server.ts';

const SLOW_MS = 5_000;
let server: RecordingServer;
/** Each request to a /slow path: its path and when its connection closed (ms after it came; null: open). */
const slow: { path: string; at: number; closedAfter: number | null }[] = [];

beforeAll(async () => {
  server = await startRecordingServer((req, _body, res) => {
    if (!req.url?.startsWith('/slow')) return false;
    const one = { path: req.url, at: performance.now(), closedAfter: null as number | null };
    slow.push(one);
    const timer = setTimeout(() => res.end('late'), SLOW_MS);
    res.on('close', () => {
      clearTimeout(timer);
      one.closedAfter = performance.now() - one.at;
    });
    return true;
  });
});
afterAll(() => server.close());

const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
const access = () => ({ allow: [`127.0.0.1:${server.port}`], allowHttp: true });
const ONE_SLOT = { maxConcurrentToolCalls: 1 };

/** The first request holds the only slot; the second, queued behind it, is given up at 100 ms, the first at 300. */
const JS = (tag: string) => `
  const first = new AbortController(), second = new AbortController();
  setTimeout(() => second.abort(), 100);
  setTimeout(() => first.abort(), 300);
  const out = await Promise.all([
    fetch('${url(`/slow-${tag}-1`)}', { signal: first.signal }).then(() => 'answered', (e) => e.name),
    fetch('${url(`/slow-${tag}-2`)}', { signal: second.signal }).then(() => 'answered', (e) => e.name),
  ]);
  // Time for a queued request that was not dropped to take the freed slot and reach the server.
  await new Promise((r) => setTimeout(r, 300));
  return out;`;

/** The same in Python: asyncio.wait_for gives up on the queued request at 0.1 s, on the first at 0.3 s. */
const PY = (tag: string) => `import asyncio, codecall
first = asyncio.ensure_future(codecall.fetch_async('${url(`/slow-${tag}-1`)}'))
async def give_up(aw, after):
    try:
        await asyncio.wait_for(aw, after)
        return 'answered'
    except asyncio.TimeoutError:
        return 'gave up'
await asyncio.sleep(0)
out = [await give_up(codecall.fetch_async('${url(`/slow-${tag}-2`)}'), 0.1), await give_up(first, 0.2)]
await asyncio.sleep(0.3)
out`;

function pathsOf(tag: string): { path: string; closedAfter: number | null }[] {
  return slow.filter((s) => s.path.startsWith(`/slow-${tag}-`));
}

/**
 * The egress calls' outcomes in journal order: which request (1: the first asked) and its error code, or 'ok'. The
 * queued one, dropped at its cancel (100 ms), comes before the one under way (aborted at 300 ms).
 */
function egressOutcomes(journal: readonly JournalEntry[]): string[] {
  // Numbered in the order the guest asked (its call ids), not the journal's: a read's intent goes with its outcome.
  const ids = journal
    .flatMap((e) => (e.type === 'tool_intent' && e.data.tool.startsWith('egress.') ? [e.data.call_id] : []))
    .sort((a, b) => callNumber(a) - callNumber(b));
  return journal
    .flatMap((e) => (e.type === 'tool_outcome' && ids.includes(e.data.call_id) ? [e] : []))
    .map((e) => {
      const d = e.data as { ok: boolean; payload: string; call_id: string };
      const which = ids.indexOf(d.call_id) + 1;
      return `${which} ${d.ok ? 'ok' : String((JSON.parse(d.payload) as { code: string }).code)}`;
    });
}

const callNumber = (id: string): number => Number(/(\d+)$/.exec(id)?.[1] ?? Number.NaN);

async function settled(tag: string): Promise<void> {
  const deadline = performance.now() + 2_000;
  while (performance.now() < deadline && pathsOf(tag).some((s) => s.closedAfter === null))
    await new Promise((r) => setTimeout(r, 10));
}

describe('JavaScript: a request given up while queued for a slot', () => {
  const fx = useDurableFixture('egress-abort-queued');
  const runtimes: Runtime[] = [];
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
  });

  it('runProgram: it never reaches the server; the one under way is closed at its abort', async () => {
    const r = await runProgram({
      driver: fx.driver,
      code: JS('a'),
      limits: ONE_SLOT,
      network: { egress: createEgress({ allowPrivate: true }), access: access() },
    });
    expect(r).toMatchObject({ status: 'succeeded', value: ['AbortError', 'AbortError'] });
    await settled('a');
    const seen = pathsOf('a');
    expect(seen.map((s) => s.path)).toEqual(['/slow-a-1']);
    expect(seen[0]?.closedAfter).toBeLessThan(SLOW_MS / 2);
  });

  it('durable: both are journaled ABORTED; the queued one made no request; a resumed task asks nothing', async () => {
    const runtime = createRuntime({
      store: fx.store,
      drivers: [fx.driver],
      tools: new ToolRegistry([]),
      pollMs: 20,
      egress: createEgress({ allowPrivate: true }),
    });
    runtimes.push(runtime);
    runtime.start();
    const code = `${JS('d').replace(/return out;\s*$/, '')}
      return { out, answer: await input.wait('go') };`;
    const task = await runtime.submit({ code, limits: ONE_SLOT, constraints: { networkAccess: access() } });
    expect(await runtime.wait(task.task_id)).toMatchObject({ status: 'paused' });
    expect(egressOutcomes(await fx.store.readJournal(task.task_id))).toEqual(['2 ABORTED', '1 ABORTED']);
    const asked = slow.length;
    await runtime.provideInput(task.task_id, 'go', 'yes');
    expect(await runtime.wait(task.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: { out: ['AbortError', 'AbortError'], answer: 'yes' } },
    });
    expect(slow.length).toBe(asked);
    expect(pathsOf('d').map((s) => s.path)).toEqual(['/slow-d-1']);
  });
});

const probe = await probePython();

describe.skipIf(!probe.ok)(
  `Python: asyncio cancellation gives up on a request${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: SandboxDriver & { close(): Promise<void> };
    let store: TaskStore;
    let runtime: Runtime;
    const fx = useDurableFixture('egress-abort-python');
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 1, ...(probe.ok ? { probe } : {}) });
      store = await createSqliteTaskStore({ path: `${fx.path}.py.db` });
      runtime = createRuntime({
        store,
        drivers: [driver],
        tools: new ToolRegistry([]),
        pollMs: 20,
        egress: createEgress({ allowPrivate: true }),
      });
      runtime.start();
    });
    afterAll(async () => {
      await runtime?.close();
      await store?.close();
      await driver?.close();
    });

    it('runProgram: the queued request never goes out, the one under way is closed at once', async () => {
      const r = await runProgram({
        driver,
        language: 'python',
        code: PY('p'),
        limits: ONE_SLOT,
        network: { egress: createEgress({ allowPrivate: true }), access: access() },
      });
      expect(r).toMatchObject({ status: 'succeeded', value: ['gave up', 'gave up'] });
      await settled('p');
      const seen = pathsOf('p');
      expect(seen.map((s) => s.path)).toEqual(['/slow-p-1']);
      expect(seen[0]?.closedAfter).toBeLessThan(SLOW_MS / 2);
    });

    it('durable: journaled ABORTED, replayed after a pause without asking the server again', async () => {
      const code = `${PY('q').replace(/\nout$/, '')}
out.append(input.wait('go'))
out`;
      const task = await runtime.submit({
        code,
        language: 'python',
        limits: ONE_SLOT,
        constraints: { networkAccess: access() },
      });
      const paused = await runtime.wait(task.task_id);
      expect(paused.status, JSON.stringify(paused.error)).toBe('paused');
      expect(egressOutcomes(await store.readJournal(task.task_id))).toEqual(['2 ABORTED', '1 ABORTED']);
      await settled('q');
      const asked = slow.length;
      await runtime.provideInput(task.task_id, 'go', 'yes');
      const done = await runtime.wait(task.task_id, { until: 'terminal' });
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.result?.output).toEqual(['gave up', 'gave up', 'yes']);
      expect(slow.length).toBe(asked);
      const seen = pathsOf('q');
      expect(seen.map((s) => s.path)).toEqual(['/slow-q-1']);
      expect(seen[0]?.closedAfter).toBeLessThan(SLOW_MS / 2);
    });
  },
);
