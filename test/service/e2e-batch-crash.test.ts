import { createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, startCodecall, until } from '../cli-fixture.ts';

// The service end to end, as real processes: a batch of 200 tasks (some need approval, some fail on purpose),
// the server SIGKILLed part-way and started again on the same database; every task reaches its expected end
// and every webhook arrives at a real receiver on loopback with a valid Standard Webhooks signature.

const TOOLS = `
import { defineTool } from 'codecall';
export default [
  defineTool({
    name: 'work',
    description: 'takes a while',
    effect: 'idempotent',
    execute: (a, ctx) => new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve(a.n * 2), a.ms);
      ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); });
    }),
  }),
  defineTool({
    name: 'pay',
    description: 'pays; over 100 needs approval',
    effect: 'unsafe',
    requiresApproval: (a) => a.amount > 100,
    execute: (a) => 'paid ' + a.amount,
  }),
];
`;

type Kind = 'ok' | 'approval' | 'fail';
const kindOf = (i: number): Kind => (i % 10 === 3 ? 'approval' : i % 9 === 4 ? 'fail' : 'ok');
const programOf = (i: number): string => {
  const kind = kindOf(i);
  if (kind === 'approval') return `return await tools.pay({ amount: ${200 + i} });`;
  if (kind === 'fail')
    return `await tools.work({ n: ${i}, ms: 5 }); throw new Error('planned failure ${i}');`;
  return `const a = await tools.work({ n: ${i}, ms: 40 }); const b = await tools.work({ n: a, ms: 40 }); return b;`;
};

interface Delivery {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

describe('service end to end: batch, SIGKILL, restart, webhooks', () => {
  let dir: string;
  const secretBytes = randomBytes(24);
  const secret = `whsec_${secretBytes.toString('base64')}`;
  const deliveries: Delivery[] = [];
  const badSignatures: string[] = [];
  let receiver: ReturnType<typeof createServer>;
  let hook = '';

  beforeAll(async () => {
    dir = await cliTestDir('e2e');
    await writeFile(join(dir, 'tools.js'), TOOLS);
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        const ts = String(req.headers['webhook-timestamp']);
        const expected = createHmac('sha256', secretBytes).update(`${id}.${ts}.${body}`).digest('base64');
        const signatures = String(req.headers['webhook-signature']).split(' ');
        if (!signatures.includes(`v1,${expected}`)) badSignatures.push(id);
        const parsed = JSON.parse(body) as { type: string; data: Record<string, unknown> };
        deliveries.push({ id, type: parsed.type, data: parsed.data });
        res.writeHead(204).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  function serve() {
    const s = startCodecall(
      { CODECALL_LEASE_MS: '1500' },
      'serve',
      '--port',
      '0',
      '--db',
      join(dir, 'tasks.db'),
      '--tools',
      join(dir, 'tools.js'),
      '--concurrency',
      '16',
      '--webhook-secret',
      secret,
      '--allow-private-webhooks',
    );
    return s;
  }
  async function address(s: ReturnType<typeof serve>): Promise<string> {
    let base = '';
    await until(() => {
      base = /serving on (http:\/\/[^\s]+)/.exec(s.stderr())?.[1] ?? '';
      return base !== '';
    });
    return base;
  }

  it('brings every task of a 200-task batch to its expected end across a SIGKILL', async () => {
    const first = serve();
    const base1 = await address(first);
    const key = /^\s+(cc_\S+)$/m.exec(first.stderr())?.[1] ?? '';
    expect(key).toMatch(/^cc_/);
    const api = (base: string, path: string, body?: unknown) =>
      fetch(`${base}/api/v1${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const tasks = Array.from({ length: 200 }, (_, i) => ({
      code: programOf(i),
      callback_url: hook,
      metadata: { i },
    }));
    const created = await api(base1, '/tasks/batch', { tasks, callback_url: hook });
    expect(created.status).toBe(201);
    const { batch_id, task_ids } = (await created.json()) as { batch_id: string; task_ids: string[] };
    expect(task_ids).toHaveLength(200);

    // Part-way: some tasks have ended, most have not.
    await until(() => deliveries.filter((d) => d.type !== 'task.paused').length >= 30, 60_000).catch(
      async (e: unknown) => {
        const b = await (await api(base1, `/batches/${batch_id}`)).text();
        throw new Error(
          `${String(e)}: ${deliveries.length} deliveries; batch ${b}; server: ${first.stderr()}`,
        );
      },
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const endedBeforeKill = new Set(deliveries.map((d) => String(d.data.task_id)));
    expect(endedBeforeKill.size).toBeLessThan(200);

    const second = serve();
    const base2 = await address(second);
    try {
      // Approve every payment as its task.paused webhook announces it (also those paused before the kill).
      const approved = new Set<string>();
      let last = '';
      await until(async () => {
        for (const d of deliveries.filter((x) => x.type === 'task.paused')) {
          const taskId = String(d.data.task_id);
          // A payment in flight at the kill may or may not have happened: a human decides (here: run it again).
          if (d.data.pause_reason === 'needs_attention' && !approved.has(d.id)) {
            approved.add(d.id);
            const res = await api(base2, `/tasks/${taskId}/attention`, { action: 'retry', reason: 'e2e' });
            expect([200, 409]).toContain(res.status);
            continue;
          }
          if (approved.has(taskId)) continue;
          const approvals = d.data.pending_approvals as { id: string }[];
          for (const a of approvals) {
            const res = await api(base2, `/tasks/${taskId}/approvals/${a.id}`, { decision: 'approve' });
            expect([200, 409]).toContain(res.status);
          }
          approved.add(taskId);
        }
        const batch = (await (await api(base2, `/batches/${batch_id}`)).json()) as {
          counts: Record<string, number>;
        };
        last = JSON.stringify(batch.counts);
        return (batch.counts.succeeded ?? 0) + (batch.counts.failed ?? 0) === 200;
      }, 120_000).catch(async (e: unknown) => {
        const running = (await (await api(base2, '/tasks?status=running&limit=2')).json()) as {
          tasks: { task_id: string }[];
        };
        const stuck = running.tasks[0]?.task_id ?? '';
        const ev = await (await api(base2, `/tasks/${stuck}/events`)).text();
        console.log('STUCK', JSON.stringify(running.tasks[0]), ev);
        throw new Error(
          `${String(e)}: counts ${last}; ${deliveries.length} deliveries; server: ${second.stderr()}`,
        );
      });

      const batch = (await (await api(base2, `/batches/${batch_id}`)).json()) as {
        counts: Record<string, number>;
        task_ids: string[];
      };
      const expectFailed = task_ids.filter((_, i) => kindOf(i) === 'fail').length;
      expect(batch.counts).toMatchObject({
        succeeded: 200 - expectFailed,
        failed: expectFailed,
        cancelled: 0,
      });
      expect(batch.task_ids).toEqual(task_ids);
      for (const [i, id] of task_ids.entries()) {
        const view = (await (await api(base2, `/tasks/${id}`)).json()) as Record<string, unknown>;
        const kind = kindOf(i);
        if (kind === 'fail') expect(view).toMatchObject({ status: 'failed', error: { code: 'GUEST_ERROR' } });
        else if (kind === 'approval')
          expect(view).toMatchObject({ status: 'succeeded', result: { output: `paid ${200 + i}` } });
        else expect(view).toMatchObject({ status: 'succeeded', result: { output: i * 4 } });
      }

      // Every task's end arrives by webhook (at least once), then the batch's; all signed. Messages the killed
      // server was sending wait for its claims to expire (the webhook timeout plus 5 s).
      await until(() => deliveries.some((d) => d.type === 'batch.completed'), 60_000);
      await until(
        () =>
          new Set(
            deliveries
              .filter((d) => d.type.startsWith('task.') && d.type !== 'task.paused')
              .map((d) => d.data.task_id),
          ).size === 200,
        60_000,
      );
      expect(badSignatures).toEqual([]);
      for (const [i, id] of task_ids.entries()) {
        const ends = deliveries.filter((d) => d.data.task_id === id && d.type !== 'task.paused');
        expect(new Set(ends.map((d) => d.type))).toEqual(
          new Set([kindOf(i) === 'fail' ? 'task.failed' : 'task.succeeded']),
        );
        if (kindOf(i) === 'approval')
          expect(deliveries.some((d) => d.data.task_id === id && d.type === 'task.paused')).toBe(true);
      }
      const completed = deliveries.filter((d) => d.type === 'batch.completed');
      expect(new Set(completed.map((d) => d.id)).size).toBe(1);
      expect(completed[0]?.data).toMatchObject({ batch_id, size: 200 });
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 240_000);
});
