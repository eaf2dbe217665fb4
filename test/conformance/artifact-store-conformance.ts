// What every ArtifactStore must do, on a store that is also the TaskStore whose leases fence the writes.
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArtifactStore, Lease, TaskStore } from '../../src/spec/index.ts';
import { codeInput, expectCode, LEASE, T0 } from './task-store-support.ts';

export type ArtifactTaskStore = TaskStore & ArtifactStore;

const bytes = (s: string) => new TextEncoder().encode(s);
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

/** The behaviour every ArtifactStore must show; each case gets a fresh, empty store. */
export function describeArtifactStoreConformance(
  name: string,
  createStore: () => Promise<ArtifactTaskStore>,
): void {
  describe(`${name} artifact store conformance`, () => {
    let store: ArtifactTaskStore;
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    async function running(owner = 'w1'): Promise<Lease> {
      const task = await store.createTask(codeInput(), { now: T0 });
      const lease = await store.claimTask(owner, { leaseMs: LEASE, taskId: task.id, now: T0 });
      if (!lease) throw new Error('not claimed');
      return lease;
    }

    it('keeps the last run’s files, fenced by the lease, with size and hash', async () => {
      const lease = await running();
      const task = { id: lease.taskId };
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
      // The new holder's write goes through; an empty list clears them.
      await store.putArtifacts(task.id, [], { fencingToken: next.fencingToken });
      expect(await store.listArtifacts(task.id)).toEqual([]);
      expect(await store.readArtifact(task.id, 'c.bin')).toBeNull();
    });

    it('lists by name with the time of the write; a task without artifacts has none', async () => {
      const lease = await running();
      expect(await store.listArtifacts(lease.taskId)).toEqual([]);
      await store.putArtifacts(
        lease.taskId,
        [
          { name: 'z.txt', data: bytes('z') },
          { name: 'out/chart.svg', data: bytes('<svg/>') },
          { name: 'empty', data: new Uint8Array() },
        ],
        { fencingToken: lease.fencingToken, now: T0 + 5 },
      );
      const at = new Date(T0 + 5).toISOString();
      expect(await store.listArtifacts(lease.taskId)).toEqual([
        { name: 'empty', size: 0, sha256: sha256(''), createdAt: at },
        { name: 'out/chart.svg', size: 6, sha256: sha256('<svg/>'), createdAt: at },
        { name: 'z.txt', size: 1, sha256: sha256('z'), createdAt: at },
      ]);
      expect(await store.readArtifact(lease.taskId, 'empty')).toEqual(new Uint8Array());
    });

    it('keeps exactly the bytes given, also of a view into a larger buffer', async () => {
      const lease = await running();
      const all = new Uint8Array(256).map((_, i) => i);
      const view = all.subarray(10, 20);
      await store.putArtifacts(
        lease.taskId,
        [
          { name: 'all.bin', data: all },
          { name: 'view.bin', data: view },
        ],
        {
          fencingToken: lease.fencingToken,
        },
      );
      expect(await store.readArtifact(lease.taskId, 'all.bin')).toEqual(all);
      const read = await store.readArtifact(lease.taskId, 'view.bin');
      expect(read).toEqual(new Uint8Array([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]));
      expect((await store.listArtifacts(lease.taskId)).find((a) => a.name === 'view.bin')).toMatchObject({
        size: 10,
        sha256: sha256(view),
      });
      // What a reader gets is its own copy: changing it changes nothing stored.
      read?.fill(0);
      expect(await store.readArtifact(lease.taskId, 'view.bin')).toEqual(view);
    });

    it("keeps each task's artifacts apart", async () => {
      const a = await running('wa');
      const b = await running('wb');
      await store.putArtifacts(a.taskId, [{ name: 'same.txt', data: bytes('from a') }], {
        fencingToken: a.fencingToken,
      });
      await store.putArtifacts(b.taskId, [{ name: 'same.txt', data: bytes('from b') }], {
        fencingToken: b.fencingToken,
      });
      expect(new TextDecoder().decode((await store.readArtifact(a.taskId, 'same.txt')) ?? undefined)).toBe(
        'from a',
      );
      expect(new TextDecoder().decode((await store.readArtifact(b.taskId, 'same.txt')) ?? undefined)).toBe(
        'from b',
      );
      await store.putArtifacts(a.taskId, [], { fencingToken: a.fencingToken });
      expect((await store.listArtifacts(b.taskId)).map((x) => x.name)).toEqual(['same.txt']);
      expect(await store.listArtifacts('task_missing')).toEqual([]);
      expect(await store.readArtifact('task_missing', 'same.txt')).toBeNull();
    });

    it('rejects ABORTED with an aborted signal and STORE_CLOSED after close', async () => {
      const lease = await running();
      const signal = AbortSignal.abort();
      const files = [{ name: 'a.txt', data: bytes('a') }];
      await expectCode(
        store.putArtifacts(lease.taskId, files, { fencingToken: lease.fencingToken, signal }),
        'ABORTED',
      );
      await expectCode(store.listArtifacts(lease.taskId, { signal }), 'ABORTED');
      await expectCode(store.readArtifact(lease.taskId, 'a.txt', { signal }), 'ABORTED');
      expect(await store.listArtifacts(lease.taskId)).toEqual([]);
      await store.close();
      await expectCode(
        store.putArtifacts(lease.taskId, files, { fencingToken: lease.fencingToken }),
        'STORE_CLOSED',
      );
      await expectCode(store.listArtifacts(lease.taskId), 'STORE_CLOSED');
      await expectCode(store.readArtifact(lease.taskId, 'a.txt'), 'STORE_CLOSED');
    });
  });
}
