// The SQLite store's artifacts: fenced writes, replacement by a later run, reads, and the cascade on delete.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import type { SqliteTaskStore } from '../../src/store/index.ts';
import { codeInput, expectCode, LEASE } from '../conformance/task-store-support.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('SQLite artifacts', () => {
  let dir = '';
  let store: SqliteTaskStore;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-artifacts-'));
    store = await createSqliteTaskStore({ path: join(dir, 'a.db') });
  });
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the last run’s files, fenced by the lease, with size and hash', async () => {
    const task = await store.createTask(codeInput());
    const lease = await store.claimTask('w1', { leaseMs: LEASE, taskId: task.id });
    if (!lease) throw new Error('not claimed');
    const fenced = { fencingToken: lease.fencingToken };
    await store.putArtifacts(
      task.id,
      [
        { name: 'b.txt', data: bytes('bee') },
        { name: 'a/x.csv', data: bytes('1,2') },
      ],
      fenced,
    );
    expect(
      (await store.listArtifacts(task.id)).map(({ name, size, sha256 }) => ({ name, size, sha256 })),
    ).toEqual([
      { name: 'a/x.csv', size: 3, sha256: createHash('sha256').update('1,2').digest('hex') },
      { name: 'b.txt', size: 3, sha256: createHash('sha256').update('bee').digest('hex') },
    ]);
    expect(new TextDecoder().decode((await store.readArtifact(task.id, 'b.txt')) ?? new Uint8Array())).toBe(
      'bee',
    );
    expect(await store.readArtifact(task.id, 'nope')).toBeNull();
    // A later run replaces them all.
    await store.putArtifacts(task.id, [{ name: 'c.bin', data: new Uint8Array([0, 255, 7]) }], fenced);
    expect((await store.listArtifacts(task.id)).map((a) => a.name)).toEqual(['c.bin']);
    expect([...((await store.readArtifact(task.id, 'c.bin')) ?? [])]).toEqual([0, 255, 7]);
    // A runner that lost its lease writes nothing.
    await store.releaseLease(lease);
    const next = await store.claimTask('w2', { leaseMs: LEASE, taskId: task.id });
    if (!next) throw new Error('not claimed again');
    await expectCode(store.putArtifacts(task.id, [], fenced), 'FENCED');
    expect((await store.listArtifacts(task.id)).map((a) => a.name)).toEqual(['c.bin']);
  });
});
