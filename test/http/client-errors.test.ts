import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenFirst } from '../../src/http/listen-first.ts';
import type { EarlyListener } from '../../src/http/listen-first.ts';
import { useApiFixture } from './api-fixture.ts';
import { after, lastBody, rawClient } from './raw-socket.ts';

// Issue 17 item 8: node answers some requests itself, before any handler (431, 400, 408); those answers carry
// the JSON envelope too, over a raw socket, and the connection is closed after them.

describe("node's early answers", () => {
  const fx = useApiFixture('http-client-errors', { start: false });
  let listener: EarlyListener;
  beforeAll(async () => {
    listener = await listenFirst({
      port: 0,
      host: '127.0.0.1',
      limits: { headersTimeoutMs: 400, requestTimeoutMs: 800 },
    });
    listener.serve((req, res) => fx.app.routing(req, res));
  });
  afterAll(() => listener.close());

  async function send(bytes: string): Promise<string> {
    const c = await rawClient(listener.address);
    c.socket.write(bytes);
    return Promise.race([c.closed, after(5000, 'still open')]);
  }

  it('431 HEADERS_TOO_LARGE for headers over the limit', async () => {
    const text = await send(`GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(text).toContain('application/json');
    expect(lastBody(text)).toMatchObject({ error: { code: 'HEADERS_TOO_LARGE', details: {} } });
  });

  it('400 BAD_REQUEST for a request that is not HTTP', async () => {
    const text = await send('HELLO THERE\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(lastBody(text)).toMatchObject({ error: { code: 'BAD_REQUEST' } });
  });

  it('400 BAD_REQUEST for a malformed header', async () => {
    const text = await send('GET /healthz HTTP/1.1\r\nhost: x\r\nbad header line\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(lastBody(text)).toMatchObject({ error: { code: 'BAD_REQUEST' } });
  });

  it('408 REQUEST_TIMEOUT for headers that never end', async () => {
    const text = await send('GET /healthz HTTP/1.1\r\nhost: x\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(lastBody(text)).toMatchObject({ error: { code: 'REQUEST_TIMEOUT' } });
  });

  it('keeps serving after them', async () => {
    const text = await send('GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    expect(text).toContain('200 OK');
  });
});
