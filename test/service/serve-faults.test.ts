import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { cliTestDir, startCodecall, until } from '../cli-fixture.ts';

// Real `codecall serve` processes on one SQLite file: a second server on a taken port harms nothing, a task paused
// by one server's shutdown is picked up by another live server, and a SIGKILLed server's tasks are taken over at
// once by the next server on the machine (its owner's process is gone), long before their lease runs out.

const TOOLS = `
import { defineTool } from 'codecall';
export default [
  defineTool({
    name: 'nap',
    description: 'sleeps ms, unless aborted',
    effect: 'read',
    execute: (a, ctx) => new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve('rested ' + a.ms), a.ms);
      ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); });
    }),
  }),
];
`;

/** Longer than any of these tests: a task recovered before it ran out was taken over, not waited for. */
const LEASE_MS = '60000';

type Server = ReturnType<typeof startCodecall> & { base: string; pid: number };

describe('codecall serve: second servers, shutdowns and crashes on one database', () => {
  let dir: string;
  let db: string;
  let tools: string;
  const servers: Server[] = [];
  beforeAll(async () => {
    dir = await cliTestDir('serve-faults');
    tools = join(dir, 'tools.js');
    await writeFile(tools, TOOLS);
  });
  afterAll(async () => {
    for (const s of servers) {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      await s.exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  let n = 0;
  function newDb(): string {
    db = join(dir, `tasks-${++n}.db`);
    return db;
  }

  function spawnServe(port: string, concurrency: number) {
    return startCodecall(
      { CODECALL_LEASE_MS: LEASE_MS, CODECALL_PYTHON: 'false' },
      'serve',
      '--port',
      port,
      '--db',
      db,
      '--tools',
      tools,
      // Every task here is tenant default's: alone, it runs in every slot (the share is work-conserving, ADR 0023).
      '--concurrency',
      String(concurrency),
      '--insecure-no-auth',
    );
  }

  async function serve(concurrency = 4): Promise<Server> {
    const s = spawnServe('0', concurrency);
    let base = '';
    await until(() => {
      base = /serving on (http:\/\/[^\s]+)/.exec(s.stderr())?.[1] ?? '';
      return base !== '';
    });
    const server = { ...s, base, pid: s.child.pid ?? -1 };
    servers.push(server);
    return server;
  }

  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;
  const submit = async (s: Server, code: string): Promise<string> => {
    const res = await fetch(`${s.base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    expect(res.status).toBe(201);
    return String((await json(res)).task_id);
  };
  const view = async (s: Server, id: string) => json(await fetch(`${s.base}/api/v1/tasks/${id}`));
  const allAre = (s: Server, ids: readonly string[], status: string) => async () =>
    (await Promise.all(ids.map((id) => view(s, id)))).every((v) => v.status === status);

  /** What the database says, read through a connection of the test's own. */
  async function audits(ids: readonly string[]) {
    const store = await createSqliteTaskStore({ path: db });
    try {
      const out = new Map<string, { attempts: number; status: string; audit: AuditEntry[] }>();
      for (const id of ids) {
        const task = await store.getTask(id);
        out.set(id, {
          attempts: task?.attempts ?? -1,
          status: task?.status ?? 'missing',
          audit: await store.readAudit(id),
        });
      }
      return out;
    } finally {
      await store.close();
    }
  }
  /** Whether an audit actor is a runtime of this process: owner ids are `host:pid:start:machine:nonce` (before: `runtime-pid-n`). */
  const byPid = (e: AuditEntry, pid: number): boolean => {
    const actor = String(e.data.actor);
    const of = actor.includes(':') ? actor.split(':')[1] : /^runtime-(\d+)-/.exec(actor)?.[1];
    return of === String(pid);
  };
  const claimsBy = (audit: readonly AuditEntry[], pid: number) =>
    audit.filter((e) => e.type === 'status' && e.data.to === 'running' && byPid(e, pid));

  it('a second server on a taken port exits with one line (PORT_IN_USE, exit 2) and claims nothing', async () => {
    newDb();
    const first = await serve(1);
    // One task holds the only slot; the others wait, claimable by any server that would start claiming.
    const hold = await submit(first, 'return await tools.nap({ ms: 60000 });');
    await until(async () => (await view(first, hold)).status === 'running');
    const waiting = [
      await submit(first, 'return 1'),
      await submit(first, 'return 2'),
      await submit(first, 'return 3'),
    ];
    const before = await audits([hold, ...waiting]);

    const port = new URL(first.base).port;
    const second = spawnServe(port, 8);
    const code = await second.exited;

    // Nothing changed: the waiting tasks are still pending, never claimed, and their audit logs are as they were.
    const after = await audits([hold, ...waiting]);
    for (const id of waiting) {
      expect(after.get(id)).toMatchObject({ status: 'pending', attempts: 0 });
      expect(after.get(id)?.audit).toEqual(before.get(id)?.audit);
    }
    expect(after.get(hold)).toMatchObject({ status: 'running', attempts: 1 });
    for (const { audit } of after.values()) expect(claimsBy(audit, second.child.pid ?? -1)).toEqual([]);
    const lines = second.stderr().trim().split('\n');
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^error PORT_IN_USE: port 127\\.0\\.0\\.1:${port} is taken`));
    expect(second.stderr()).not.toMatch(/^\s+at /m);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  });

  /** The tasks `pid` claimed first (a task submitted to a server is claimed there at once, all but always). */
  async function heldBy(ids: readonly string[], pid: number): Promise<string[]> {
    const held = [...(await audits(ids))].filter(([, { audit }]) => {
      const first = audit.find((e) => e.type === 'status' && e.data.to === 'running');
      return first !== undefined && byPid(first, pid);
    });
    expect(held.length).toBeGreaterThan(0);
    return held.map(([id]) => id);
  }

  it("a task paused by one server's shutdown is run on by another live server, without a restart", async () => {
    newDb();
    const first = await serve(4);
    const second = await serve(4);
    const ids = [
      await submit(first, 'return await tools.nap({ ms: 5000 });'),
      await submit(first, 'return await tools.nap({ ms: 5001 });'),
      await submit(first, 'return await tools.nap({ ms: 5002 });'),
    ];
    await until(allAre(first, ids, 'running'));
    const paused = await heldBy(ids, first.pid);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await until(allAre(second, ids, 'succeeded'));

    for (const [id, { attempts, audit }] of await audits(paused)) {
      expect(attempts, id).toBe(2);
      const changes = audit.filter((e) => e.type === 'status').map((e) => e.data);
      expect(changes).toContainEqual(expect.objectContaining({ to: 'paused', pause_reason: 'shutdown' }));
      expect(changes).toContainEqual(expect.objectContaining({ from: 'paused', to: 'pending' }));
      expect(claimsBy(audit, first.pid)).toHaveLength(1);
      expect(claimsBy(audit, second.pid).map((e) => e.data.from)).toEqual(['pending']);
    }
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it("a SIGKILLed server's running tasks are recovered by its restart at once, not after their lease", async () => {
    newDb();
    const first = await serve(4);
    const ids = [
      await submit(first, 'return await tools.nap({ ms: 3000 });'),
      await submit(first, 'return await tools.nap({ ms: 3001 });'),
    ];
    await until(allAre(first, ids, 'running'));
    first.child.kill('SIGKILL');
    await first.exited;
    const restarted = await serve(4);
    // The lease (60 s) outlives this wait (20 s at most): only a takeover of the dead owner's leases gets here.
    await until(allAre(restarted, ids, 'succeeded'));
    for (const [id, { attempts, audit }] of await audits(ids)) {
      expect(attempts, id).toBe(2);
      const recovered = claimsBy(audit, restarted.pid);
      expect(recovered.map((e) => e.data.from)).toEqual(['running']);
      expect(claimsBy(audit, first.pid)).toHaveLength(1);
    }
    restarted.child.kill('SIGTERM');
    expect(await restarted.exited).toBe(0);
  });

  it("a live server on the same machine takes over a SIGKILLed sibling's tasks at once", async () => {
    newDb();
    const first = await serve(4);
    const sibling = await serve(4);
    const ids = [
      await submit(first, 'return await tools.nap({ ms: 5000 });'),
      await submit(first, 'return await tools.nap({ ms: 5001 });'),
    ];
    await until(allAre(first, ids, 'running'));
    const orphans = await heldBy(ids, first.pid);
    first.child.kill('SIGKILL');
    await first.exited;
    // As above, the lease outlives the wait: the sibling ends the dead owner's leases on its next poll.
    await until(allAre(sibling, ids, 'succeeded'));
    for (const [id, { attempts, audit }] of await audits(orphans)) {
      expect(attempts, id).toBe(2);
      expect(claimsBy(audit, sibling.pid).map((e) => e.data.from)).toEqual(['running']);
    }
    sibling.child.kill('SIGTERM');
    expect(await sibling.exited).toBe(0);
  });
});
