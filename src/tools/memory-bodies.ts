import { CodecallError } from '../errors/index.ts';
import { BODY_CHUNK_BYTES, bodyRows, checkBodyRange } from '../spec/index.ts';
import type { BodyRef, TaskBodies } from '../spec/index.ts';

/** Bodies one run without a durable store may hold, all together (the sum of the large ones it fetched). */
export const DEFAULT_HELD_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Large bodies of a one-off run (`runProgram`, no durable store, ADR 0046): in memory, in rows, at most
 * `maxHeldBytes` in all (past it a fetch fails with EGRESS_LIMIT), gone with the run. Nothing replays a one-off
 * run, so no body outlives it.
 */
export function memoryBodies(maxHeldBytes: number = DEFAULT_HELD_BODY_BYTES): TaskBodies {
  const kept = new Map<string, { size: number; rows: Buffer[] }>();
  let held = 0;
  return {
    async put(chunks, { signal }): Promise<BodyRef> {
      const { rows, done } = bodyRows(chunks, BODY_CHUNK_BYTES, signal);
      const got: Buffer[] = [];
      let size = 0;
      for await (const row of rows) {
        size += row.length;
        if (held + size > maxHeldBytes)
          throw new CodecallError(
            'EGRESS_LIMIT',
            `fetch: a run without a durable store holds at most ${maxHeldBytes} bytes of bodies`,
            { details: { limit: 'held_bytes', max: maxHeldBytes } },
          );
        got.push(row);
      }
      const ref = done();
      if (!kept.has(ref.sha256)) {
        kept.set(ref.sha256, { size, rows: got });
        held += size;
      }
      return ref;
    },
    read(sha256, { offset, length }): Promise<Uint8Array | null> {
      checkBodyRange(offset, length);
      const body = kept.get(sha256);
      if (body === undefined) return Promise.resolve(null);
      const end = Math.min(body.size, offset + length);
      if (end <= offset) return Promise.resolve(new Uint8Array(0));
      const first = Math.floor(offset / BODY_CHUNK_BYTES);
      const last = Math.floor((end - 1) / BODY_CHUNK_BYTES);
      const joined = Buffer.concat(body.rows.slice(first, last + 1));
      const skip = offset - first * BODY_CHUNK_BYTES;
      return Promise.resolve(new Uint8Array(joined.subarray(skip, skip + end - offset)));
    },
  };
}
