import { randomUUID } from 'node:crypto';
import { CodecallError } from '../errors/index.ts';
import { BODY_CHUNK_BYTES, bodyRows } from '../spec/index.ts';
import type { BodyRef } from '../spec/index.ts';

/** What one store does for an upload: a row written, the upload named as the body, an upload's rows dropped. */
export interface BodyUploadSteps {
  insertRow(upload: string, n: number, row: Uint8Array): Promise<void>;
  /** Names the upload as the body `ref` (in one transaction); when the task had these bytes already, drops it. */
  name(upload: string, ref: BodyRef): Promise<void>;
  /** Deletes an upload's rows (no signal: it cleans up after an abort too). */
  drop(upload: string): Promise<void>;
}

/**
 * The upload shared by the stores (ADR 0046): each row of the body its own short write (no connection or write
 * lock held for a whole body), then one transaction names it; on any failure its rows are deleted.
 */
export async function uploadBody(
  chunks: AsyncIterable<Uint8Array>,
  signal: AbortSignal | undefined,
  steps: BodyUploadSteps,
): Promise<BodyRef> {
  const upload = randomUUID();
  const { rows, done } = bodyRows(chunks, BODY_CHUNK_BYTES, signal);
  try {
    let n = 0;
    for await (const row of rows) await steps.insertRow(upload, n++, row);
    const ref = done();
    await steps.name(upload, ref);
    return ref;
  } catch (error) {
    await steps.drop(upload).catch(() => undefined);
    throw error;
  }
}

/**
 * Checked when an upload is named, in the naming transaction: its rows must all be there. A sweep
 * (`sweepUploads`) may have cut the upload of a runner that stalled past its lease; naming it would make a body
 * with rows missing.
 */
export function checkUploadRows(ref: BodyRef, found: { count: number; last: number }): void {
  const rows = Math.ceil(ref.size / BODY_CHUNK_BYTES);
  if (found.count === rows && found.last === rows - 1) return;
  throw new CodecallError(
    'VERSION_CONFLICT',
    `the body's upload lost rows while it was written (${found.count} of ${rows}): a run of the task that started since swept it`,
    { details: { sha256: ref.sha256, rows, found: found.count } },
  );
}
