import { createHash } from 'node:crypto';
import { CodecallError } from '../errors/index.ts';

/**
 * Large response bodies out of line (issue 21, ADR 0046): a body over the egress's threshold is streamed from the
 * socket into the task's body store, hashing as it goes, and the journal's outcome names it by digest and size.
 * The guest reads it by ranges; a replay reads the same bytes, since a digest names one content.
 */
export interface BodyRef {
  /** Hex SHA-256 of the bytes. */
  readonly sha256: string;
  readonly size: number;
}

/** A store operation's options (task-store.ts's StoreOptions, repeated: egress.ts imports this file). */
interface StoreOptions {
  readonly signal?: AbortSignal;
}

/** Where a store keeps tasks' large bodies, in chunked rows: neither side ever holds a whole body. */
export interface BodyStore {
  /**
   * Writes the bytes of `chunks` as one body of the task, chunk by chunk, and resolves to its digest and size (a
   * body the task already has is kept once). An abort or an error of `chunks` leaves nothing behind. Not fenced:
   * a body is immutable and named by its content, so a stale runner's write can change nothing a reader sees.
   */
  putBody(
    taskId: string,
    chunks: AsyncIterable<Uint8Array>,
    options?: StoreOptions & { now?: number },
  ): Promise<BodyRef>;
  /**
   * Deletes the rows of the task's uploads that no body names: what a runner that crashed or stalled mid-body
   * left. Called when a run of the task starts after an earlier attempt, when no other runner may be writing its
   * bodies; a stalled ex-runner that goes on writing finds its upload cut, and naming it fails (VERSION_CONFLICT)
   * rather than naming a body with rows missing. Resolves to the number of rows deleted.
   */
  sweepUploads(taskId: string, options?: StoreOptions): Promise<number>;
  /** Up to `length` bytes from `offset` (fewer at its end), or null when the task has no body of that digest. */
  readBody(
    taskId: string,
    sha256: string,
    options: StoreOptions & { offset: number; length: number },
  ): Promise<Uint8Array | null>;
}

export function isBodyStore(store: object): store is BodyStore {
  return typeof (store as Partial<BodyStore>).putBody === 'function';
}

/** One task's bodies: what its egress writes and its guest's reads are served from. */
export interface TaskBodies {
  put(chunks: AsyncIterable<Uint8Array>, options: { readonly signal: AbortSignal }): Promise<BodyRef>;
  read(
    sha256: string,
    options: { readonly offset: number; readonly length: number; readonly signal: AbortSignal },
  ): Promise<Uint8Array | null>;
}

export function taskBodies(store: BodyStore, taskId: string): TaskBodies {
  return {
    put: (chunks, { signal }) => store.putBody(taskId, chunks, { signal }),
    read: (sha256, { offset, length, signal }) => store.readBody(taskId, sha256, { offset, length, signal }),
  };
}

/** The size of a stored row of a body (the last one may be shorter): a range maps to rows by arithmetic. */
export const BODY_CHUNK_BYTES = 256 * 1024;

/** The most bytes one read of a stored body returns. */
export const MAX_BODY_READ_BYTES = 1024 * 1024;

/**
 * `source` cut into rows of exactly `size` bytes (the last shorter), with the running digest: at most one row and
 * one incoming chunk held. `done()` is the digest and size once the source is through.
 */
export function bodyRows(
  source: AsyncIterable<Uint8Array>,
  size: number = BODY_CHUNK_BYTES,
  signal?: AbortSignal,
): { rows: AsyncIterable<Buffer>; done: () => BodyRef } {
  const hash = createHash('sha256');
  let total = 0;
  let finished = false;
  async function* rows(): AsyncGenerator<Buffer> {
    let pending: Buffer[] = [];
    let held = 0;
    for await (const chunk of source) {
      signal?.throwIfAborted();
      let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      hash.update(bytes);
      total += bytes.length;
      while (held + bytes.length >= size) {
        const take = size - held;
        pending.push(bytes.subarray(0, take));
        yield Buffer.concat(pending, size);
        pending = [];
        held = 0;
        bytes = bytes.subarray(take);
      }
      if (bytes.length > 0) {
        // Copied: the source may reuse its buffer.
        pending.push(Buffer.from(bytes));
        held += bytes.length;
      }
    }
    if (held > 0) yield Buffer.concat(pending, held);
    finished = true;
  }
  return {
    rows: rows(),
    done: () => {
      if (!finished) throw new CodecallError('INTERNAL', 'the body was not read to its end');
      return { sha256: hash.digest('hex'), size: total };
    },
  };
}

/** Checks a ranged read's arguments (offset and length non-negative integers, length within the bound). */
export function checkBodyRange(offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'a body range needs a non-negative integer offset and length',
    );
  if (length > MAX_BODY_READ_BYTES)
    throw new CodecallError('INVALID_ARGUMENT', `one body read is at most ${MAX_BODY_READ_BYTES} bytes`);
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;
