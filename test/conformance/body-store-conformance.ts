// What every BodyStore must do (ADR 0046), on a store that is also a TaskStore (bodies belong to tasks).
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BODY_CHUNK_BYTES } from '../../src/spec/index.ts';
import type { BodyStore, TaskStore } from '../../src/spec/index.ts';
import { codeInput, expectCode, T0 } from './task-store-support.ts';

export type BodyTaskStore = TaskStore & BodyStore;

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Deterministic bytes (not a repeated pattern that would hide a misplaced row). */
function pattern(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** `data` in chunks of odd sizes, as a socket would give it. */
async function* chunksOf(data: Uint8Array, size = 65_521): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += size) {
    await Promise.resolve();
    yield data.subarray(i, Math.min(data.length, i + size));
  }
}

export function describeBodyStoreConformance(
  name: string,
  createStore: () => Promise<BodyTaskStore>,
  /** Rows of body chunks the store holds, counted through a connection of the test's own. */
  bodyRowCount: (store: BodyTaskStore) => Promise<number>,
): void {
  describe(`${name} body store conformance`, () => {
    let store: BodyTaskStore;
    beforeEach(async () => {
      store = await createStore();
    });
    afterEach(async () => {
      await store.close();
    });

    it('stores a multi-row body by chunks and reads any range of it back', async () => {
      const task = await store.createTask(codeInput(), { now: T0 });
      const data = pattern(3 * BODY_CHUNK_BYTES + 1234);
      const ref = await store.putBody(task.id, chunksOf(data));
      expect(ref).toEqual({ sha256: sha256(data), size: data.length });
      const read = (offset: number, length: number) =>
        store.readBody(task.id, ref.sha256, { offset, length });
      expect(sha256((await read(0, data.length > 1 << 20 ? 1 << 20 : data.length)) ?? new Uint8Array())).toBe(
        sha256(data.subarray(0, 1 << 20)),
      );
      // Across row boundaries, inside one row, at the end, past the end.
      for (const [offset, length] of [
        [BODY_CHUNK_BYTES - 10, 20],
        [5, 7],
        [2 * BODY_CHUNK_BYTES, BODY_CHUNK_BYTES],
        [data.length - 3, 100],
        [data.length, 10],
        [data.length + 50, 10],
        [0, 0],
      ] as const) {
        const got = await read(offset, length);
        expect(Buffer.from(got ?? []).equals(Buffer.from(data.subarray(offset, offset + length)))).toBe(true);
      }
      // The whole body, range by range.
      const parts: Uint8Array[] = [];
      for (let at = 0; at < data.length; at += 300_000)
        parts.push((await read(at, 300_000)) ?? new Uint8Array());
      expect(sha256(Buffer.concat(parts))).toBe(ref.sha256);
    });

    it('keeps one copy of the same bytes; another task cannot read them; an empty body is a body', async () => {
      const a = await store.createTask(codeInput(), { now: T0 });
      const b = await store.createTask(codeInput(), { now: T0 });
      const data = pattern(BODY_CHUNK_BYTES + 1, 9);
      const first = await store.putBody(a.id, chunksOf(data));
      const again = await store.putBody(a.id, chunksOf(data, 1000));
      expect(again).toEqual(first);
      expect(await store.readBody(b.id, first.sha256, { offset: 0, length: 10 })).toBeNull();
      expect(await store.readBody(a.id, sha256(pattern(5)), { offset: 0, length: 10 })).toBeNull();
      const empty = await store.putBody(a.id, chunksOf(new Uint8Array(0)));
      expect(empty).toEqual({ sha256: sha256(new Uint8Array(0)), size: 0 });
      expect(await store.readBody(a.id, empty.sha256, { offset: 0, length: 10 })).toEqual(new Uint8Array(0));
    });

    it("sweeps what a runner left mid-body; a stalled runner's upload cut by the sweep is not named", async () => {
      const task = await store.createTask(codeInput(), { now: T0 });
      const data = pattern(3 * BODY_CHUNK_BYTES + 11, 5);
      const kept = await store.putBody(task.id, chunksOf(data.subarray(0, BODY_CHUNK_BYTES + 1)));
      const keptRows = await bodyRowCount(store);
      expect(keptRows).toBe(2);
      // A runner that stalls mid-body: two rows written, the rest held back until the test lets it go on.
      let release = (): void => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let written = (): void => undefined;
      const halfway = new Promise<void>((resolve) => (written = resolve));
      async function* stalled(): AsyncGenerator<Uint8Array> {
        yield data.subarray(0, 2 * BODY_CHUNK_BYTES + 1);
        written();
        await gate;
        yield data.subarray(2 * BODY_CHUNK_BYTES + 1);
      }
      const put = store.putBody(task.id, stalled());
      await halfway;
      await until(async () => (await bodyRowCount(store)) === keptRows + 2);
      // A new run of the task sweeps: the stalled upload's rows go, the named body stays whole.
      expect(await store.sweepUploads(task.id)).toBe(2);
      expect(await bodyRowCount(store)).toBe(keptRows);
      release();
      await expectCode(put, 'VERSION_CONFLICT');
      expect(await store.readBody(task.id, sha256(data), { offset: 0, length: 1 })).toBeNull();
      expect(await bodyRowCount(store)).toBe(keptRows);
      const whole = await store.readBody(task.id, kept.sha256, { offset: 0, length: BODY_CHUNK_BYTES + 1 });
      expect(sha256(whole ?? new Uint8Array())).toBe(kept.sha256);
      expect(await store.sweepUploads(task.id)).toBe(0);
    });

    it('keeps nothing of a put that failed or was aborted, and refuses a task it does not have', async () => {
      const task = await store.createTask(codeInput(), { now: T0 });
      const data = pattern(2 * BODY_CHUNK_BYTES + 7, 3);
      async function* failing(): AsyncGenerator<Uint8Array> {
        yield* chunksOf(data.subarray(0, BODY_CHUNK_BYTES + 5));
        throw new Error('the socket closed');
      }
      await expect(store.putBody(task.id, failing())).rejects.toThrow('the socket closed');
      const controller = new AbortController();
      async function* aborted(): AsyncGenerator<Uint8Array> {
        yield* chunksOf(data.subarray(0, BODY_CHUNK_BYTES + 5));
        controller.abort();
        yield data.subarray(BODY_CHUNK_BYTES + 5);
      }
      await expect(store.putBody(task.id, aborted(), { signal: controller.signal })).rejects.toThrow();
      expect(await store.readBody(task.id, sha256(data), { offset: 0, length: 1 })).toBeNull();
      expect(await bodyRowCount(store)).toBe(0);
      await expectCode(store.putBody('no-such-task', chunksOf(data)), 'NOT_FOUND');
      await expectCode(store.readBody(task.id, sha256(data), { offset: -1, length: 1 }), 'INVALID_ARGUMENT');
    });
  });
}
