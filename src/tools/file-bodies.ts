import { mkdtemp, open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { CodecallError } from '../errors/index.ts';
import { BODY_CHUNK_BYTES, bodyRows, checkBodyRange } from '../spec/index.ts';
import type { BodyRef, TaskBodies } from '../spec/index.ts';

/** Bytes of bodies one run without a durable store may keep on disk, all together. */
export const DEFAULT_HELD_BODY_BYTES = 1024 * 1024 * 1024;

export interface FileBodiesOptions {
  /** Where the run's directory is made (default: the OS's temporary directory). */
  readonly parent?: string;
  /** Past this many bytes of bodies in all, a fetch fails with EGRESS_LIMIT (held_bytes). */
  readonly maxHeldBytes?: number;
}

/** A one-off run's body store, and its end: `close()` deletes every body. */
export interface RunBodies extends TaskBodies {
  close(): Promise<void>;
}

/**
 * Large bodies of a one-off run (`runProgram`, `codecall run`: no durable store, ADR 0046 amended 2026-12-06): each
 * streamed to a file of a temporary directory made at the first one, named by its digest, read by ranges, all
 * deleted by `close()` at the run's end. The host holds a row and a chunk at a time, whatever the body's size.
 */
export function fileBodies(options: FileBodiesOptions = {}): RunBodies {
  const maxHeld = options.maxHeldBytes ?? DEFAULT_HELD_BODY_BYTES;
  const sizes = new Map<string, number>();
  let dir: Promise<string> | undefined;
  let held = 0;
  let uploads = 0;
  let closed = false;
  const dirOf = (): Promise<string> =>
    (dir ??= mkdtemp(join(options.parent ?? os.tmpdir(), 'codecall-bodies-')));
  return {
    async put(chunks, { signal }): Promise<BodyRef> {
      if (closed) throw new CodecallError('INTERNAL', 'the run has ended: its bodies are gone');
      const at = await dirOf();
      const upload = join(at, `upload-${uploads++}`);
      const { rows, done } = bodyRows(chunks, BODY_CHUNK_BYTES, signal);
      let file: FileHandle | undefined = await open(upload, 'wx');
      let size = 0;
      try {
        for await (const row of rows) {
          size += row.length;
          if (held + size > maxHeld)
            throw new CodecallError(
              'EGRESS_LIMIT',
              `fetch: a run without a durable store keeps at most ${maxHeld} bytes of bodies`,
              { details: { limit: 'held_bytes', max: maxHeld } },
            );
          await file.write(row);
        }
        await file.close();
        file = undefined;
        const ref = done();
        if (sizes.has(ref.sha256)) {
          await rm(upload, { force: true });
        } else {
          await rename(upload, join(at, ref.sha256));
          sizes.set(ref.sha256, ref.size);
          held += ref.size;
        }
        return ref;
      } catch (error) {
        await file?.close();
        await rm(upload, { force: true });
        throw error;
      }
    },
    async read(sha256, { offset, length }): Promise<Uint8Array | null> {
      checkBodyRange(offset, length);
      const size = sizes.get(sha256);
      if (size === undefined || dir === undefined) return null;
      const end = Math.min(size, offset + length);
      if (end <= offset) return new Uint8Array(0);
      const file = await open(join(await dir, sha256), 'r');
      try {
        const out = new Uint8Array(end - offset);
        let got = 0;
        while (got < out.length) {
          const { bytesRead } = await file.read(out, got, out.length - got, offset + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return got === out.length ? out : out.subarray(0, got);
      } finally {
        await file.close();
      }
    },
    async close(): Promise<void> {
      closed = true;
      sizes.clear();
      if (dir !== undefined) await rm(await dir, { recursive: true, force: true });
    },
  };
}
