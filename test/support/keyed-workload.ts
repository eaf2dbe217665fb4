import type { ServiceStore, TaskStore } from '../../src/index.ts';
import { codeInput } from '../conformance/task-store-support.ts';

// One workload, run the same on SQLite and on PostgreSQL with the same audit key: fixed ids and times, so both
// databases hold the same audit rows, MACs and heads, and a tamper done to both must be named the same.

export const KEY = Buffer.from('k'.repeat(64));
export const OTHER_KEY = Buffer.from('o'.repeat(64));
export const T0 = 1_800_000_000_000;
export const IDS = {
  ok: 'task_a_ok',
  other: 'task_b_other',
  failed: 'task_c_failed',
  paused: 'task_d_paused',
};
export const MEMBER = { id: 'key_m', hash: 'm'.repeat(64) };
export const REVOKED = { id: 'key_r', hash: 'r'.repeat(64) };

type Store = TaskStore &
  ServiceStore & {
    putArtifacts(
      taskId: string,
      files: { name: string; data: Uint8Array }[],
      options: { fencingToken: number; now?: number },
    ): Promise<void>;
  };

async function run(store: Store, id: string, at: number): Promise<number> {
  const lease = await store.claimTask('w1', { leaseMs: 60_000, taskId: id, now: at });
  if (lease === null) throw new Error(`could not claim ${id}`);
  const clocks = [0, 1].map((c) => ({ type: 'clock' as const, data: { clock: c } }));
  await store.appendJournal(id, clocks, { fencingToken: lease.fencingToken, now: at + 1 });
  return lease.fencingToken;
}

/** Four tasks (succeeded with an artifact, succeeded, failed, paused and re-reasoned), a live and a revoked key. */
export async function keyedWorkload(store: Store): Promise<void> {
  for (const [i, id] of Object.values(IDS).entries())
    await store.createTask(codeInput(`return ${i}`), { id, now: T0 + i, attributes: { tenant: 'acme' } });
  const ok = await run(store, IDS.ok, T0 + 10);
  await store.putArtifacts(IDS.ok, [{ name: 'report.txt', data: new TextEncoder().encode('fine') }], {
    fencingToken: ok,
    now: T0 + 12,
  });
  const done = await store.updateTask(
    IDS.ok,
    { status: 'succeeded', result: '[1,2]' },
    { fencingToken: ok, now: T0 + 13 },
  );
  // A patch of an ended task without a status change: the head alone follows it.
  await store.updateTask(IDS.ok, { result: '[1,2,3]' }, { expectedVersion: done.version, now: T0 + 14 });
  const other = await run(store, IDS.other, T0 + 20);
  await store.updateTask(
    IDS.other,
    { status: 'succeeded', result: '"x"' },
    { fencingToken: other, now: T0 + 22 },
  );
  const failed = await run(store, IDS.failed, T0 + 30);
  await store.updateTask(
    IDS.failed,
    { status: 'failed', error: { code: 'TOOL_FAILED', message: 'boom' } },
    { fencingToken: failed, now: T0 + 32 },
  );
  const paused = await run(store, IDS.paused, T0 + 40);
  const p = await store.updateTask(
    IDS.paused,
    { status: 'paused', pauseReason: 'approval_required' },
    { fencingToken: paused, now: T0 + 42 },
  );
  await store.updateTask(
    IDS.paused,
    { pauseReason: 'awaiting_input' },
    { expectedVersion: p.version, now: T0 + 43 },
  );
  await store.createApiKey(
    { id: MEMBER.id, keyHash: MEMBER.hash, tenant: 'acme', role: 'member' },
    { now: T0 + 50 },
  );
  await store.createApiKey(
    { id: REVOKED.id, keyHash: REVOKED.hash, tenant: 'acme', role: 'member' },
    { now: T0 + 51 },
  );
  await store.revokeApiKey(REVOKED.id, { now: T0 + 52 });
}
