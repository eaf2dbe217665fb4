import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';
import { lastBody, rawClient } from './raw-socket.ts';

// Issue 17: a JSON body of millions of `[` blocked the event loop for seconds. The server scans a JSON body's
// depth before it parses it and refuses one nested too deep with 400 JSON_TOO_DEEP, costing the loop little.

const LAG_BOUND_MS = 200;

describe('deeply nested JSON bodies', () => {
  const fx = useApiFixture('http-deep-json', { bodyLimit: 16 * 1024 * 1024, start: false });
  let key: ApiKey;
  let address = '';
  beforeAll(async () => {
    key = await fx.key('deep');
    address = await fx.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => fx.app.close());

  async function rawPost(path: string, body: string, contentType = 'application/json') {
    const client = await rawClient(address);
    client.socket.write(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${key.headers.authorization}\r\n` +
        `content-type: ${contentType}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`,
    );
    client.socket.end(body);
    const text = await client.closed;
    return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]), body: lastBody(text) as ErrorBody };
  }

  it('refuses 2,000,000 [ with 400 JSON_TOO_DEEP without blocking the event loop', async () => {
    const lag = monitorEventLoopDelay({ resolution: 5 });
    lag.enable();
    const res = await rawPost('/api/v1/tasks', '['.repeat(2_000_000));
    lag.disable();
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('JSON_TOO_DEEP');
    expect(res.body.error.details).toMatchObject({ field: 'body', max_depth: 128 });
    expect(lag.max / 1e6).toBeLessThan(LAG_BOUND_MS);
  });

  it('refuses a deep value inside an otherwise good body, and a deep multipart task field', async () => {
    const deep = `{"code":"return 1","metadata":{"a":${'['.repeat(200)}${']'.repeat(200)}}}`;
    const res = await rawPost('/api/v1/tasks', deep);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('JSON_TOO_DEEP');
    const form = `--b\r\ncontent-disposition: form-data; name="task"\r\n\r\n${'{"a":'.repeat(300)}1${'}'.repeat(300)}\r\n--b--\r\n`;
    const mp = await rawPost('/api/v1/tasks', form, 'multipart/form-data; boundary=b');
    expect(mp.status).toBe(400);
    expect(mp.body.error.code).toBe('JSON_TOO_DEEP');
    expect(mp.body.error.details).toMatchObject({ field: 'task' });
  });

  it('accepts brackets inside strings and a body within the depth, and keeps the other JSON errors', async () => {
    const code = `return ${JSON.stringify('['.repeat(5000))}.length`;
    const ok = await rawPost('/api/v1/tasks', JSON.stringify({ code, metadata: { a: [[[[1]]]] } }));
    expect(ok.status).toBe(201);
    const bad = await rawPost('/api/v1/tasks', '{"code": ');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).not.toBe('JSON_TOO_DEEP');
    const proto = await rawPost('/api/v1/tasks', '{"code":"return 1","__proto__":{"x":1}}');
    expect(proto.status).toBe(400);
  });
});
