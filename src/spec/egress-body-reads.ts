import { CodecallError, failure } from '../errors/index.ts';
import { MAX_BODY_READ_BYTES, SHA256_HEX } from './body-store.ts';
import type { TaskBodies } from './body-store.ts';
import type { HostCall, HostOutcome } from './sandbox.ts';

/**
 * The guest's reads of a stored body (ADR 0046): `egress.body` with `{ sha256, offset, length }`, answered with
 * `{ bytes }` (base64, fewer at the body's end, none past it). They are not journaled: a digest names one content,
 * so a replay reads the same bytes from the store, and a 50 MB body costs no 50 MB of journal.
 */
export interface BodyRead {
  readonly sha256: string;
  readonly offset: number;
  readonly length: number;
}

/** Whether a host call is a read of a stored body (the journaling host passes it through unjournaled). */
export function isBodyRead(call: HostCall): boolean {
  return call.kind === 'tool' && call.namespace === 'egress' && call.name === 'body';
}

export function bodyReadOf(
  call: HostCall & { kind: 'tool' },
): BodyRead | { error: ReturnType<typeof failure> } {
  const a = (call.args ?? {}) as Record<string, unknown>;
  const { sha256, offset, length } = a;
  if (
    typeof sha256 !== 'string' ||
    !SHA256_HEX.test(sha256) ||
    typeof offset !== 'number' ||
    !Number.isSafeInteger(offset) ||
    offset < 0 ||
    typeof length !== 'number' ||
    !Number.isSafeInteger(length) ||
    length < 0 ||
    length > MAX_BODY_READ_BYTES
  ) {
    return {
      error: failure(
        'TOOL_VALIDATION',
        `fetch: a body read needs a digest, an offset and a length of at most ${MAX_BODY_READ_BYTES}`,
      ),
    };
  }
  return { sha256, offset, length };
}

export async function serveBodyRead(
  read: BodyRead | { error: ReturnType<typeof failure> },
  bodies: TaskBodies | undefined,
  signal: AbortSignal,
): Promise<HostOutcome> {
  if ('error' in read) return { ok: false, error: read.error };
  try {
    const bytes = bodies ? await bodies.read(read.sha256, { ...read, signal }) : null;
    if (bytes === null)
      return {
        ok: false,
        error: failure('TOOL_VALIDATION', `fetch: the task has no stored body ${read.sha256}`),
      };
    return { ok: true, value: { bytes: Buffer.from(bytes).toString('base64') } };
  } catch (error) {
    if (error instanceof CodecallError)
      return { ok: false, error: failure(error.code, error.message, error.details) };
    throw error;
  }
}
