import { beforeAll, describe, expect, it } from 'vitest';
import { useApiFixture } from './api-fixture.ts';
import type { ErrorBody } from './api-fixture.ts';

// Streams per key and per tenant are capped: one more is a 429 TOO_MANY_STREAMS with Retry-After, in the error
// envelope, and closing a stream frees its slot. Both stream routes count against the same caps.

describe('stream caps', () => {
  const fx = useApiFixture('http-stream-limits', {
    streams: { bufferBytes: 1024 * 1024, maxPerKey: 2, maxPerTenant: 3 },
  });
  let base = '';
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
  });

  const open = (headers: Record<string, string>): { res: Promise<Response>; abort: () => void } => {
    const controller = new AbortController();
    return {
      res: fetch(`${base}/api/v1/task-events`, { headers, signal: controller.signal }),
      abort: () => controller.abort(),
    };
  };
  const expectRefused = async (res: Response, scope: string): Promise<void> => {
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe('TOO_MANY_STREAMS');
    expect(body.error.details.scope).toBe(scope);
  };
  /** Retries briefly: the server frees a slot when it sees the client's socket close, a moment after abort(). */
  const openOnceFreed = async (
    headers: Record<string, string>,
  ): Promise<{ status: number; abort: () => void }> => {
    for (let i = 0; ; i++) {
      const s = open(headers);
      const res = await s.res;
      if (res.status !== 429 || i > 50) return { status: res.status, abort: s.abort };
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('refuses a key its third stream and a tenant its fourth, and frees slots on close', async () => {
    const a = await fx.key('t-caps');
    const b = await fx.key('t-caps');
    const first = open(a.headers);
    expect((await first.res).status).toBe(200);
    // The task stream counts against the same cap as the tenant stream.
    const created = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: a.headers,
      payload: { code: 'return 1' },
    });
    const { task_id } = created.json<{ task_id: string }>();
    const taskStream = new AbortController();
    const second = await fetch(`${base}/api/v1/tasks/${task_id}/stream`, {
      headers: a.headers,
      signal: taskStream.signal,
    });
    expect(second.status).toBe(200);
    // The task may end (ending its stream) at once: hold a stream that stays open instead.
    taskStream.abort();
    const held = await openOnceFreed(a.headers);
    expect(held.status).toBe(200);
    await expectRefused(await open(a.headers).res, 'key');
    // Another key of the tenant: the tenant's cap (3) is reached after its first stream.
    const b1 = open(b.headers);
    expect((await b1.res).status).toBe(200);
    await expectRefused(await open(b.headers).res, 'tenant');
    // Another tenant is not affected.
    const other = await fx.key('t-caps-other');
    const o = open(other.headers);
    expect((await o.res).status).toBe(200);
    // Closing a stream frees its slot for the key and for the tenant.
    first.abort();
    const again = await openOnceFreed(a.headers);
    expect(again.status).toBe(200);
    for (const s of [again, held, b1, o]) s.abort();
  });
});
