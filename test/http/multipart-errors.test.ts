import { beforeAll, describe, expect, it } from 'vitest';
import { useApiFixture } from './api-fixture.ts';
import type { ApiKey } from './api-fixture.ts';

// Issue 17 item 8: a malformed multipart body is the client's mistake, a 400 (413 for too large) in the envelope,
// never a 500; two `task` parts are refused naming the duplicate instead of one silently winning.

const TASK = '{"code":"return 1"}';

function form(boundary: string, parts: string[], end = true): string {
  return parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('') + (end ? `--${boundary}--\r\n` : '');
}
const field = (name: string, value: string): string =>
  `content-disposition: form-data; name="${name}"\r\n\r\n${value}`;
const file = (name: string, value: string): string =>
  `content-disposition: form-data; name="file"; filename="${name}"\r\ncontent-type: text/plain\r\n\r\n${value}`;

describe('multipart task bodies that are malformed', () => {
  const fx = useApiFixture('http-multipart-errors', { bodyLimit: 64 * 1024, start: false });
  let key: ApiKey;
  beforeAll(async () => {
    key = await fx.key('mp');
  });

  async function post(contentType: string, payload: string) {
    const res = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: { ...key.headers, 'content-type': contentType },
      payload,
    });
    return { status: res.statusCode, body: res.json<{ error: { code: string; message: string } }>() };
  }

  it('answers 400 BAD_REQUEST for a multipart body without a boundary', async () => {
    const { status, body } = await post('multipart/form-data', form('b', [field('task', TASK)]));
    expect(status).toBe(400);
    expect(body.error.code).toBe('BAD_REQUEST');
    expect(body.error.message).toMatch(/multipart/);
  });

  it('answers 400 BAD_REQUEST for a truncated multipart body', async () => {
    const payload = form('b', [field('task', TASK), file('a.txt', 'hello world')], false).slice(0, -20);
    const { status, body } = await post('multipart/form-data; boundary=b', payload);
    expect(status).toBe(400);
    expect(body.error.code).toBe('BAD_REQUEST');
  });

  it('answers 400 BAD_REQUEST for a body with another boundary than the header names', async () => {
    const { status, body } = await post(
      'multipart/form-data; boundary=other',
      form('b', [field('task', TASK)]),
    );
    expect(status).toBe(400);
    expect(body.error.code).toBe('BAD_REQUEST');
  });

  it('answers 400 naming the duplicate for two task parts', async () => {
    const { status, body } = await post(
      'multipart/form-data; boundary=b',
      form('b', [field('task', TASK), field('task', '{"code":"return 2"}')]),
    );
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'BAD_REQUEST', details: { field: 'task' } });
    expect(body.error.message).toMatch(/task: given twice/);
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a file part over the limit', async () => {
    const { status, body } = await post(
      'multipart/form-data; boundary=b',
      form('b', [field('task', TASK), file('big.txt', 'x'.repeat(70 * 1024))]),
    );
    expect(status).toBe(413);
    expect(body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 413 for file parts each under the limit but together over it (the body limit holds for the whole body)', async () => {
    const parts = [field('task', TASK)];
    for (let i = 0; i < 8; i++) parts.push(file(`f${i}.txt`, 'x'.repeat(10 * 1024)));
    const { status, body } = await post('multipart/form-data; boundary=b', form('b', parts));
    expect(status).toBe(413);
    expect(body.error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: { field: 'body', limit: 64 * 1024 },
    });
  });

  it('answers 413 for a task field over the limit, not "not JSON"', async () => {
    const big = JSON.stringify({ code: `return 1;${' '.repeat(70 * 1024)}` });
    const { status, body } = await post('multipart/form-data; boundary=b', form('b', [field('task', big)]));
    expect(status).toBe(413);
    expect(body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 413 for parts over the limit sent chunked, without a Content-Length', async () => {
    const parts = [field('task', TASK)];
    for (let i = 0; i < 8; i++) parts.push(file(`f${i}.txt`, 'x'.repeat(10 * 1024)));
    const payload = form('b', parts);
    const address = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${address}/api/v1/tasks`, {
      method: 'POST',
      headers: { ...key.headers, 'content-type': 'multipart/form-data; boundary=b' },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < payload.length; i += 4096)
            c.enqueue(new TextEncoder().encode(payload.slice(i, i + 4096)));
          c.close();
        },
      }),
      duplex: 'half',
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('still takes a well-formed multipart task', async () => {
    const { status } = await post(
      'multipart/form-data; boundary=b',
      form('b', [field('task', TASK), file('a.txt', 'hi')]),
    );
    expect(status).toBe(201);
  });
});
