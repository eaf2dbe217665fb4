import { beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.ts';
import { codecall } from '../cli-fixture.ts';
import { until } from '../durable/fixture.ts';
import { useApiFixture } from './api-fixture.ts';
import type { ApiKey } from './api-fixture.ts';
import { after, rawClient } from './raw-socket.ts';

// Revocation is immediate: a revoked key's open streams end (an `error` event KEY_REVOKED) within a second or
// two and its requests in flight are refused, whether the key was revoked through this server or by another
// process on the same database (`codecall keys revoke --db`), which this server sees by its per-tick check.

/** An open stream read in the background: its text so far, and whether it ended. */
interface OpenStream {
  text(): string;
  ended(): boolean;
}

async function openStream(url: string, key: ApiKey): Promise<OpenStream> {
  const res = await fetch(url, { headers: key.headers });
  expect(res.status).toBe(200);
  let text = '';
  let ended = false;
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
    } catch {
      // Dropped.
    }
    ended = true;
  })();
  return { text: () => text, ended: () => ended };
}

describe('key revocation ends streams and requests in flight', () => {
  const gates: (() => void)[] = [];
  const fx = useApiFixture('http-key-revocation', {
    // The largest maxCodeBytes an operator may set: a task's code may be this big, and so may an answer that
    // shows it (GET /tasks/{id}).
    bodyLimit: 16 * 1024 * 1024,
    runtime: { ceilings: { maxCodeBytes: 16 * 1024 * 1024 } },
    tools: [
      defineTool({
        name: 'gate',
        description: 'waits for the test',
        effect: 'read',
        execute: () => new Promise((resolve) => gates.push(() => resolve('open'))),
      }),
    ],
  });
  let base = '';
  let admin: ApiKey;
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    admin = await fx.key('t-admin', 'admin');
  });

  const submit = async (key: ApiKey, code: string): Promise<string> => {
    const res = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: key.headers,
      payload: { code },
    });
    expect(res.statusCode).toBe(201);
    return res.json<{ task_id: string }>().task_id;
  };

  /** Opens a task stream and a task-events stream of `victim`, revokes it with `revoke`, and checks the ends. */
  async function revokeWhileStreaming(tenant: string, revoke: (key: ApiKey) => Promise<void>): Promise<void> {
    const victim = await fx.key(tenant);
    const other = await fx.key(tenant);
    const gated = await submit(victim, 'await tools.gate({}); return 1;');
    const streams = [
      await openStream(`${base}/api/v1/tasks/${gated}/stream`, victim),
      await openStream(`${base}/api/v1/task-events`, victim),
    ];
    await until(() => streams.every((s) => s.text().includes('event: ')), 30_000);
    await revoke(victim);
    // Made right after the revocation by another key of the tenant: its result must not reach the revoked key.
    const later = await submit(other, 'return "after-revocation";');
    await until(() => streams.every((s) => s.ended()), 5_000);
    for (const s of streams) {
      expect(s.text()).toContain('event: error');
      expect(s.text()).toContain('KEY_REVOKED');
    }
    await until(async () => (await fx.runtime.get(later))?.status === 'succeeded', 30_000);
    await new Promise((r) => setTimeout(r, 300));
    for (const s of streams) {
      expect(s.text()).not.toContain(later);
      expect(s.text()).not.toContain('after-revocation');
    }
    // And it is refused from now on.
    const again = await fetch(`${base}/api/v1/task-events`, { headers: victim.headers });
    expect(again.status).toBe(401);
    await again.body?.cancel();
    gates.splice(0).forEach((g) => g());
  }

  it('ends the streams of a key revoked through this server at once', async () => {
    await revokeWhileStreaming('t-rev-here', async (victim) => {
      const res = await fx.app.inject({
        method: 'DELETE',
        url: `/api/v1/keys/${victim.id}`,
        headers: admin.headers,
      });
      expect(res.statusCode).toBe(200);
    });
  }, 120_000);

  it('ends the streams of a key revoked by another process on the database within its tick', async () => {
    await revokeWhileStreaming('t-rev-there', async (victim) => {
      const run = await codecall({}, 'keys', 'revoke', victim.id, '--db', fx.path);
      expect(run.code).toBe(0);
    });
  }, 120_000);

  it('refuses a request in flight (its body still coming) once its key is revoked elsewhere', async () => {
    const victim = await fx.key('t-rev-flight');
    const client = await rawClient(base);
    const body = JSON.stringify({ code: 'return "in-flight";' });
    client.socket.write(
      `POST /api/v1/tasks HTTP/1.1\r\nhost: x\r\nauthorization: ${victim.headers.authorization}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    // The request is in flight (authenticated, reading its body) when the key is revoked by another process.
    await new Promise((r) => setTimeout(r, 300));
    const run = await codecall({}, 'keys', 'revoke', victim.id, '--db', fx.path);
    expect(run.code).toBe(0);
    const answered = await Promise.race([client.until('KEY_REVOKED'), after(10_000, 'no answer')]);
    expect(answered).toContain('HTTP/1.1 401');
    expect(answered).toContain('KEY_REVOKED');
    // The rest of the body changes nothing: no task was made.
    client.socket.write(body.slice(5));
    await Promise.race([client.closed, after(5_000, '')]);
    const list = await fx.store.listTasks({ tenant: 't-rev-flight', limit: 10 });
    expect(list.tasks).toHaveLength(0);
    client.socket.destroy();
  }, 120_000);

  it('cuts off an answer under way to a slow reader once its key is revoked elsewhere', async () => {
    const victim = await fx.key('t-rev-download');
    const taskId = await submit(victim, `return 1; // ${'x'.repeat(12_000_000)}`);
    // A view of 12 MB (its code), read by a client that stopped reading.
    const client = await rawClient(base);
    client.socket.write(
      `GET /api/v1/tasks/${taskId} HTTP/1.1\r\nhost: x\r\nauthorization: ${victim.headers.authorization}\r\n\r\n`,
    );
    await client.until('HTTP/1.1 200');
    client.socket.pause();
    await new Promise((r) => setTimeout(r, 300));
    const run = await codecall({}, 'keys', 'revoke', victim.id, '--db', fx.path);
    expect(run.code).toBe(0);
    const revokedAt = Date.now();
    // The client reads again only once the revocation is in the database (a new request is refused) and the server
    // has had its tick (500 ms) and cut-off (250 ms): resumed earlier, a client drains 12 MB of loopback buffers
    // faster than any cut-off.
    for (let i = 0; i < 100; i++) {
      const seen = await fetch(`${base}/api/v1/tasks/${taskId}`, { headers: victim.headers });
      await seen.body?.cancel();
      if (seen.status === 401) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 1000));
    client.socket.resume();
    expect(await Promise.race([client.closed.then(() => 'closed'), after(5_000, 'open')])).toBe('closed');
    expect(Date.now() - revokedAt).toBeLessThan(8_000);
    // What was sent before the revocation is all it got: not the whole answer.
    expect(client.text().length).toBeLessThan(12_000_000);
  }, 120_000);
});
