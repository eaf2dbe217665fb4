import type { BodyRef } from '../spec/index.ts';
import { bodyTooLarge, closedMidBody, failed } from './egress-errors.ts';
import { readBody } from './send-hop.ts';
import type { HopResponse } from './send-hop.ts';

/** Where a body over `above` bytes goes, streamed (ADR 0046): the task's body store. */
export interface BodySpill {
  readonly above: number;
  put(chunks: AsyncIterable<Uint8Array>, options: { readonly signal: AbortSignal }): Promise<BodyRef>;
}

/**
 * The response body, in memory when it is at most `spill.above` bytes, else streamed into the spill as it comes
 * off the socket (the socket paused while the store writes: no more than a row and a chunk held). At most
 * `maxBytes` either way: past it the connection is destroyed and EGRESS_LIMIT thrown, and the spill keeps nothing.
 */
export async function readOrSpill(
  hop: HopResponse,
  options: {
    readonly host: string;
    readonly maxBytes: number;
    readonly signal: AbortSignal;
    readonly head: boolean;
    readonly spill: BodySpill;
  },
): Promise<{ readonly bytes: Buffer } | { readonly stored: BodyRef }> {
  const { request, response } = hop;
  const { maxBytes, signal, spill, host } = options;
  const bodiless = options.head || response.statusCode === 204 || response.statusCode === 304;
  const declared = Number(response.headers['content-length']);
  // Small, absent or refused at once: the in-memory reader's rules.
  if (bodiless || (Number.isFinite(declared) && (declared <= spill.above || declared > maxBytes)))
    return { bytes: await readBody(hop, options) };
  const onAbort = (): void => {
    response.destroy(signal.reason as Error);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const chunks = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let size = 0;
  const next = async (): Promise<Buffer | null> => {
    let step: IteratorResult<Buffer>;
    try {
      step = await chunks.next();
    } catch (error) {
      throw signal.aborted ? (signal.reason as Error) : failed(host, error);
    }
    if (step.done) {
      if (!response.complete) throw closedMidBody(host);
      return null;
    }
    size += step.value.length;
    if (size > maxBytes) throw bodyTooLarge(host, maxBytes);
    return step.value;
  };
  try {
    const head: Buffer[] = [];
    for (;;) {
      const chunk = await next();
      if (chunk === null) return { bytes: Buffer.concat(head, size) };
      head.push(chunk);
      if (size > spill.above) break;
    }
    async function* all(): AsyncGenerator<Buffer> {
      yield* head.splice(0);
      for (let chunk = await next(); chunk !== null; chunk = await next()) yield chunk;
    }
    return { stored: await spill.put(all(), { signal }) };
  } catch (error) {
    response.destroy();
    request.destroy();
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
